/*
 * tests/unit/test-config.c: every class of config error gives its
 * FILE:LINE message, all errors of a file are reported, and a valid file
 * builds the snapshot it describes.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "conf/config.h"
#include "tests/unit/tap.h"
#include "tests/unit/conferr.h"

#define HEAD "[proxy]\nlisten = tcp:127.0.0.1:3128\n"

static const struct err_case err_cases[] = {
	{ "unknown section", HEAD "[proxi]\nx = 1\n", "t.ini:3: unknown section [proxi]" },
	{ "a checkpoint under a second", HEAD "audit_checkpoint = 500ms\n",
	    "t.ini:3: audit_checkpoint must be 1s or more (500ms)" },
	{ "unknown key in proxy", HEAD "lisen = unix:/x\n", "t.ini:3: unknown key in [proxy] (lisen)" },
	{ "unknown key in defaults", HEAD "[defaults]\nallow_host = a.test\n",
	    "t.ini:4: unknown key in [defaults] (allow_host)" },
	{ "duplicate session", HEAD "[session a]\nlisten = unix:/a\n[session a]\nlisten = unix:/b\n",
	    "t.ini:5: duplicate session a (first on line 3)" },
	{ "session without listener", HEAD "[session a]\nallow_hosts = x.test\n",
	    "t.ini:3: session a has no listen address" },
	{ "two sessions, one listener",
	    HEAD "[session a]\nlisten = unix:/run/p.sock\n[session b]\nlisten = unix:/run/p.sock\n",
	    "t.ini:6: unix:/run/p.sock is already the listener of a (line 4)" },
	{ "session on the proxy listener", HEAD "[session a]\nlisten = tcp:127.0.0.1:3128\n",
	    "t.ini:4: tcp:127.0.0.1:3128 is already the listener of default (line 2)" },
	{ "malformed pattern", HEAD "[defaults]\nallow_hosts = a.test, b..test, c.test\n",
	    "t.ini:4: empty label in host name (b..test)" },
	{ "bare star", HEAD "[defaults]\nallow_hosts = *\n", "t.ini:4: a bare * would allow everything (*)" },
	{ "star over a TLD", HEAD "[defaults]\nallow_hosts = *.com\n",
	    "t.ini:4: wildcard directly over a top-level label (*.com)" },
	{ "inner wildcard", HEAD "[defaults]\nallow_hosts = foo.*.test\n",
	    "t.ini:4: wildcards only as a whole leading label" },
	{ "bad duration unit", HEAD "connect_timeout = 10\n", "t.ini:3: connect_timeout: a duration needs a unit" },
	{ "bad duration", HEAD "idle_timeout = 10y\n", "t.ini:3: idle_timeout: unknown duration unit" },
	{ "zero duration", HEAD "header_timeout = 0s\n", "t.ini:3: header_timeout: duration must be above zero" },
	{ "unknown flag", HEAD "[defaults]\nallow_hosts = a.test privat\n", "t.ini:4: unknown flag" },
	{ "key outside section", "listen = unix:/x\n" HEAD, "t.ini:1: key outside any section (listen)" },
	{ "not key=value", HEAD "allow everything\n", "t.ini:3: not a \"key = value\" line (allow everything)" },
	{ "duplicate key", HEAD "sni = match\nsni = off\n", "t.ini:4: sni is given twice (first on line 3)" },
	{ "bad sni", HEAD "sni = maybe\n", "t.ini:3: sni is match, strict or off (maybe)" },
	{ "bad user", HEAD "user = nobody\n", "t.ini:3: user must be a numeric uid" },
	{ "bad listener", HEAD "listen = tcp:localhost:3128\n", "t.ini:3: a TCP listener needs a numeric address" },
	{ "relative unix path", HEAD "listen = unix:run/p.sock\n", "t.ini:3: a UNIX socket path must be absolute" },
	{ "empty list item", HEAD "[defaults]\nallow_hosts = a.test,,b.test\n", "t.ini:4: empty item in list" },
	{ "rules in proxy", HEAD "allow_hosts = a.test\n", "t.ini:3: allow_hosts belongs in [defaults]" },
	{ "listen in defaults", HEAD "[defaults]\nlisten = unix:/x\n", "t.ini:4: listen belongs in [proxy]" },
	{ "max_header_bytes", HEAD "max_header_bytes = 10\n", "t.ini:3: max_header_bytes must be 1k-1m" },
	{ "revoke", HEAD "revoke = maybe\n", "t.ini:3: revoke is yes or no" },
	{ "no listener", "[defaults]\nallow_hosts = a.test\n", "t.ini: no listener" },
	{ "session share over the proxy's", HEAD "max_connections = 8\n[session a]\nlisten = unix:/a\n"
	    "max_connections = 9\n",
	    "t.ini:6: max_connections 9 is more than [proxy] max_connections 8" },
	{ "defaults share over the proxy's", HEAD "max_connections = 8\n[defaults]\nmax_connections = 9\n",
	    "t.ini:5: max_connections 9 is more than [proxy] max_connections 8" },
	{ "uid share over the session's", HEAD "[defaults]\nmax_connections = 4\nmax_connections_per_uid = 5\n",
	    "t.ini:5: max_connections_per_uid 5 is more than the max_connections 4 of session default" },
	{ "inherited uid share over a session's", HEAD "[defaults]\nmax_connections_per_uid = 5\n"
	    "[session a]\nlisten = unix:/a\nmax_connections = 4\n",
	    "t.ini:4: max_connections_per_uid 5 is more than the max_connections 4 of session a" },
	{ "zero share", HEAD "[defaults]\nmax_connections = 0\n", "t.ini:4: max_connections must be 1-1000000 (0)" },
	{ "uid share in proxy", HEAD "max_connections_per_uid = 2\n",
	    "t.ini:3: max_connections_per_uid belongs in [defaults] or a [session NAME]" },
	{ "duplicate share", HEAD "[defaults]\nmax_connections = 2\nmax_connections = 3\n",
	    "t.ini:5: max_connections is given twice (first on line 4)" },
	{ "bad session name", HEAD "[session a/b]\nlisten = unix:/x\n", "t.ini:3: bad session name" },
	{ "section without ]", HEAD "[session a\n", "t.ini:3: section header without ]" },
	{ "bad dns server", HEAD "dns_servers = dns.example\n", "t.ini:3: dns_servers is a list of IP addresses" },
	{ "deny with path", HEAD "[defaults]\ndeny_hosts = a.test/x/\n", "t.ini:4: a path prefix narrows an allow rule" },
	{ "control byte in a key is shown escaped", HEAD "\001bad = 1\n", "t.ini:3: unknown key in [proxy] (\\x01bad)" },
	{ "hash comment inline", HEAD "[defaults]\nallow_hosts = a.test # comment\n", "t.ini:4: unknown flag" },
	/* A UNIX listener's owner=, group= and mode=. */
	{ "mode not octal", HEAD "listen = unix:/r/a.sock mode=0999\n",
	    "t.ini:3: mode= takes three or four octal digits, like 0660 (unix:/r/a.sock mode=0999)" },
	{ "mode with the sticky bit", HEAD "listen = unix:/r/a.sock mode=01777\n",
	    "t.ini:3: mode= takes permission bits only, at most 0777" },
	{ "mode with setuid", HEAD "listen = unix:/r/a.sock mode=4660\n",
	    "t.ini:3: mode= takes permission bits only" },
	{ "mode with a sign", HEAD "listen = unix:/r/a.sock mode=+660\n",
	    "t.ini:3: mode= takes three or four octal digits" },
	{ "mode negative", HEAD "listen = unix:/r/a.sock mode=-1\n", "t.ini:3: mode= takes three or four" },
	{ "mode empty", HEAD "listen = unix:/r/a.sock mode=\n", "t.ini:3: mode= takes three or four" },
	{ "mode too short", HEAD "listen = unix:/r/a.sock mode=66\n", "t.ini:3: mode= takes three or four" },
	{ "mode five digits", HEAD "listen = unix:/r/a.sock mode=00660\n", "t.ini:3: mode= takes three or four" },
	{ "mode in hex", HEAD "listen = unix:/r/a.sock mode=0x1b0\n", "t.ini:3: mode= takes three or four" },
	{ "mode overflow", HEAD "listen = unix:/r/a.sock mode=77777777777777777777\n",
	    "t.ini:3: mode= takes permission bits only" },
	{ "owner name", HEAD "listen = unix:/r/a.sock owner=root\n", "t.ini:3: owner= takes a numeric uid" },
	{ "owner negative", HEAD "listen = unix:/r/a.sock owner=-1\n", "t.ini:3: owner= takes a numeric uid" },
	{ "owner with a sign", HEAD "listen = unix:/r/a.sock owner=+1000\n", "t.ini:3: owner= takes a numeric uid" },
	{ "owner leading zero", HEAD "listen = unix:/r/a.sock owner=01000\n", "t.ini:3: owner= takes a numeric uid" },
	{ "owner too large", HEAD "listen = unix:/r/a.sock owner=4294967295\n", "t.ini:3: owner= takes a numeric uid" },
	{ "owner empty", HEAD "listen = unix:/r/a.sock owner=\n", "t.ini:3: owner= takes a numeric uid" },
	{ "group name", HEAD "listen = unix:/r/a.sock group=wheel\n", "t.ini:3: group= takes a numeric gid" },
	{ "owner twice", HEAD "listen = unix:/r/a.sock owner=1 owner=2\n", "t.ini:3: owner= is given twice" },
	{ "mode twice", HEAD "listen = unix:/r/a.sock mode=0600 mode=0660\n", "t.ini:3: mode= is given twice" },
	{ "unknown listener option", HEAD "listen = unix:/r/a.sock perm=0600\n",
	    "t.ini:3: unknown listener option (a UNIX listener takes owner=UID, group=GID, mode=OCTAL)" },
	{ "a bare word after the path", HEAD "listen = unix:/r/a.sock 0600\n", "t.ini:3: unknown listener option" },
	{ "option case", HEAD "listen = unix:/r/a.sock Mode=0600\n", "t.ini:3: unknown listener option" },
	{ "options on tcp", HEAD "listen = tcp:127.0.0.1:3129 mode=0600\n",
	    "t.ini:3: owner=, group= and mode= apply to unix: listeners only" },
	{ "options on the admin socket", HEAD "admin = unix:/r/admin.sock mode=0666\n",
	    "t.ini:3: the admin socket takes no owner=, group= or mode=" },
	{ "session listener option", HEAD "[session a]\nlisten = unix:/r/a.sock owner=1000 mode=0o600\n",
	    "t.ini:4: mode= takes three or four octal digits" },
	/* What the tables of keys (conf/keys.c) say, word for word. */
	{ "proxy key in a session", HEAD "[session a]\nlisten = unix:/a\nuser = 1000\n",
	    "t.ini:5: user belongs in [proxy] (session a)" },
	{ "proxy key in defaults", HEAD "[defaults]\nsni = off\n", "t.ini:4: sni belongs in [proxy] (defaults)" },
	{ "did you mean, in proxy", HEAD "revok = yes\n",
	    "t.ini:3: unknown key in [proxy] (revok); did you mean revoke?" },
	{ "did you mean a proxy key, in defaults", HEAD "[defaults]\nidle_timout = 1s\n",
	    "t.ini:4: unknown key in [defaults] (idle_timout); did you mean idle_timeout?" },
	{ "did you mean a session key, in defaults", HEAD "[defaults]\nmax_connection = 5\n",
	    "t.ini:4: unknown key in [defaults] (max_connection); did you mean max_connections?" },
	{ "did you mean, in a session", HEAD "[session a]\nlisten = unix:/a\nmax_connections_per_id = 3\n",
	    "t.ini:5: unknown key in [session a] (max_connections_per_id); did you mean max_connections_per_uid?" },
	{ "admin_group", HEAD "admin_group = staff\n", "t.ini:3: admin_group must be a numeric gid (staff)" },
	{ "log", HEAD "log = rel.log\n", "t.ini:3: log is \"stderr\" or an absolute file path (rel.log)" },
	{ "max_headers bound", HEAD "max_headers = 10001\n", "t.ini:3: max_headers must be 1-10000 (10001)" },
	{ "max_connections bound", HEAD "max_connections = 0\n", "t.ini:3: max_connections must be 1-1000000 (0)" },
	{ "max_header_bytes bound", HEAD "max_header_bytes = 2m\n", "t.ini:3: max_header_bytes must be 1k-1m (2m)" },
	{ "unknown key twice", HEAD "bogus = 1\nbogus = 2\n", "t.ini:4: bogus is given twice (first on line 3)" },
	{ "mode unknown", HEAD "[defaults]\nmode = watch\n", "t.ini:4: mode is enforce, report or ask (watch)" },
	{ "ask_timeout", HEAD "ask_timeout = soon\n", "t.ini:3: ask_timeout: " },
	{ "ask_timeout in a session", HEAD "[defaults]\nask_timeout = 5s\n", "t.ini:4: ask_timeout belongs in" },
	{ "mode in proxy", HEAD "mode = report\n", "t.ini:3: mode belongs in" },
	{ "mode twice", HEAD "[defaults]\nmode = report\nmode = enforce\n",
	    "t.ini:5: mode is given twice (first on line 4)" },
	{ "metrics on a UNIX socket", HEAD "metrics = unix:/r/m.sock\n",
	    "t.ini:3: metrics is tcp:ADDR:PORT with a numeric address and no option" },
	{ "metrics by name", HEAD "metrics = tcp:localhost:9090\n",
	    "t.ini:3: metrics = tcp:localhost:9090: a TCP listener needs a numeric address" },
	{ "metrics without a port", HEAD "metrics = tcp:127.0.0.1\n",
	    "t.ini:3: metrics = tcp:127.0.0.1: a TCP listener needs a port" },
	{ "metrics with auth=token", HEAD "metrics = tcp:127.0.0.1:9090 auth=token\n",
	    "t.ini:3: metrics is tcp:ADDR:PORT with a numeric address and no option" },
	{ "metrics twice", HEAD "metrics = tcp:127.0.0.1:9090\nmetrics = tcp:127.0.0.1:9091\n",
	    "t.ini:4: metrics is given twice (first on line 3)" },
	{ "metrics on a listener's address", HEAD "metrics = tcp:127.0.0.1:3128\n",
	    "t.ini:3: tcp:127.0.0.1:3128 is already the listener of default" },
	{ "metrics is no listener", "[proxy]\nmetrics = tcp:127.0.0.1:9090\n", "no listener: add listen" },
};

static const char valid[] =
	"; a full config\n"
	"[proxy]\n"
	"listen = unix:/run/postern/proxy.sock     ; repeatable\n"
	"listen = tcp:127.0.0.1:3128\n"
	"admin = unix:/run/postern/admin.sock\n"
	"user = 65532\n"
	"log = stderr\n"
	"dns_servers = 10.96.0.10, [fd00::53]:5353\n"
	"sni = strict\n"
	"connect_timeout = 10s\n"
	"idle_timeout = 15m\n"
	"header_timeout = 500ms\n"
	"max_connections = 10000\n"
	"max_headers = 100\n"
	"max_header_bytes = 32k\n"
	"revoke = no\n"
	"\n"
	"[defaults]\n"
	"allow_hosts = api.anthropic.com, api.openai.com\n"
	"deny_hosts = uploads.example.com\n"
	"\n"
	"[session agent-1]\n"
	"listen = unix:/run/postern/agent-1.sock owner=1000 group=0 mode=0600\n"
	"allow_hosts = control.internal:8080 private ; the control host\n"
	"allow_hosts = *.githubusercontent.com\n"
	"  allow_hosts = indented.test\n";

int
main(void)
{
	size_t i;

	expect_refused(err_cases, sizeof(err_cases) / sizeof(err_cases[0]));

	{
		/* A key far from every known one gets no guess; one that may
		 * be repeated (listen, allow_hosts, deny_hosts) is never
		 * "given twice". */
		static const char far[] = HEAD "bogus = 1\n";
		static const char lists[] = HEAD "listen = unix:/r/b.sock\n[defaults]\n"
		    "allow_hosts = a.test\nallow_hosts = b.test\ndeny_hosts = c.test\ndeny_hosts = d.test\n"
		    "[session a]\nlisten = unix:/r/c.sock\nlisten = unix:/r/d.sock\n";
		struct cf_diag d;
		struct cf_config *c;
		memset(&d, 0, sizeof(d));
		c = cf_config_parse("t.ini", far, strlen(far), NULL, &d);
		tap_ok(c == NULL && d.nerrors == 1 &&
		    strcmp(d.errors[0], "t.ini:3: unknown key in [proxy] (bogus)") == 0,
		    "no guess for a far key (%s)", d.nerrors ? d.errors[0] : "no error");
		cf_config_free(c);
		cf_diag_free(&d);
		memset(&d, 0, sizeof(d));
		c = cf_config_parse("t.ini", lists, strlen(lists), NULL, &d);
		tap_ok(c != NULL && cf_config_session(c, 0)->nlisten == 2 &&
		    cf_config_session(c, 0)->nallow == 2 && cf_config_session(c, 0)->ndeny == 2 &&
		    cf_config_session(c, 1)->nlisten == 2,
		    "list keys may be repeated (%s)", d.nerrors ? d.errors[0] : "ok");
		cf_config_free(c);
		cf_diag_free(&d);
	}

	{
		/* All errors are reported, in file order. */
		static const char many[] = HEAD "bogus = 1\nsni = x\n[defaults]\nallow_hosts = *\n"
		    "[nope]\n[session s]\n";
		struct cf_diag d;
		struct cf_config *c;
		memset(&d, 0, sizeof(d));
		c = cf_config_parse("t.ini", many, strlen(many), NULL, &d);
		tap_ok(c == NULL && d.nerrors == 5, "every error of a file is reported (%zu)", d.nerrors);
		tap_ok(has_error(&d, "t.ini:3:") && has_error(&d, "t.ini:4:") && has_error(&d, "t.ini:6:") &&
		    has_error(&d, "t.ini:7:") && has_error(&d, "t.ini:8:"), "with each line number");
		cf_diag_free(&d);
	}
	{
		/* A line longer than inih's buffer is refused, never split. */
		char *t = malloc(1024);
		struct cf_diag d;
		struct cf_config *c;
		memset(&d, 0, sizeof(d));
		strcpy(t, HEAD "[defaults]\nallow_hosts = a.test");
		for (i = 0; i < 40; i++)
			strcat(t, ", bb.test");
		strcat(t, ",x*\n");
		c = cf_config_parse("t.ini", t, strlen(t), NULL, &d);
		tap_ok(c == NULL && has_error(&d, "t.ini:4: line longer than"), "over-long line refused (%s)",
		    d.nerrors ? d.errors[0] : "none");
		tap_cmp_int(d.nerrors, "==", 1, "and its tail is not parsed as a line of its own");
		cf_diag_free(&d);
		free(t);
	}

	{
		struct cf_diag d;
		struct cf_config *c;
		const struct cf_session *s;
		const struct cf_proxy_settings *p;

		memset(&d, 0, sizeof(d));
		c = cf_config_parse("full.ini", valid, strlen(valid), NULL, &d);
		tap_ok(c != NULL, "the full example config is valid (%s)", d.nerrors ? d.errors[0] : "ok");
		if (c != NULL) {
			p = cf_config_proxy(c);
			tap_cmp_int(cf_config_nsessions(c), "==", 2, "two sessions: default and agent-1");
			s = cf_config_find_session(c, "agent-1");
			tap_ok(s != NULL && s->nlisten == 1 && s->nallow == 5 && s->ndeny == 1,
			    "agent-1 layers its 3 rules on [defaults] (%zu allow, %zu deny)",
			    s ? s->nallow : 0, s ? s->ndeny : 0);
			tap_ok(s != NULL && s->allow[2]->private_ok && s->allow[2]->line == 24,
			    "control.internal rule has private and its line");
			tap_ok(s != NULL && strcmp(s->listen[0].path, "/run/postern/agent-1.sock") == 0 &&
			    s->listen[0].has_owner && s->listen[0].owner == 1000 && s->listen[0].has_group &&
			    s->listen[0].group == 0 && s->listen[0].has_mode && s->listen[0].mode == 0600,
			    "agent-1's socket: owner 1000, group 0, mode 0600");
			s = cf_config_find_session(c, "default");
			tap_ok(s->nlisten == 2 && s->nallow == 2, "default session: 2 listeners, 2 rules");
			tap_ok(!s->listen[0].has_owner && !s->listen[0].has_group && !s->listen[0].has_mode &&
			    s->listen[0].mode == 0660, "a UNIX listener without options: mode 0660, the binder's ids");
			tap_ok(p->has_user && p->user == 65532 && p->sni == CF_SNI_STRICT &&
			    p->header_timeout_ms == 500 && p->idle_timeout_ms == 900000 &&
			    p->max_header_bytes == 32768 && p->admin.kind == CF_LISTEN_UNIX &&
			    strcmp(p->dns_servers, "10.96.0.10,[fd00::53]:5353") == 0,
			    "[proxy] values parsed");
			tap_cmp_int(strlen(cf_config_hash(c)), "==", 12, "config hash %s", cf_config_hash(c));
			tap_ok(s->max_connections == 2500 && s->max_connections_per_uid == 1250,
			    "default shares: a quarter of max_connections, half of that per uid (%u, %u)",
			    s->max_connections, s->max_connections_per_uid);
		}
		cf_config_free(c);
		cf_diag_free(&d);
	}
	{
		/* Shares: a session's own, else [defaults]', else the default. */
		static const char t[] = "[proxy]\nlisten = tcp:127.0.0.1:3128\nmax_connections = 10\n"
		    "[defaults]\nmax_connections_per_uid = 1\n"
		    "[session a]\nlisten = unix:/a\nmax_connections = 10\nmax_connections_per_uid = 10\n"
		    "[session b]\nlisten = unix:/b\n";
		struct cf_diag d;
		struct cf_config *c;
		const struct cf_session *a, *b, *s0;
		memset(&d, 0, sizeof(d));
		c = cf_config_parse("t.ini", t, strlen(t), NULL, &d);
		tap_ok(c != NULL, "shares parse (%s)", d.nerrors ? d.errors[0] : "ok");
		if (c != NULL) {
			s0 = cf_config_find_session(c, "default");
			a = cf_config_find_session(c, "a");
			b = cf_config_find_session(c, "b");
			tap_ok(s0->max_connections == 2 && s0->max_connections_per_uid == 1,
			    "default session: a quarter of 10, [defaults]' per uid (%u, %u)",
			    s0->max_connections, s0->max_connections_per_uid);
			tap_ok(a->max_connections == 10 && a->max_connections_per_uid == 10,
			    "a session may be given all of max_connections (%u, %u)",
			    a->max_connections, a->max_connections_per_uid);
			tap_ok(b->max_connections == 2 && b->max_connections_per_uid == 1,
			    "b inherits (%u, %u)", b->max_connections, b->max_connections_per_uid);
		}
		cf_config_free(c);
		cf_diag_free(&d);
	}
	{
		/* mode: a session's own, else [defaults]', else enforce; a
		 * session in report mode is a warning naming it and its line. */
		static const struct {
			const char *text;
			int report[3]; /* default, a, b */
			const char *warn;
		} modes[] = {
			{ HEAD "[session a]\nlisten = unix:/a\n[session b]\nlisten = unix:/b\n", { 0, 0, 0 }, NULL },
			{ HEAD "[defaults]\nmode = report\n[session a]\nlisten = unix:/a\n"
			    "[session b]\nlisten = unix:/b\nmode = enforce\n", { 1, 1, 0 },
			  "t.ini:4: session a is in mode = report: NOT ENFORCING" },
			{ HEAD "[session a]\nlisten = unix:/a\n[session b]\nlisten = unix:/b\nmode = report\n",
			  { 0, 0, 1 }, "t.ini:7: session b is in mode = report: NOT ENFORCING" },
			{ HEAD "[defaults]\nmode = enforce\n[session a]\nlisten = unix:/a\nmode = report\n"
			    "[session b]\nlisten = unix:/b\n", { 0, 1, 0 },
			  "t.ini:7: session a is in mode = report" },
		};
		size_t m, k;

		for (m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
			struct cf_diag d;
			struct cf_config *c;
			int ok = 1, warned = 0, nreport = 0;

			memset(&d, 0, sizeof(d));
			c = cf_config_parse("t.ini", modes[m].text, strlen(modes[m].text), NULL, &d);
			for (k = 0; c != NULL && k < 3; k++) {
				ok &= cf_config_session(c, k)->report == modes[m].report[k];
				nreport += modes[m].report[k];
			}
			for (k = 0; k < d.nwarnings; k++)
				if (strstr(d.warnings[k], "NOT ENFORCING") != NULL)
					warned++;
			tap_ok(c != NULL && ok, "mode case %zu: the modes in force (%s)", m,
			    d.nerrors ? d.errors[0] : "ok");
			tap_ok(warned == nreport && (modes[m].warn == NULL || (d.nwarnings > 0 &&
			    strstr(d.warnings[0], modes[m].warn) != NULL) || (d.nwarnings > 1 &&
			    strstr(d.warnings[1], modes[m].warn) != NULL)),
			    "mode case %zu: one warning per session not enforcing (%d: %s)", m, warned,
			    d.nwarnings ? d.warnings[0] : "none");
			cf_config_free(c);
			cf_diag_free(&d);
		}
		{
			/* run --report: every session, whatever the file says. */
			static const char t[] = HEAD "[session a]\nlisten = unix:/a\nmode = enforce\n";
			struct cf_overrides ov;
			struct cf_diag d;
			struct cf_config *c;

			memset(&ov, 0, sizeof(ov));
			ov.report = 1;
			memset(&d, 0, sizeof(d));
			c = cf_config_parse("t.ini", t, strlen(t), &ov, &d);
			tap_ok(c != NULL && cf_config_session(c, 0)->report && cf_config_session(c, 1)->report &&
			    d.nwarnings == 2 && strstr(d.warnings[1], "session a is in report mode (--report)") != NULL,
			    "the report override puts every session in report mode, and says so (%s)",
			    d.nwarnings > 1 ? d.warnings[1] : "no warning");
			cf_config_free(c);
			cf_diag_free(&d);
		}
		{
			/* mode = ask: held, said loudly with its line, never in
			 * report mode too; ask_timeout is 60 s unless given. */
			static const char t[] = HEAD "ask_timeout = 2s\n[session a]\nlisten = unix:/a\nmode = ask\n";
			static const char t0[] = HEAD "[defaults]\nmode = ask\n";
			struct cf_overrides ov;
			struct cf_diag d;
			struct cf_config *c;

			memset(&d, 0, sizeof(d));
			c = cf_config_parse("t.ini", t, strlen(t), NULL, &d);
			tap_ok(c != NULL && !cf_config_session(c, 0)->ask && cf_config_session(c, 1)->ask &&
			    !cf_config_session(c, 1)->report && cf_config_proxy(c)->ask_timeout_ms == 2000 &&
			    d.nwarnings == 1 && strstr(d.warnings[0], "t.ini:6: session a is in mode = ask: "
			    "what its allowlist refuses is HELD") != NULL,
			    "mode = ask holds session a, warns with its line, ask_timeout 2s (%s)",
			    d.nerrors ? d.errors[0] : d.nwarnings ? d.warnings[0] : "no warning");
			cf_config_free(c);
			cf_diag_free(&d);
			memset(&d, 0, sizeof(d));
			c = cf_config_parse("t.ini", t0, strlen(t0), NULL, &d);
			tap_ok(c != NULL && cf_config_session(c, 0)->ask &&
			    cf_config_proxy(c)->ask_timeout_ms == 60000 && d.nwarnings >= 1 &&
			    strstr(d.warnings[0], "no admin = unix:PATH in [proxy], so nobody can answer") != NULL,
			    "[defaults] mode = ask puts the default session in ask mode, ask_timeout 60s, and "
			    "says nobody can answer without an admin socket");
			cf_config_free(c);
			cf_diag_free(&d);
			/* run --ask: every session, and it wins over --report. */
			memset(&ov, 0, sizeof(ov));
			ov.ask = 1;
			ov.report = 1;
			memset(&d, 0, sizeof(d));
			c = cf_config_parse("t.ini", t, strlen(t), &ov, &d);
			tap_ok(c != NULL && cf_config_session(c, 0)->ask && cf_config_session(c, 1)->ask &&
			    !cf_config_session(c, 0)->report && d.nwarnings == 2 &&
			    strstr(d.warnings[0], "session default is in ask mode (--ask)") != NULL,
			    "the ask override puts every session in ask mode, and says so (%s)",
			    d.nwarnings ? d.warnings[0] : "no warning");
			cf_config_free(c);
			cf_diag_free(&d);
		}
	}
	{
		/* Warnings: a shadowed allow, a duplicate. */
		static const char t[] = HEAD "[defaults]\nallow_hosts = a.x.test, a.x.test\n"
		    "deny_hosts = .x.test\n";
		struct cf_diag d;
		struct cf_config *c;
		memset(&d, 0, sizeof(d));
		c = cf_config_parse("t.ini", t, strlen(t), NULL, &d);
		tap_ok(c != NULL && d.nwarnings >= 2, "shadowed and duplicate rules warn (%zu)", d.nwarnings);
		cf_config_free(c);
		cf_diag_free(&d);
	}
	{
		/* Overrides (postern-sidecar run): extra allows and a private
		 * listener replacing the config's. */
		const char *allow[] = { "extra.test:8443" };
		const char *listen[] = { "unix:/tmp/x/proxy.sock" };
		struct cf_overrides ov;
		struct cf_diag d;
		struct cf_config *c;
		const struct cf_session *s;
		memset(&ov, 0, sizeof(ov));
		memset(&d, 0, sizeof(d));
		ov.extra_allow = allow;
		ov.n_extra_allow = 1;
		ov.extra_listen = listen;
		ov.n_extra_listen = 1;
		ov.replace_listen = 1;
		c = cf_config_load(NULL, &ov, &d);
		tap_ok(c != NULL, "built-in default with overrides loads");
		if (c != NULL) {
			s = cf_config_find_session(c, "default");
			tap_ok(s->nlisten == 1 && strcmp(s->listen[0].path, "/tmp/x/proxy.sock") == 0,
			    "listener replaced");
			tap_ok(strcmp(s->allow[s->nallow - 1]->text, "extra.test:8443") == 0 &&
			    s->nallow >= 5, "--allow layered on the built-in model APIs");
		}
		cf_config_free(c);
		cf_diag_free(&d);
		ov.extra_allow = (const char *[]){ "*" };
		memset(&d, 0, sizeof(d));
		c = cf_config_load(NULL, &ov, &d);
		tap_ok(c == NULL && has_error(&d, "<command line>: a bare * would allow everything"),
		    "a bad --allow is refused like a bad file line");
		cf_diag_free(&d);
	}
	{
		/* Listener options: three digits, any order, tabs; on --listen. */
		static const char t[] = "[proxy]\nlisten = unix:/r/a.sock\tmode=660  owner=0\n";
		const char *listen[] = { "unix:/tmp/x/p.sock group=4242 mode=0606" };
		struct cf_overrides ov;
		struct cf_diag d;
		struct cf_config *c;
		const struct cf_session *s;
		memset(&d, 0, sizeof(d));
		c = cf_config_parse("t.ini", t, strlen(t), NULL, &d);
		s = c ? cf_config_find_session(c, "default") : NULL;
		tap_ok(s != NULL && s->listen[0].mode == 0660 && s->listen[0].has_owner &&
		    s->listen[0].owner == 0 && !s->listen[0].has_group &&
		    strcmp(s->listen[0].path, "/r/a.sock") == 0,
		    "mode=660 owner=0 after a tab: path /r/a.sock, 0660, uid 0 (%s)",
		    d.nerrors ? d.errors[0] : "ok");
		cf_config_free(c);
		cf_diag_free(&d);
		memset(&ov, 0, sizeof(ov));
		ov.extra_listen = listen;
		ov.n_extra_listen = 1;
		ov.replace_listen = 1;
		c = cf_config_parse("t.ini", t, strlen(t), &ov, &d);
		s = c ? cf_config_find_session(c, "default") : NULL;
		tap_ok(s != NULL && s->nlisten == 1 && s->listen[0].mode == 0606 && s->listen[0].has_group &&
		    s->listen[0].group == 4242 && !s->listen[0].has_owner,
		    "--listen takes the same options");
		cf_config_free(c);
		cf_diag_free(&d);
	}
	{
		/* serve_session (run --session): that session alone, on the
		 * given listener; every listener of the file left out. */
		static const char t[] = "[proxy]\nlisten = unix:/r/host.sock\n"
		    "[session s1]\nlisten = unix:/r/s1.sock\nallow_hosts = a.test\n"
		    "[session s2]\nlisten = unix:/r/s2.sock\n";
		const char *listen[] = { "unix:/tmp/x/run.sock" };
		struct cf_overrides ov;
		struct cf_diag d;
		struct cf_config *c;
		const struct cf_session *s;
		size_t k, nl = 0;
		memset(&ov, 0, sizeof(ov));
		memset(&d, 0, sizeof(d));
		ov.extra_listen = listen;
		ov.n_extra_listen = 1;
		ov.replace_listen = 1;
		ov.serve_session = "s1";
		c = cf_config_parse("t.ini", t, strlen(t), &ov, &d);
		s = c ? cf_config_find_session(c, "s1") : NULL;
		for (k = 0; c != NULL && k < cf_config_nsessions(c); k++)
			nl += cf_config_session(c, k)->nlisten;
		tap_ok(s != NULL && s->nlisten == 1 && strcmp(s->listen[0].path, "/tmp/x/run.sock") == 0 &&
		    nl == 1, "serve_session: s1 on the given listener, no other bound (%s)",
		    d.nerrors ? d.errors[0] : "ok");
		cf_config_free(c);
		cf_diag_free(&d);
		memset(&d, 0, sizeof(d));
		ov.serve_session = "s3";
		c = cf_config_parse("t.ini", t, strlen(t), &ov, &d);
		tap_ok(c == NULL && has_error(&d, "t.ini: no [session s3]; its sessions: s1, s2"),
		    "serve_session: an unknown name lists the sessions");
		cf_diag_free(&d);
		memset(&d, 0, sizeof(d));
		/* Its first two lines: [proxy] alone. */
		c = cf_config_parse("t.ini", t, sizeof("[proxy]\nlisten = unix:/r/host.sock\n") - 1, &ov, &d);
		tap_ok(c == NULL && has_error(&d, "t.ini: no [session s3]: the file has no [session] sections"),
		    "serve_session: a file without sessions says so");
		cf_diag_free(&d);
	}
	{
		/* metrics = tcp:ADDR:PORT: one listener of its own, IPv4 or
		 * IPv6, and none without the key. */
		static const char t4[] = HEAD "metrics = tcp:0.0.0.0:9090\n";
		static const char t6[] = HEAD "metrics = tcp:[::1]:9091\n";
		const struct cf_proxy_settings *p;
		struct cf_diag d;
		struct cf_config *c;

		memset(&d, 0, sizeof(d));
		c = cf_config_parse("t.ini", t4, strlen(t4), NULL, &d);
		p = c != NULL ? cf_config_proxy(c) : NULL;
		tap_ok(p != NULL && p->metrics.kind == CF_LISTEN_TCP &&
		    p->metrics.addr.ss_family == AF_INET &&
		    ntohs(((const struct sockaddr_in *)&p->metrics.addr)->sin_port) == 9090 &&
		    strcmp(p->metrics.text, "tcp:0.0.0.0:9090") == 0 && p->metrics.line == 3 &&
		    p->admin.kind == 0, "metrics = tcp:0.0.0.0:9090 (%s)", d.nerrors ? d.errors[0] : "ok");
		cf_config_free(c);
		cf_diag_free(&d);
		memset(&d, 0, sizeof(d));
		c = cf_config_parse("t.ini", t6, strlen(t6), NULL, &d);
		p = c != NULL ? cf_config_proxy(c) : NULL;
		tap_ok(p != NULL && p->metrics.kind == CF_LISTEN_TCP &&
		    p->metrics.addr.ss_family == AF_INET6 &&
		    ntohs(((const struct sockaddr_in6 *)&p->metrics.addr)->sin6_port) == 9091,
		    "metrics = tcp:[::1]:9091 (%s)", d.nerrors ? d.errors[0] : "ok");
		cf_config_free(c);
		cf_diag_free(&d);
		memset(&d, 0, sizeof(d));
		c = cf_config_parse("t.ini", HEAD, strlen(HEAD), NULL, &d);
		tap_ok(c != NULL && cf_config_proxy(c)->metrics.kind == 0, "no metrics without the key");
		cf_config_free(c);
		cf_diag_free(&d);
		{
			/* One session served (run --session): the file's metrics
			 * listener is the host proxy's, like its listeners. */
			static const char t[] = "[proxy]\nlisten = unix:/r/host.sock\n"
			    "metrics = tcp:0.0.0.0:9090\n[session s1]\nlisten = unix:/r/s1.sock\n";
			const char *listen[] = { "unix:/tmp/x/run.sock" };
			struct cf_overrides ov;

			memset(&ov, 0, sizeof(ov));
			ov.extra_listen = listen;
			ov.n_extra_listen = 1;
			ov.replace_listen = 1;
			ov.serve_session = "s1";
			memset(&d, 0, sizeof(d));
			c = cf_config_parse("t.ini", t, strlen(t), &ov, &d);
			tap_ok(c != NULL && cf_config_proxy(c)->metrics.kind == 0,
			    "serve_session: the file's metrics listener left out (%s)",
			    d.nerrors ? d.errors[0] : "ok");
			cf_config_free(c);
			cf_diag_free(&d);
		}
	}
	{
		struct cf_diag d;
		struct cf_config *c;
		memset(&d, 0, sizeof(d));
		c = cf_config_load("/nonexistent/postern.ini", NULL, &d);
		tap_ok(c == NULL && has_error(&d, "/nonexistent/postern.ini: cannot read"),
		    "a missing file is an error, never an empty allowlist");
		cf_diag_free(&d);
	}
	return tap_done();
}
