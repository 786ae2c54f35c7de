/*
 * proxy/check.c: --check, a config judged and summarised without serving it.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "conf/awskey.h"
#include "conf/config.h"
#include "conf/grantfile.h"
#include "conf/parent.h"
#include "proxy/check.h"

static void
print_rules(const char *what, const struct cf_rule *const *v, size_t n)
{
	size_t i;
	char b[128];

	for (i = 0; i < n; i++) {
		printf("    %s %-40s %s:%d%s\n", what, v[i]->text, v[i]->file, v[i]->line,
		    strcmp(v[i]->section, "defaults") == 0 ? "  [defaults]" : "");
		/* Budgets are counted per session: say so beside the rule. */
		if (cf_rule_has_budget(v[i]))
			printf("          budget: %s (per session)\n", cf_rule_budget_text(v[i], b, sizeof(b)));
	}
}

/* S's parent proxy: where, what it is asked for, whether with a
 * credential (never its value), and what goes direct. */
static void
print_parent(const struct cf_session *s)
{
	const struct cf_parent *p = s->parent;
	char h[CF_HOST_TEXT_MAX];
	size_t i;

	if (p == NULL)
		return;
	printf("  upstream_proxy %s, asked for %s, %s\n", p->text,
	    p->names ? "names (upstream_proxy_names)" : "vetted addresses",
	    p->auth != NULL ? "with a credential" : "without a credential");
	for (i = 0; i < p->ndirect; i++) {
		cf_host_format(&p->direct[i], h, sizeof(h));
		printf("  upstream_proxy_direct %s%s\n", h[0] == '.' ? "*" : "", h);
	}
}

/* Each HOST:PORT session S terminates TLS for, and why: the secrets
 * bound to it, or the allow rule that inspects it. */
static void
print_terminated(const struct cf_session *s)
{
	size_t i, j, k, l;

	for (i = 0; i < cf_session_nsecrets(s); i++) {
		const struct cf_secret *sec = cf_session_secret(s, i);
		for (j = 0; j < cf_secret_ninject(sec); j++) {
			const struct cf_inject *inj = cf_secret_inject(sec, j);
			int seen = 0;
			/* Once per HOST:PORT, naming every secret bound there. */
			for (k = 0; k <= i && !seen; k++)
				for (l = 0; l < (k == i ? j : cf_secret_ninject(cf_session_secret(s, k))); l++) {
					const struct cf_inject *o = cf_secret_inject(cf_session_secret(s, k), l);
					if (o->port == inj->port && strcmp(o->host, inj->host) == 0)
						seen = 1;
				}
			if (seen)
				continue;
			printf("  terminates TLS %s:%u (secret %s", inj->host, inj->port, cf_secret_name(sec));
			for (k = i + 1; k < cf_session_nsecrets(s); k++)
				for (l = 0; l < cf_secret_ninject(cf_session_secret(s, k)); l++) {
					const struct cf_inject *o = cf_secret_inject(cf_session_secret(s, k), l);
					if (o->port == inj->port && strcmp(o->host, inj->host) == 0) {
						printf(", secret %s", cf_secret_name(cf_session_secret(s, k)));
						break;
					}
				}
			printf(")\n");
		}
	}
	for (i = 0; cf_session_served(s) && i < s->nallow; i++) {
		const struct cf_rule *r = s->allow[i];
		uint16_t port = r->port_given ? r->port_lo : 443;
		if (!r->inspect || cf_session_inspects(s, r->name, port) != r)
			continue;
		printf("  terminates TLS %s:%u (inspect, %s:%d)\n", r->name, port, r->file, r->line);
	}
}

static void
show_setting(const char *key, const char *value, void *arg)
{
	(void)arg;
	printf("  %-18s %s\n", key, value);
}

int
px_check(const char *path, const struct cf_overrides *ov, const char *prog,
    const char *listen_note)
{
	struct cf_diag diag;
	struct cf_config *c;
	size_t i, j;

	memset(&diag, 0, sizeof(diag));
	c = cf_config_load(path, ov, &diag);
	if (c == NULL) {
		for (i = 0; i < diag.nerrors; i++)
			fprintf(stderr, "%s\n", diag.errors[i]);
		fprintf(stderr, "%s: %s: %zu error%s, config refused\n", prog,
		    path ? path : "<built-in>", diag.nerrors, diag.nerrors == 1 ? "" : "s");
		cf_diag_free(&diag);
		return 2;
	}
	/* grants_file is checked as the proxy reads it at start. */
	if (cf_config_proxy(c)->grants_file != NULL) {
		struct cf_grant_entry *gv = NULL;
		struct cf_diag gd;
		size_t gn = 0;
		int grc;

		memset(&gd, 0, sizeof(gd));
		grc = cf_grants_load(cf_config_proxy(c)->grants_file, c, &gd, &gv, &gn);
		free(gv);
		if (grc != 0) {
			for (i = 0; i < gd.nerrors; i++)
				fprintf(stderr, "%s\n", gd.errors[i]);
			fprintf(stderr, "%s: grants_file %s refused: %s\n", prog,
			    cf_config_proxy(c)->grants_file, strerror(-grc));
			cf_diag_free(&gd);
			cf_diag_free(&diag);
			cf_config_free(c);
			return 2;
		}
		cf_diag_free(&gd);
	}
	printf("%s: ok (sha256 %s)\n", cf_config_path(c), cf_config_hash(c));
	printf("proxy\n");
	cf_config_show_proxy(c, show_setting, NULL);
	for (i = 0; i < cf_config_nsessions(c); i++) {
		const struct cf_session *s = cf_config_session(c, i);
		printf("session %s\n", s->name);
		if (s->nlisten == 0 && s->has_token)
			printf("  (no listener of its own: a request with its token, on an auth=token "
			    "listener)\n");
		else if (s->nlisten == 0)
			printf("  (no listener)\n");
		else if (listen_note != NULL)
			printf("  listen %s\n", listen_note);
		for (j = 0; listen_note == NULL && j < s->nlisten; j++)
			printf("  listen %s\n", s->listen[j].text);
		printf("  max_connections %u, %u per peer uid\n", s->max_connections,
		    s->max_connections_per_uid);
		if (s->ask)
			printf("  mode ask: what the allowlist refuses is HELD until an admin answers "
			    "(postern-proxy ctl pending, allow ID, deny ID) or ask_timeout passes\n");
		if (s->report)
			printf("  mode report: NOT ENFORCING the allowlist (deny rules, private ranges, "
			    "SNI and secrets still are)\n");
		print_parent(s);
		if (s->nallow == 0)
			printf("  allows nothing\n");
		print_rules("allow", s->allow, s->nallow);
		print_rules("deny ", s->deny, s->ndeny);
		/* Names and variables only: a value is never printed. */
		for (j = 0; j < cf_session_nsecrets(s); j++)
			printf("  secret %s (placeholder in $%s)\n", cf_secret_name(cf_session_secret(s, j)),
			    cf_secret_placeholder_env(cf_session_secret(s, j)));
		print_terminated(s);
	}
	for (i = 0; i < cf_config_nsecrets(c); i++) {
		const struct cf_secret *sec = cf_config_secret(c, i);
		printf("secret %s%s: from %s, placeholder in $%s\n", cf_secret_name(sec),
		    cf_secret_builtin(sec) ? " (built-in)" : "", cf_secret_source(sec),
		    cf_secret_placeholder_env(sec));
		for (j = 0; j < cf_secret_ninject(sec); j++) {
			const struct cf_inject *inj = cf_secret_inject(sec, j);
			if (inj->file != NULL)
				printf("  inject %-40s %s:%d\n", inj->text, inj->file, inj->line);
			else
				printf("  inject %s\n", inj->text);
		}
		if (cf_secret_inject_always(sec))
			printf("  inject_when = always (on every request, placeholder or not)\n");
		if (cf_secret_aws(sec) != NULL)
			printf("  kind aws-sigv4: terminates TLS and re-signs requests to %s (hosts =)\n",
			    cf_aws_hosts_text(cf_secret_aws(sec)));
	}
	for (i = 0; cf_config_pin_at(c, i) != NULL; i++) {
		const struct cf_pin *pin = cf_config_pin_at(c, i);
		char a[INET6_ADDRSTRLEN];
		if (i == 0)
			printf("hosts (pinned, no DNS; vetted like an answer)\n");
		printf("  %s =", pin->name);
		for (j = 0; j < pin->naddrs; j++) {
			const struct sockaddr_storage *ss = &pin->addrs[j];
			if (ss->ss_family == AF_INET)
				inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, a, sizeof(a));
			else
				inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, a, sizeof(a));
			printf("%s %s", j ? "," : "", a);
		}
		printf("  %s:%d\n", pin->file, pin->line);
	}
	if (diag.nwarnings > 0) {
		printf("warnings:\n");
		for (i = 0; i < diag.nwarnings; i++)
			printf("  %s\n", diag.warnings[i]);
	}
	cf_diag_free(&diag);
	cf_config_free(c);
	return 0;
}

