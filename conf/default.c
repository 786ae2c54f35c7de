/*
 * conf/default.c: the built-in default config, used when no -c is given.
 *
 * It allows the common model APIs over HTTPS, the hosts the flagship
 * clients cannot start or log in without, and nothing else; it
 * listens on one UNIX socket under $XDG_RUNTIME_DIR (a person's session) or
 * /run/postern (a service).  postern.ini(5), BUILT-IN DEFAULT, gives each
 * host's reason.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"

static const char default_fmt[] =
	"; postern built-in default: the common model APIs and what Claude Code\n"
	"; and Codex need to start and sign in, on 443; nothing else.\n"
	"[proxy]\n"
	"listen = unix:%s/postern/proxy.sock\n"
	"\n"
	"[defaults]\n"
	"allow_hosts = api.anthropic.com          ; Anthropic\n"
	"allow_hosts = api.openai.com             ; OpenAI\n"
	"allow_hosts = generativelanguage.googleapis.com ; Google Gemini\n"
	"allow_hosts = openrouter.ai              ; OpenRouter\n"
	"allow_hosts = api.mistral.ai             ; Mistral\n"
	"allow_hosts = api.deepseek.com           ; DeepSeek\n"
	"allow_hosts = platform.claude.com        ; Claude Code: start-up check, sign-in\n"
	"allow_hosts = auth.openai.com            ; Codex: sign-in\n"
	"allow_hosts = chatgpt.com                ; Codex signed in with ChatGPT: its API\n";

const char *
cf_default_text(void)
{
	static char text[sizeof(default_fmt) + 128];
	const char *dir = getenv("XDG_RUNTIME_DIR");

	/* Only an absolute, short, plain directory is used; anything else
	 * falls back to /run. */
	if (dir == NULL || dir[0] != '/' || strlen(dir) > 64 || strpbrk(dir, "\n\r;") != NULL)
		dir = "/run";
	snprintf(text, sizeof(text), default_fmt, dir);
	return text;
}
