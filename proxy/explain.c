/*
 * proxy/explain.c: postern-proxy --explain (see explain.h).
 *
 * It runs exactly the decision code the proxy runs (cf_decide, then
 * cf_decide_addr for each address), so what it prints is what the proxy
 * would do, not a second opinion.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>

#include "conf/config.h"
#include "conf/etchosts.h"
#include "proxy/explain.h"
#include "proxy/proto/resolve.h"

static int
print_bad(FILE *out, const char *why, const char *target)
{
	fprintf(out, "deny bad_request (%s)\n", why);
	fprintf(out, "  the proxy answers 400 to this target before any lookup: %s\n", target);
	return 1;
}

static void
host_sockaddr(const struct cf_host *h, uint16_t port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (h->kind == CF_HOST_IPV4) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;
		sin->sin_family = AF_INET;
		sin->sin_addr = h->addr.v4;
		sin->sin_port = htons(port);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = h->addr.v6;
		sin6->sin6_port = htons(port);
	}
}

int
px_explain(const char *path, const struct cf_overrides *ov, const char *target,
    const char *session, int resolve, FILE *out)
{
	struct cf_diag diag;
	struct cf_config *c;
	const struct cf_session *s;
	struct cf_host h;
	struct cf_decision d;
	enum cf_mode mode;
	const char *why = NULL, *upath = NULL;
	size_t upathlen = 0, i;
	uint16_t port = 0;
	char hbuf[CF_HOST_TEXT_MAX], sugg[512], mbuf[CF_METHOD_MAX + 4] = "GET";
	int rc = 1;

	memset(&diag, 0, sizeof(diag));
	c = cf_config_load(path, ov, &diag);
	if (c == NULL) {
		for (i = 0; i < diag.nerrors; i++)
			fprintf(stderr, "%s\n", diag.errors[i]);
		cf_diag_free(&diag);
		return 2;
	}
	/* What the proxy would warn about at start (a URL taken as a
	 * pattern, a shadowed rule), on stderr: stdout is the verdict. */
	for (i = 0; i < diag.nwarnings; i++)
		fprintf(stderr, "postern-proxy: warning: %s\n", diag.warnings[i]);
	cf_diag_free(&diag);
	s = cf_config_find_session(c, session);
	if (s == NULL) {
		size_t j;

		/* The name was mistyped more often than meant: say which are. */
		fprintf(stderr, "postern-proxy: no session named %s in %s; its sessions: default",
		    session, cf_config_path(c));
		for (j = 0; j < cf_config_nsessions(c); j++) {
			const struct cf_session *o = cf_config_session(c, j);

			if (!o->is_default)
				fprintf(stderr, ", %s", o->name);
		}
		fputc('\n', stderr);
		rc = 2;
		goto out;
	}

	{
		/* "POST https://host/path": a method before the URL judges a
		 * request of that method (plain HTTP, or inside a terminated
		 * tunnel); without one, a pasted URL is what a browser GETs. */
		const char *sp = strchr(target, ' ');
		if (sp != NULL && sp > target && (size_t)(sp - target) < sizeof(mbuf)) {
			memcpy(mbuf, target, (size_t)(sp - target));
			mbuf[sp - target] = '\0';
			target = sp + 1;
			while (*target == ' ')
				target++;
		}
	}
	if (strncasecmp(target, "http://", 7) == 0) {
		const char *auth = target + 7;
		size_t alen = strcspn(auth, "/?#");
		mode = CF_MODE_HTTP;
		if (cf_authority_parse(auth, alen, 0, &h, &port, &why) != 0) {
			rc = print_bad(out, why, target);
			goto out;
		}
		if (port == 0)
			port = 80;
		upath = auth + alen;
		upathlen = strcspn(upath, "#");
		if (upathlen == 0)
			upath = "/", upathlen = 1;
		else if (upath[0] == '?') {
			fprintf(out, "note: a path must start with /; the proxy would see /%.*s\n",
			    (int)upathlen, upath);
		}
	} else if (strncasecmp(target, "https://", 8) == 0) {
		/* A pasted https:// URL is what a client sends as CONNECT
		 * HOST:PORT (443 unless it names one); its path travels inside
		 * TLS, where the proxy never sees it. */
		const char *auth = target + 8, *rest;
		size_t alen = strcspn(auth, "/?#");
		mode = CF_MODE_CONNECT;
		if (cf_authority_parse(auth, alen, 0, &h, &port, &why) != 0) {
			rc = print_bad(out, why, target);
			goto out;
		}
		if (port == 0)
			port = 443;
		cf_host_format(&h, hbuf, sizeof(hbuf));
		fprintf(stderr, "postern-proxy: note: %s taken as CONNECT %s:%u\n", target, hbuf, port);
		rest = auth + alen;
		if (h.kind == CF_HOST_NAME && cf_session_terminates(s, h.name, port)) {
			/* TLS to it is terminated (a secret is bound to it, or a
			 * rule inspects it): its CONNECT is admitted as the
			 * tunnel of requests it is, and each request inside is
			 * judged with its method and path. */
			mode = CF_MODE_TLS;
			upath = rest[0] == '/' ? rest : "/";
			upathlen = strcspn(upath, "#");
			fprintf(stderr, "postern-proxy: note: TLS to %s:%u is terminated (%s): the request "
			    "inside is judged as %s %.*s\n", hbuf, port,
			    cf_session_inspects(s, h.name, port) != NULL ? "inspect" : "a secret is bound to it",
			    mbuf, (int)upathlen, upath);
		} else if (rest[0] != '\0' && strcmp(rest, "/") != 0)
			fprintf(stderr, "postern-proxy: note: the path %s is inside TLS: the proxy never "
			    "sees it, and decides on the host and port alone\n", rest);
	} else if (strstr(target, "://") != NULL) {
		rc = print_bad(out, "only http:// and https:// URLs or HOST:PORT (CONNECT) can be explained", target);
		goto out;
	} else {
		mode = CF_MODE_CONNECT;
		if (cf_authority_parse(target, strlen(target), 0, &h, &port, &why) != 0) {
			rc = print_bad(out, why, target);
			goto out;
		}
		if (port == 0) {
			rc = print_bad(out, "a CONNECT target needs a port (RFC 9110 §9.3.6)", target);
			goto out;
		}
		/* The CONNECT of a tunnel the session terminates is judged as
		 * the proxy judges it: a path or methods rule admits it. */
		if (h.kind == CF_HOST_NAME && cf_session_terminates(s, h.name, port))
			mode = CF_MODE_TLS;
	}
	cf_host_format(&h, hbuf, sizeof(hbuf));

	cf_decide(s, mode, &h, port, upath, upathlen, upath == NULL ? NULL : mbuf, &d);
	if (!d.allow) {
		if (s->ask && (d.reason == CF_R_HOST_NOT_ALLOWED || d.reason == CF_R_PORT_NOT_ALLOWED ||
		    d.reason == CF_R_PATH_NOT_ALLOWED || d.reason == CF_R_METHOD_NOT_ALLOWED))
			/* mode = ask: the allowlist's refusal is a question. */
			fprintf(out, "ask %s (mode = ask: held until an admin answers, else refused "
			    "with ask_timeout; %s)\n", cf_reason_code(d.reason), d.detail);
		else
			fprintf(out, "deny %s (%s)\n", cf_reason_code(d.reason), d.detail);
		cf_suggest(s, mode, &h, port, upath, upathlen, &d, sugg, sizeof(sugg));
		if (sugg[0] != '\0')
			fprintf(out, "  %s\n", sugg);
		fprintf(out, "  session %s, %s %s:%u%s%s%s%.*s\n", s->name,
		    mode == CF_MODE_CONNECT ? "CONNECT" : mode != CF_MODE_TLS ? "plain HTTP" :
		    upath == NULL ? "CONNECT, TLS terminated," : "terminated TLS", hbuf, port,
		    upath != NULL ? " " : "", upath != NULL ? mbuf : "", upath != NULL ? " " : "",
		    (int)upathlen, upath ? upath : "");
		rc = 1;
		goto out;
	}

	if (h.kind != CF_HOST_NAME) {
		/* An IP literal: the address is known without any lookup. */
		struct sockaddr_storage ss;
		struct cf_decision ad;
		host_sockaddr(&h, port, &ss);
		cf_decide_addr(c, s, &d, (struct sockaddr *)&ss, &ad);
		if (!ad.allow) {
			fprintf(out, "deny %s (%s)\n", cf_reason_code(ad.reason), ad.detail);
			cf_suggest(s, mode, &h, port, upath, upathlen, &ad, sugg, sizeof(sugg));
			if (sugg[0] != '\0')
				fprintf(out, "  %s\n", sugg);
			rc = 1;
			goto out;
		}
	}

	{
		/* The first line is the final word, so the lookup (if any) comes
		 * first and the details are gathered on the side. */
		char *body = NULL;
		size_t bodylen = 0;
		FILE *bf = open_memstream(&body, &bodylen);
		struct cf_decision final = d;
		const struct cf_pin *pin = h.kind == CF_HOST_NAME ? cf_config_pin(c, h.name) : NULL;

		if (bf == NULL) {
			rc = 2;
			goto out;
		}
		fprintf(bf, "  session %s, %s %s:%u%s%s%s%.*s\n", s->name,
		    mode == CF_MODE_CONNECT ? "CONNECT" : mode != CF_MODE_TLS ? "plain HTTP" :
		    upath == NULL ? "CONNECT, TLS terminated," : "terminated TLS", hbuf, port,
		    upath != NULL ? " " : "", upath != NULL ? mbuf : "", upath != NULL ? " " : "",
		    (int)upathlen, upath ? upath : "");
		fprintf(bf, "  %s%s\n", d.detail, d.rule != NULL && d.rule->private_ok ?
		    "; the rule says \"private\"" : "");
		rc = 0;
		if (h.kind != CF_HOST_NAME) {
			fprintf(bf, "  an IP literal: no DNS lookup\n");
		} else if (!resolve && pin == NULL) {
			fprintf(bf, "  no DNS lookup was made; add --resolve to check the addresses it resolves to\n");
		} else {
			struct px_resolved res;
			const char *err = NULL;
			const struct cf_proxy_settings *p = cf_config_proxy(c);
			memset(&res, 0, sizeof(res));
			if (pin != NULL) {
				/* The proxy takes a pinned name's addresses without
				 * DNS, and vets them like an answer. */
				fprintf(bf, "  pinned in [hosts] (%s:%d): no DNS lookup\n", pin->file, pin->line);
				_Static_assert(CF_PIN_MAX_ADDRS <= PX_DNS_MAX_ADDRS, "a pin fits a lookup");
				for (i = 0; i < pin->naddrs && i < CF_PIN_MAX_ADDRS; i++)
					res.addrs[i] = pin->addrs[i];
				res.naddrs = i;
			} else if (px_resolve_sync(h.name, p->dns_servers, p->connect_timeout_ms, &res, &err) != 0) {
				int listed = cf_etchosts_file_lists("/etc/hosts", h.name);
				final.allow = 0;
				final.reason = CF_R_DNS_FAILURE;
				snprintf(final.detail, sizeof(final.detail), "%s does not resolve: %s; the proxy answers 502%s%s%s",
				    hbuf, err ? err : "lookup failed",
				    listed ? "; /etc/hosts lists it, but /etc/hosts is not read: pin it in [hosts] (" : "",
				    listed ? hbuf : "", listed ? " = ADDRESS)" : "");
				rc = 1;
			}
			for (i = 0; rc == 0 && i < res.naddrs; i++) {
				struct cf_decision ad;
				char abuf[INET6_ADDRSTRLEN];
				struct sockaddr *sa = (struct sockaddr *)&res.addrs[i];
				if (sa->sa_family == AF_INET) {
					((struct sockaddr_in *)sa)->sin_port = htons(port);
					inet_ntop(AF_INET, &((struct sockaddr_in *)sa)->sin_addr, abuf, sizeof(abuf));
				} else {
					((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
					inet_ntop(AF_INET6, &((struct sockaddr_in6 *)sa)->sin6_addr, abuf, sizeof(abuf));
				}
				cf_decide_addr(c, s, &d, sa, &ad);
				fprintf(bf, "  %s %s: %s\n", ad.allow ? "ok     " : "REFUSED", abuf, ad.detail);
				if (!ad.allow && final.allow)
					final = ad;
			}
			if (rc == 0 && !final.allow) {
				fprintf(bf, "  the proxy refuses a host when any of its addresses is refused\n");
				rc = 1;
			}
		}
		fclose(bf);
		if (final.allow && d.rule == NULL) {
			/* Report mode relaxed it (cf_decide()): no rule allows it. */
			fprintf(out, "allow (report mode; would deny %s)\n", cf_reason_code(d.would));
			cf_suggest(s, mode, &h, port, upath, upathlen, &(struct cf_decision){
			    .reason = d.would, .rule = d.would_rule }, sugg, sizeof(sugg));
			if (sugg[0] != '\0')
				fprintf(out, "  to allow it when enforcing: %s\n", sugg);
		} else if (final.allow) {
			char b[128];
			fprintf(out, "allow %s %s:%d\n", d.rule->text, d.rule->file, d.rule->line);
			if (cf_rule_has_budget(d.rule))
				fprintf(out, "  budget: %s, counted per session (a running proxy "
				    "answers 429 budget_exceeded over it)\n",
				    cf_rule_budget_text(d.rule, b, sizeof(b)));
		} else {
			fprintf(out, "deny %s (%s)\n", cf_reason_code(final.reason), final.detail);
			cf_suggest(s, mode, &h, port, upath, upathlen, &final, sugg, sizeof(sugg));
			if (sugg[0] != '\0')
				fprintf(out, "  %s\n", sugg);
		}
		fputs(body, out);
		free(body);
	}
out:
	cf_config_free(c);
	return rc;
}
