/*
 * tests/unit/test-sidecar-learn.c: run --learn's side (sidecar/learn.h)
 * passes on from the engine's block only comments, section headers and
 * allow_hosts items that read back as one rule for one host: a list, a
 * wildcard, a deny rule, a listener or a comment's --allow flag of one
 * the engine might have written is left out of FILE and of the --allow
 * flags, and said so.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf/config.h"
#include "conf/rule.h"
#include "sidecar/learn.h"
#include "tests/unit/tap.h"

static const char block[] =
	"# learned by postern: 5 requests of session default the allowlist refused or would refuse\n"
	"[defaults]\n"
	"# 1 request, first GET /x,*.attacker.test:1-65535\n"
	"allow_hosts = other.test/x,*.attacker.test:1-65535 private\n"
	"allow_hosts = *.attacker.test:22\n"
	"allow_hosts = other.test/ok private\n"
	"allow_hosts = 169.254.0.0/16 private\n"
	"deny_hosts = other.test\n"
	"listen = tcp:0.0.0.0:1\n"
	"# as flags: --allow 'other.test/ok private'\n"
	"#   --allow 'other.test/ok private' --allow '*.attacker.test:*'\n";

static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* Lines of TEXT that are not comments and name attacker.test or 169.254. */
static int
foreign_lines(const char *text)
{
	const char *p = text, *nl;
	int n = 0;

	while (p != NULL && *p) {
		size_t len;
		nl = strchr(p, '\n');
		len = nl ? (size_t)(nl - p) : strlen(p);
		if (p[0] != '#' && (memmem(p, len, "attacker", 8) != NULL || memmem(p, len, "169.254", 7) != NULL))
			n++;
		p = nl ? nl + 1 : NULL;
	}
	return n;
}

int
main(void)
{
	char dir[] = "/tmp/test-sidecar-learn.XXXXXX", file[128], errf[128];
	struct cf_diag diag;
	struct cf_config *c;
	const struct cf_session *s;
	struct cf_host evil;
	const char *why;
	char *text, *err;
	int fd, saved, efd, rc;
	size_t i, hits = 0;

	if (!tap_ok(mkdtemp(dir) != NULL, "a directory"))
		return tap_done();
	setenv("XDG_RUNTIME_DIR", dir, 1);
	snprintf(file, sizeof(file), "%s/learned.ini", dir);
	snprintf(errf, sizeof(errf), "%s/err", dir);
	fd = sc_learn_open();
	tap_ok(fd >= 0 && write(fd, block, sizeof(block) - 1) == (ssize_t)(sizeof(block) - 1),
	    "the engine's block in a memory file");

	/* --learn=FILE */
	saved = dup(2);
	efd = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	dup2(efd, 2);
	rc = sc_learn_finish(fd, file, NULL);
	fflush(stderr);
	dup2(saved, 2);
	close(efd);
	tap_ok(rc == 0, "FILE written");
	text = slurp(file);
	err = slurp(errf);
	tap_diag("%s", text ? text : "(none)");
	tap_ok(text != NULL && foreign_lines(text) == 0, "FILE names no other host outside comments");
	tap_ok(text != NULL && strstr(text, "\nallow_hosts = other.test/ok private\n") != NULL,
	    "the item that reads back is kept");
	tap_ok(text != NULL && strstr(text, "\ndeny_hosts") == NULL && strstr(text, "0.0.0.0") == NULL,
	    "a line that is no item is left out");
	tap_ok(text != NULL && strstr(text, "--allow '*.attacker") == NULL,
	    "a comment with a flag that is not one rule is left out");
	tap_ok(text != NULL && strstr(text, "# 6 lines left out: not one rule for one host\n") != NULL,
	    "FILE says how many lines were left out");
	tap_ok(err != NULL && strstr(err, "6 learned lines left out") != NULL, "and so does stderr");
	memset(&diag, 0, sizeof(diag));
	c = text != NULL ? cf_config_parse("learned.ini", text, strlen(text), NULL, &diag) : NULL;
	tap_ok(c != NULL, "FILE parses (%s)", diag.nerrors ? diag.errors[0] : "ok");
	s = c != NULL ? cf_config_find_session(c, "default") : NULL;
	cf_host_parse("foo.attacker.test", 17, 0, &evil, &why);
	for (i = 0; s != NULL && i < s->nallow; i++)
		hits += cf_rule_match_host(s->allow[i], &evil);
	tap_ok(s != NULL && hits == 0 && s->ndeny == 0, "no rule of FILE is for foo.attacker.test");
	cf_config_free(c);
	cf_diag_free(&diag);
	free(text);
	free(err);

	/* On stderr, with the flags. */
	saved = dup(2);
	efd = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	dup2(efd, 2);
	rc = sc_learn_finish(fd, NULL, "/etc/postern.ini");
	fflush(stderr);
	dup2(saved, 2);
	close(efd);
	err = slurp(errf);
	tap_diag("%s", err ? err : "(none)");
	tap_ok(rc == 0 && err != NULL && foreign_lines(err) == 0, "stderr names no other host outside comments");
	tap_ok(err != NULL && strstr(err, "postern: or, as flags: --allow 'other.test/ok private'\n") != NULL,
	    "the flags are the item that reads back, alone");
	free(err);

	close(fd);
	unlink(file);
	unlink(errf);
	rmdir(dir);
	return tap_done();
}
