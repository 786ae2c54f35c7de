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

/* The request --explain judges, read from its TARGET. */
struct explain_req {
	enum cf_mode mode;
	struct cf_host h;
	uint16_t port;
	const char *upath;  /* the path judged, or NULL for a CONNECT */
	size_t upathlen;
	char mbuf[CF_METHOD_MAX + 4];   /* the method */
	char hbuf[CF_HOST_TEXT_MAX];    /* the host, as text */
};

/* The session named SESSION, or NULL after saying which there are. */
static const struct cf_session *
explain_session(const struct cf_config *c, const char *session)
{
	const struct cf_session *s;
	size_t j;

	s = cf_config_find_session(c, session);
	if (s != NULL)
		return s;
	/* The name was mistyped more often than meant: say which are. */
	fprintf(stderr, "postern-proxy: no session named %s in %s; its sessions: default",
	    session, cf_config_path(c));
	for (j = 0; j < cf_config_nsessions(c); j++) {
		const struct cf_session *o = cf_config_session(c, j);

		if (!o->is_default)
			fprintf(stderr, ", %s", o->name);
	}
	fputc('\n', stderr);
	return NULL;
}

/* An https:// URL, AUTH after the scheme: what a client sends as CONNECT
 * HOST:PORT.  Returns 0, or 1 after printing why it is a bad request. */
static int
explain_https(const struct cf_session *s, const char *target, const char *auth,
    struct explain_req *r, FILE *out)
{
	const char *rest, *why = NULL;
	size_t alen = strcspn(auth, "/?#");

	r->mode = CF_MODE_CONNECT;
	if (cf_authority_parse(auth, alen, 0, &r->h, &r->port, &why) != 0)
		return print_bad(out, why, target);
	if (r->port == 0)
		r->port = 443;
	cf_host_format(&r->h, r->hbuf, sizeof(r->hbuf));
	fprintf(stderr, "postern-proxy: note: %s taken as CONNECT %s:%u\n", target, r->hbuf,
	    r->port);
	rest = auth + alen;
	if (r->h.kind == CF_HOST_NAME && cf_session_terminates(s, r->h.name, r->port)) {
		/* TLS to it is terminated (a secret is bound to it, or a
		 * rule inspects it): its CONNECT is admitted as the
		 * tunnel of requests it is, and each request inside is
		 * judged with its method and path. */
		r->mode = CF_MODE_TLS;
		r->upath = rest[0] == '/' ? rest : "/";
		r->upathlen = strcspn(r->upath, "#");
		fprintf(stderr, "postern-proxy: note: TLS to %s:%u is terminated (%s): the request "
		    "inside is judged as %s %.*s\n", r->hbuf, r->port,
		    cf_session_inspects(s, r->h.name, r->port) != NULL ? "inspect" :
		    "a secret is bound to it", r->mbuf, (int)r->upathlen, r->upath);
	} else if (rest[0] != '\0' && strcmp(rest, "/") != 0)
		fprintf(stderr, "postern-proxy: note: the path %s is inside TLS: the proxy never "
		    "sees it, and decides on the host and port alone\n", rest);
	return 0;
}

/*
 * Reads TARGET ("[METHOD ]http://...", "[METHOD ]https://..." or
 * HOST:PORT) into R as session S's proxy would see it.  Returns 0, or 1
 * after printing why the proxy answers 400.
 */
static int
explain_parse(const struct cf_session *s, const char *target, struct explain_req *r,
    FILE *out)
{
	const char *sp, *why = NULL;

	memset(r, 0, sizeof(*r));
	snprintf(r->mbuf, sizeof(r->mbuf), "GET");
	/* "POST https://host/path": a method before the URL judges a
	 * request of that method (plain HTTP, or inside a terminated
	 * tunnel); without one, a pasted URL is what a browser GETs. */
	sp = strchr(target, ' ');
	if (sp != NULL && sp > target && (size_t)(sp - target) < sizeof(r->mbuf)) {
		memcpy(r->mbuf, target, (size_t)(sp - target));
		r->mbuf[sp - target] = '\0';
		target = sp + 1;
		while (*target == ' ')
			target++;
	}
	if (strncasecmp(target, "http://", 7) == 0) {
		const char *auth = target + 7;
		size_t alen = strcspn(auth, "/?#");
		r->mode = CF_MODE_HTTP;
		if (cf_authority_parse(auth, alen, 0, &r->h, &r->port, &why) != 0)
			return print_bad(out, why, target);
		if (r->port == 0)
			r->port = 80;
		r->upath = auth + alen;
		r->upathlen = strcspn(r->upath, "#");
		if (r->upathlen == 0)
			r->upath = "/", r->upathlen = 1;
		else if (r->upath[0] == '?') {
			fprintf(out, "note: a path must start with /; the proxy would see /%.*s\n",
			    (int)r->upathlen, r->upath);
		}
	} else if (strncasecmp(target, "https://", 8) == 0) {
		if (explain_https(s, target, target + 8, r, out) != 0)
			return 1;
	} else if (strstr(target, "://") != NULL) {
		return print_bad(out, "only http:// and https:// URLs or HOST:PORT (CONNECT) can be explained", target);
	} else {
		r->mode = CF_MODE_CONNECT;
		if (cf_authority_parse(target, strlen(target), 0, &r->h, &r->port, &why) != 0)
			return print_bad(out, why, target);
		if (r->port == 0)
			return print_bad(out, "a CONNECT target needs a port (RFC 9110 §9.3.6)", target);
		/* The CONNECT of a tunnel the session terminates is judged as
		 * the proxy judges it: a path or methods rule admits it. */
		if (r->h.kind == CF_HOST_NAME && cf_session_terminates(s, r->h.name, r->port))
			r->mode = CF_MODE_TLS;
	}
	cf_host_format(&r->h, r->hbuf, sizeof(r->hbuf));
	return 0;
}

/* The line that says which session judged which request. */
static void
explain_print_req(FILE *f, const struct cf_session *s, const struct explain_req *r)
{
	fprintf(f, "  session %s, %s %s:%u%s%s%s%.*s\n", s->name,
	    r->mode == CF_MODE_CONNECT ? "CONNECT" : r->mode != CF_MODE_TLS ? "plain HTTP" :
	    r->upath == NULL ? "CONNECT, TLS terminated," : "terminated TLS", r->hbuf, r->port,
	    r->upath != NULL ? " " : "", r->upath != NULL ? r->mbuf : "", r->upath != NULL ? " " : "",
	    (int)r->upathlen, r->upath ? r->upath : "");
}

/* A refusal D and the rule that would allow it, if one can be told. */
static void
explain_print_deny(FILE *out, const struct cf_session *s, const struct explain_req *r,
    const struct cf_decision *d, const char *prefix)
{
	char sugg[512];

	fprintf(out, "deny %s (%s)\n", cf_reason_code(d->reason), d->detail);
	cf_suggest(s, r->mode, &r->h, r->port, r->upath, r->upathlen, d, sugg, sizeof(sugg));
	if (sugg[0] != '\0')
		fprintf(out, "  %s%s\n", prefix, sugg);
}

/*
 * The addresses R's host has (pinned, or looked up when RESOLVE), each
 * judged as the proxy judges it, written to BF; *FINAL becomes the first
 * refusal.  Returns 0, or 1 when the proxy would refuse.
 */
static int
explain_addrs(const struct cf_config *c, const struct cf_session *s,
    const struct explain_req *r, struct cf_decision *d, int resolve, FILE *bf,
    struct cf_decision *final)
{
	const struct cf_pin *pin = r->h.kind == CF_HOST_NAME ? cf_config_pin(c, r->h.name) : NULL;
	const struct cf_proxy_settings *p = cf_config_proxy(c);
	struct px_resolved res;
	const char *err = NULL;
	size_t i;
	int rc = 0;

	if (r->h.kind != CF_HOST_NAME) {
		fprintf(bf, "  an IP literal: no DNS lookup\n");
		return 0;
	}
	if (!resolve && pin == NULL) {
		fprintf(bf, "  no DNS lookup was made; add --resolve to check the addresses it resolves to\n");
		return 0;
	}
	memset(&res, 0, sizeof(res));
	if (pin != NULL) {
		/* The proxy takes a pinned name's addresses without
		 * DNS, and vets them like an answer. */
		fprintf(bf, "  pinned in [hosts] (%s:%d): no DNS lookup\n", pin->file, pin->line);
		_Static_assert(CF_PIN_MAX_ADDRS <= PX_DNS_MAX_ADDRS, "a pin fits a lookup");
		for (i = 0; i < pin->naddrs && i < CF_PIN_MAX_ADDRS; i++)
			res.addrs[i] = pin->addrs[i];
		res.naddrs = i;
	} else if (px_resolve_sync(r->h.name, p->dns_servers, p->connect_timeout_ms, &res, &err) < 0) {
		int listed = cf_etchosts_file_lists("/etc/hosts", r->h.name);
		final->allow = 0;
		final->reason = CF_R_DNS_FAILURE;
		snprintf(final->detail, sizeof(final->detail), "%s does not resolve: %s; the proxy answers 502%s%s%s",
		    r->hbuf, err ? err : "lookup failed",
		    listed ? "; /etc/hosts lists it, but /etc/hosts is not read: pin it in [hosts] (" : "",
		    listed ? r->hbuf : "", listed ? " = ADDRESS)" : "");
		rc = 1;
	}
	for (i = 0; rc == 0 && i < res.naddrs; i++) {
		struct cf_decision ad;
		char abuf[INET6_ADDRSTRLEN];
		struct sockaddr *sa = (struct sockaddr *)&res.addrs[i];
		if (sa->sa_family == AF_INET) {
			((struct sockaddr_in *)sa)->sin_port = htons(r->port);
			inet_ntop(AF_INET, &((struct sockaddr_in *)sa)->sin_addr, abuf, sizeof(abuf));
		} else {
			((struct sockaddr_in6 *)sa)->sin6_port = htons(r->port);
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)sa)->sin6_addr, abuf, sizeof(abuf));
		}
		cf_decide_addr(c, s, d, sa, &ad);
		fprintf(bf, "  %s %s: %s\n", ad.allow ? "ok     " : "REFUSED", abuf, ad.detail);
		if (!ad.allow && final->allow)
			*final = ad;
	}
	if (rc == 0 && !final->allow) {
		fprintf(bf, "  the proxy refuses a host when any of its addresses is refused\n");
		rc = 1;
	}
	return rc;
}

/*
 * The verdict on a request the rules allow: the first line is the final
 * word, so the lookup (if any) comes first and the details are gathered
 * on the side.  Returns the exit status.
 */
static int
explain_allowed(const struct cf_config *c, const struct cf_session *s,
    const struct explain_req *r, struct cf_decision *d, int resolve, FILE *out)
{
	char *body = NULL, sugg[512];
	size_t bodylen = 0;
	FILE *bf = open_memstream(&body, &bodylen);
	struct cf_decision final = *d;
	int rc;

	if (bf == NULL)
		return 2;
	explain_print_req(bf, s, r);
	fprintf(bf, "  %s%s\n", d->detail, d->rule != NULL && d->rule->private_ok ?
	    "; the rule says \"private\"" : "");
	rc = explain_addrs(c, s, r, d, resolve, bf, &final);
	fclose(bf);
	if (final.allow && d->rule == NULL) {
		/* Report mode relaxed it (cf_decide()): no rule allows it. */
		fprintf(out, "allow (report mode; would deny %s)\n", cf_reason_code(d->would));
		cf_suggest(s, r->mode, &r->h, r->port, r->upath, r->upathlen, &(struct cf_decision){
		    .reason = d->would, .rule = d->would_rule }, sugg, sizeof(sugg));
		if (sugg[0] != '\0')
			fprintf(out, "  to allow it when enforcing: %s\n", sugg);
	} else if (final.allow) {
		char b[128];
		fprintf(out, "allow %s %s:%d\n", d->rule->text, d->rule->file, d->rule->line);
		if (cf_rule_has_budget(d->rule))
			fprintf(out, "  budget: %s, counted per session (a running proxy "
			    "answers 429 budget_exceeded over it)\n",
			    cf_rule_budget_text(d->rule, b, sizeof(b)));
	} else {
		explain_print_deny(out, s, r, &final, "");
	}
	fputs(body, out);
	free(body);
	return rc;
}

/* Judges R in session S of C, as the proxy would, and prints why.  Returns
 * the exit status. */
static int
explain_judge(const struct cf_config *c, const struct cf_session *s,
    const struct explain_req *r, int resolve, FILE *out)
{
	struct cf_decision d;

	cf_decide(s, r->mode, &r->h, r->port, r->upath, r->upathlen,
	    r->upath == NULL ? NULL : r->mbuf, &d);
	if (!d.allow) {
		char sugg[512];

		if (s->ask && (d.reason == CF_R_HOST_NOT_ALLOWED || d.reason == CF_R_PORT_NOT_ALLOWED ||
		    d.reason == CF_R_PATH_NOT_ALLOWED || d.reason == CF_R_METHOD_NOT_ALLOWED))
			/* mode = ask: the allowlist's refusal is a question. */
			fprintf(out, "ask %s (mode = ask: held until an admin answers, else refused "
			    "with ask_timeout; %s)\n", cf_reason_code(d.reason), d.detail);
		else
			fprintf(out, "deny %s (%s)\n", cf_reason_code(d.reason), d.detail);
		cf_suggest(s, r->mode, &r->h, r->port, r->upath, r->upathlen, &d, sugg, sizeof(sugg));
		if (sugg[0] != '\0')
			fprintf(out, "  %s\n", sugg);
		explain_print_req(out, s, r);
		return 1;
	}
	if (r->h.kind != CF_HOST_NAME) {
		/* An IP literal: the address is known without any lookup. */
		struct sockaddr_storage ss;
		struct cf_decision ad;
		host_sockaddr(&r->h, r->port, &ss);
		cf_decide_addr(c, s, &d, (struct sockaddr *)&ss, &ad);
		if (!ad.allow) {
			explain_print_deny(out, s, r, &ad, "");
			return 1;
		}
	}
	return explain_allowed(c, s, r, &d, resolve, out);
}

int
px_explain(const char *path, const struct cf_overrides *ov, const char *target,
    const char *session, int resolve, FILE *out)
{
	struct cf_diag diag;
	struct cf_config *c;
	const struct cf_session *s;
	struct explain_req r;
	size_t i;
	int rc;

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
	s = explain_session(c, session);
	if (s == NULL)
		rc = 2;
	else if ((rc = explain_parse(s, target, &r, out)) == 0)
		rc = explain_judge(c, s, &r, resolve, out);
	cf_config_free(c);
	return rc;
}
