/*
 * conf/decide.c: the decisions on a request and on its addresses, and the
 * config line that would have allowed a refused one (see decide.h).  Only
 * the snapshot's public accessors are used: the decisions read the config,
 * the config never calls them.
 */
#include "conf/decide.h"

#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "base/tcp.h"
#include "base/text.h"
#include "conf/config.h"
#include "conf/ranges.h"
#include "conf/rule.h"

static const char *const reason_codes[] = {
	[CF_R_ALLOWED] = "allowed",
	[CF_R_HOST_NOT_ALLOWED] = "host_not_allowed",
	[CF_R_PORT_NOT_ALLOWED] = "port_not_allowed",
	[CF_R_PATH_NOT_ALLOWED] = "path_not_allowed",
	[CF_R_DENIED_BY_RULE] = "denied_by_rule",
	[CF_R_PRIVATE_ADDRESS] = "private_address",
	[CF_R_BAD_REQUEST] = "bad_request",
	[CF_R_HOST_MISMATCH] = "host_mismatch",
	[CF_R_DNS_FAILURE] = "dns_failure",
	[CF_R_CONNECT_FAILURE] = "connect_failure",
	[CF_R_TIMEOUT] = "timeout",
	[CF_R_SNI_MISMATCH] = "sni_mismatch",
	[CF_R_UNAVAILABLE] = "unavailable",
	[CF_R_SESSION_CONNECTION_LIMIT] = "session_connection_limit",
	[CF_R_UID_CONNECTION_LIMIT] = "uid_connection_limit",
	[CF_R_SESSION_REMOVED] = "session_removed",
	[CF_R_BAD_UPSTREAM_RESPONSE] = "bad_upstream_response",
	[CF_R_MISDIRECTED_REQUEST] = "misdirected_request",
	[CF_R_SECRET_MISDIRECTED] = "secret_misdirected",
	[CF_R_CREDENTIAL_UNAVAILABLE] = "credential_unavailable",
	[CF_R_REPOSITORY_NOT_ALLOWED] = "repository_not_allowed",
	[CF_R_UPSTREAM_TLS_FAILED] = "upstream_tls_failed",
	[CF_R_METHOD_NOT_ALLOWED] = "method_not_allowed",
	[CF_R_BUDGET_EXCEEDED] = "budget_exceeded",
	[CF_R_ASK_TIMEOUT] = "ask_timeout",
	[CF_R_DENIED_BY_ADMIN] = "denied_by_admin",
	[CF_R_SECRET_REFLECTED] = "secret_reflected",
	[CF_R_PROXY_AUTH_REQUIRED] = "proxy_auth_required",
	[CF_R_PROXY_AUTH_FAILED] = "proxy_auth_failed",
	[CF_R_PROXY_AUTH_BLOCKED] = "proxy_auth_blocked",
	[CF_R_DECIDER_DENIED] = "decider_denied",
	[CF_R_DECIDER_TIMEOUT] = "decider_timeout",
	[CF_R_DECIDER_BAD_ANSWER] = "decider_bad_answer",
	[CF_R_DECIDER_DOWN] = "decider_down",
	[CF_R_PARENT_REFUSED] = "parent_refused",
	[CF_R_PARENT_UNREACHABLE] = "parent_unreachable",
	[CF_R_SECRET_SIGNATURE] = "secret_signature",
};

const char *
cf_reason_code(enum cf_reason r)
{
	if ((size_t)r < sizeof(reason_codes) / sizeof(reason_codes[0]) && reason_codes[r])
		return reason_codes[r];
	return "unknown";
}

static void decide(const struct cf_session *s, enum cf_mode mode, const struct cf_host *h,
    uint16_t port, const char *path, size_t len, const char *method, struct cf_decision *d);

void
cf_decide(const struct cf_session *s, enum cf_mode mode, const struct cf_host *h, uint16_t port,
    const char *path, size_t len, const char *method, struct cf_decision *d)
{
	char detail[sizeof(d->detail)];

	decide(s, mode, h, port, path, len, method, d);
	/* Report mode relaxes the allowlist only: a deny rule, and every
	 * check made after this one (the address, SNI, secrets, the
	 * parser), still refuses.  No rule allowed the request, so RULE
	 * stays NULL: what a rule grants (a path's narrowing, a pooled
	 * upstream) does not carry over; only "private" of the host's own
	 * rule in WOULD_RULE does (cf_decide_addr()). */
	if (d->allow || !s->report || d->reason == CF_R_DENIED_BY_RULE)
		return;
	d->would = d->reason;
	d->would_rule = d->rule;
	d->allow = 1;
	d->reason = CF_R_ALLOWED;
	d->rule = NULL;
	memcpy(detail, d->detail, sizeof(detail));
	snprintf(d->detail, sizeof(d->detail), "report mode: would refuse: %.480s", detail);
}

static void
decide(const struct cf_session *s, enum cf_mode mode, const struct cf_host *h, uint16_t port,
    const char *path, size_t len, const char *method, struct cf_decision *d)
{
	const struct cf_rule *host_match = NULL, *port_match = NULL, *path_match = NULL, *best = NULL;
	char hbuf[CF_HOST_TEXT_MAX];
	struct bs_str b;
	size_t i;

	memset(d, 0, sizeof(*d));
	cf_host_format(h, hbuf, sizeof(hbuf));

	/* Deny wins: any deny rule that covers host and port decides. */
	for (i = 0; i < s->ndeny; i++) {
		const struct cf_rule *r = s->deny[i];
		if (cf_rule_match_host(r, h) && cf_rule_match_port(r, mode, port)) {
			d->reason = CF_R_DENIED_BY_RULE;
			d->rule = r;
			snprintf(d->detail, sizeof(d->detail),
			    "%s:%u is denied by deny_hosts = %s (%s:%d) in session %s",
			    hbuf, port, r->text, r->file, r->line, s->name);
			return;
		}
	}

	for (i = 0; i < s->nallow; i++) {
		const struct cf_rule *r = s->allow[i];
		if (!cf_rule_match_host(r, h))
			continue;
		if (host_match == NULL)
			host_match = r;
		if (!cf_rule_match_port(r, mode, port))
			continue;
		if (port_match == NULL)
			port_match = r;
		/* An opaque tunnel cannot be narrowed by path or method: a
		 * rule narrowed so never allows one, nor does an "inspect"
		 * rule (it asks for every request to be seen; a tunnel is
		 * opaque only when termination is unavailable).  The CONNECT
		 * of a terminated tunnel (TLS mode, no path) is admitted: each
		 * request inside is judged on its own. */
		if (mode == CF_MODE_CONNECT && (r->path != NULL || r->methods != NULL || r->inspect))
			continue;
		if (r->path != NULL &&
		    (path == NULL ? mode != CF_MODE_TLS : !cf_rule_match_path(r, path, len)))
			continue;
		if (path_match == NULL)
			path_match = r;
		if (r->methods != NULL && (mode == CF_MODE_TLS && path == NULL ? 0 :
		    !cf_rule_match_method(r, method)))
			continue;
		/* Prefer a rule that grants "private": it is the admin's most
		 * explicit word about this host.  Among equals, prefer one
		 * without a path, then one without methods: a path rule
		 * narrows what the request may carry (proxy/flow/conn.c refuses
		 * path-override headers under one), and a host rule that
		 * admits the request outright is the one that decided. */
		if (best == NULL || (r->private_ok && !best->private_ok) ||
		    (r->private_ok == best->private_ok &&
		    ((best->path != NULL && r->path == NULL) ||
		    ((best->path != NULL) == (r->path != NULL) && best->methods != NULL && r->methods == NULL))))
			best = r;
	}
	if (best != NULL) {
		d->allow = 1;
		d->reason = CF_R_ALLOWED;
		d->rule = best;
		/* On every allowed request: appended, not printf()'d. */
		bs_str_init(&b, d->detail, sizeof(d->detail));
		bs_str_add(&b, "allowed by allow_hosts = ");
		bs_str_add(&b, best->text);
		bs_str_add(&b, " (");
		bs_str_add(&b, best->file);
		bs_str_addn(&b, ":", 1);
		bs_str_int(&b, best->line);
		bs_str_addn(&b, ")", 1);
		return;
	}
	if (path_match != NULL && mode != CF_MODE_CONNECT) {
		d->reason = CF_R_METHOD_NOT_ALLOWED;
		d->rule = path_match;
		snprintf(d->detail, sizeof(d->detail),
		    "method %.*s is not allowed for %s:%u: allow_hosts = %s (%s:%d) admits only %s in session %s",
		    CF_METHOD_MAX + 4, method != NULL ? method : "(none)", hbuf, port, path_match->text,
		    path_match->file, path_match->line, path_match->methods, s->name);
		return;
	}
	if (port_match != NULL) {
		d->reason = CF_R_PATH_NOT_ALLOWED;
		d->rule = port_match;
		if (mode == CF_MODE_CONNECT && port_match->path == NULL)
			snprintf(d->detail, sizeof(d->detail),
			    "%s:%u is allowed by allow_hosts = %s (%s:%d) only in a TLS tunnel postern "
			    "terminates, where each request is judged (%s); this tunnel would be opaque",
			    hbuf, port, port_match->text, port_match->file, port_match->line,
			    port_match->inspect ? "TLS termination is not available" :
			    "add \"inspect\" to the rule, since CONNECT cannot be narrowed by method");
		else if (mode == CF_MODE_CONNECT)
			snprintf(d->detail, sizeof(d->detail),
			    "%s:%u is allowed only for paths under %s (%s:%d); CONNECT cannot be narrowed by path "
			    "(with \"inspect\" on the rule TLS is terminated and each request judged)",
			    hbuf, port, port_match->path ? port_match->path : "/", port_match->file, port_match->line);
		else
			snprintf(d->detail, sizeof(d->detail),
			    "%s:%u is allowed only for paths under %s (%s:%d) in session %s",
			    hbuf, port, port_match->path ? port_match->path : "/", port_match->file,
			    port_match->line, s->name);
		if (mode == CF_MODE_CONNECT)
			d->reason = CF_R_HOST_NOT_ALLOWED;
		return;
	}
	if (host_match != NULL) {
		d->reason = CF_R_PORT_NOT_ALLOWED;
		d->rule = host_match;
		snprintf(d->detail, sizeof(d->detail),
		    "port %u of %s is not allowed in session %s (allow_hosts = %s at %s:%d covers other ports)",
		    port, hbuf, s->name, host_match->text, host_match->file, host_match->line);
		return;
	}
	d->reason = CF_R_HOST_NOT_ALLOWED;
	/* The most frequent refusal: appended, not printf()'d. */
	bs_str_init(&b, d->detail, sizeof(d->detail));
	bs_str_add(&b, "no rule matches ");
	bs_str_add(&b, hbuf);
	bs_str_addn(&b, ":", 1);
	bs_str_uint(&b, port);
	bs_str_add(&b, " in session ");
	bs_str_add(&b, s->name);
}

/* Is SA (unmapped, AF_INET or AF_INET6) the unspecified address? */
static int
unspecified(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
	return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr);
}

static in_port_t
port_of(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)sa)->sin_port;
	return ((const struct sockaddr_in6 *)(const void *)sa)->sin6_port;
}

/*
 * Would a connection to B reach the proxy's listener bound to L, IPv4-mapped
 * forms unwrapped?  Besides the very address and port:
 *   - a connection to the unspecified address (0.0.0.0, ::) goes to the
 *     host itself (Linux dials loopback for it), so it reaches a listener
 *     on loopback or on the unspecified address of that family;
 *   - a listener on the unspecified address (0.0.0.0; [::], which the proxy
 *     binds dual-stack, takes IPv4 too) takes connections to every address
 *     of the host, which the config cannot list: every never-reachable
 *     address on its port counts (loopback, and the private addresses an
 *     interface of the host is likely to have).  A public address of the
 *     host is not caught; docs/threat-model.md says so.
 */
static int
reaches_listener(const struct sockaddr *l, const struct sockaddr *b)
{
	struct sockaddr_in tl, tb;
	int lany, bany;

	l = cf_sockaddr_unmap(l, &tl);
	b = cf_sockaddr_unmap(b, &tb);
	if ((l->sa_family != AF_INET && l->sa_family != AF_INET6) ||
	    (b->sa_family != AF_INET && b->sa_family != AF_INET6))
		return 0;
	if (port_of(l) != port_of(b))
		return 0;
	lany = unspecified(l);
	bany = unspecified(b);
	if (lany && (l->sa_family == b->sa_family || l->sa_family == AF_INET6) &&
	    (bany || cf_range_sockaddr(b) != NULL))
		return 1;
	if (l->sa_family != b->sa_family)
		return 0;
	if (bany)
		return bs_addr_is_loopback(l);
	if (l->sa_family == AF_INET) {
		const struct sockaddr_in *x = (const struct sockaddr_in *)(const void *)l;
		const struct sockaddr_in *y = (const struct sockaddr_in *)(const void *)b;
		return x->sin_addr.s_addr == y->sin_addr.s_addr;
	} else {
		const struct sockaddr_in6 *x = (const struct sockaddr_in6 *)(const void *)l;
		const struct sockaddr_in6 *y = (const struct sockaddr_in6 *)(const void *)b;
		return memcmp(&x->sin6_addr, &y->sin6_addr, 16) == 0;
	}
}

void
cf_decide_addr(const struct cf_config *c, const struct cf_session *s,
    const struct cf_decision *allowed, const struct sockaddr *sa, struct cf_decision *d)
{
	char abuf[INET6_ADDRSTRLEN];
	const char *range;
	struct bs_str b;
	uint16_t port = 0;
	size_t i, j;

	memset(d, 0, sizeof(*d));
	abuf[0] = '\0';
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)(const void *)sa;
		bs_ipv4_text(&sin->sin_addr, abuf);
		port = ntohs(sin->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)(const void *)sa;
		inet_ntop(AF_INET6, &sin6->sin6_addr, abuf, sizeof(abuf));
		port = ntohs(sin6->sin6_port);
	} else {
		d->reason = CF_R_PRIVATE_ADDRESS;
		snprintf(d->detail, sizeof(d->detail), "not an IP address");
		return;
	}

	/* The proxy must never be pointed at itself, under any spelling of
	 * its address: ::ffff:127.0.0.1 reaches a listener on 127.0.0.1.
	 * Every listener of the snapshot belongs to one of its sessions. */
	for (i = 0; c != NULL && i < cf_config_nsessions(c); i++) {
		const struct cf_session *ls = cf_config_session(c, i);
		for (j = 0; j < ls->nlisten; j++) {
			const struct cf_listen *l = &ls->listen[j];
			if (l->kind == CF_LISTEN_TCP &&
			    reaches_listener((const struct sockaddr *)&l->addr, sa)) {
				d->reason = CF_R_PRIVATE_ADDRESS;
				snprintf(d->detail, sizeof(d->detail),
				    "%s port %u is the proxy's own listener %s", abuf, port, l->text);
				return;
			}
		}
	}

	for (i = 0; i < s->ndeny; i++) {
		const struct cf_rule *r = s->deny[i];
		if (cf_rule_match_sockaddr(r, sa) &&
		    cf_rule_match_port(r, CF_MODE_CONNECT, port)) {
			d->reason = CF_R_DENIED_BY_RULE;
			d->rule = r;
			snprintf(d->detail, sizeof(d->detail),
			    "address %s is denied by deny_hosts = %s (%s:%d)", abuf, r->text, r->file, r->line);
			return;
		}
	}

	d->rule = allowed ? allowed->rule : NULL;
	range = cf_range_sockaddr(sa);
	if (range != NULL) {
		/* A request report mode relaxed has no rule; the host's own
		 * rule that would have refused it (another port, path or
		 * method) still says whether the host may be private. */
		const struct cf_rule *r = d->rule != NULL ? d->rule :
		    allowed != NULL ? allowed->would_rule : NULL;
		int named = r != NULL && (r->kind == CF_PAT_NET4 || r->kind == CF_PAT_NET6) &&
		    cf_rule_match_sockaddr(r, sa);
		if (r == NULL || !(r->private_ok || named)) {
			d->reason = CF_R_PRIVATE_ADDRESS;
			snprintf(d->detail, sizeof(d->detail),
			    "resolved to %s, in the never-reachable range %s; add the \"private\" flag to the rule to allow it",
			    abuf, range);
			return;
		}
	}
	d->allow = 1;
	d->reason = CF_R_ALLOWED;
	/* On every allowed connection: appended, not printf()'d. */
	bs_str_init(&b, d->detail, sizeof(d->detail));
	bs_str_add(&b, "address ");
	bs_str_add(&b, abuf);
	bs_str_add(&b, range ? " is allowed (private, by the rule's flag or address)" : " is allowed");
}

int
cf_decide_addrs(const struct cf_config *c, const struct cf_session *s,
    const struct cf_decision *allowed, const struct sockaddr_storage *addrs, size_t n,
    struct cf_decision *d, size_t *bad)
{
	size_t i;

	if (bad != NULL)
		*bad = 0;
	if (n == 0) {
		memset(d, 0, sizeof(*d));
		d->reason = CF_R_PRIVATE_ADDRESS;
		snprintf(d->detail, sizeof(d->detail), "no address");
		return 0;
	}
	for (i = 0; i < n; i++) {
		cf_decide_addr(c, s, allowed, (const struct sockaddr *)&addrs[i], d);
		if (!d->allow) {
			if (bad != NULL)
				*bad = i;
			return 0;
		}
	}
	return 1;
}

/* "HOST" or "HOST:PORT" (PORT not DFLT) into BUF of SIZE bytes, started
 * as B; HBUF is scratch for the host's text. */
static void
suggest_host(struct bs_str *b, char *buf, size_t size, const struct cf_host *h, char *hbuf,
    size_t hsize, uint16_t port, uint16_t dflt)
{
	bs_str_init(b, buf, size);
	cf_host_format(h, hbuf, hsize);
	bs_str_add(b, hbuf);
	if (port != dflt) {
		bs_str_addn(b, ":", 1);
		bs_str_uint(b, port);
	}
}

/*
 * The bytes a suggested path prefix keeps: RFC 3986 unreserved and "/@+=".
 * None of them ends an item of a list (','), a pattern (blanks), a line
 * (inih's '#' and ';'), a URL ("://"), a shell's '...' or makes a pattern
 * wider ('*'), and parse_path() takes each as itself.
 */
static int
suggest_path_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    c == '-' || c == '.' || c == '_' || c == '~' || c == '/' || c == '@' || c == '+' ||
	    c == '=';
}

/* What else an item postern writes holds: the host's LDH name, IPv4 or
 * [IPv6], ":PORT", and " private". */
static int
suggest_item_byte(unsigned char c)
{
	return suggest_path_byte(c) || c == ':' || c == '[' || c == ']' || c == ' ';
}

int
cf_suggest_check(const char *item, enum cf_mode mode, const struct cf_host *h, uint16_t port,
    const char *prefix, size_t plen, int private_ok)
{
	struct cf_rule r;
	const char *why, *p;
	size_t n = strlen(item);
	int ok;

	for (p = item; *p != '\0'; p++)
		if (!suggest_item_byte((unsigned char)*p))
			return 0;
	/* Read as cfk_add_rules() reads an allow_hosts value or --allow:
	 * the first item of the list must be the whole of it. */
	if (n == 0 || cf_rule_item_len(item) != n ||
	    cf_rule_parse(item, n, CF_RULE_ALLOW, &r, &why) != 0)
		return 0;
	ok = r.taken_as == NULL && r.methods == NULL && !r.inspect && !cf_rule_has_budget(&r) &&
	    (!r.port_given || r.port_lo == r.port_hi) &&
	    (private_ok < 0 || r.private_ok == (private_ok != 0));
	/* One host: never a wildcard, a domain or a network. */
	switch (r.kind) {
	case CF_PAT_EXACT:
		break;
	case CF_PAT_NET4:
		ok = ok && r.prefix == 32;
		break;
	case CF_PAT_NET6:
		ok = ok && r.prefix == 128;
		break;
	default:
		ok = 0;
		break;
	}
	if (h != NULL) {
		ok = ok && cf_rule_match_host(&r, h) && cf_rule_match_port(&r, mode, port);
		if (prefix == NULL)
			ok = ok && r.path == NULL;
		else
			ok = ok && r.path != NULL && strlen(r.path) == plen &&
			    memcmp(r.path, prefix, plen) == 0;
	}
	cf_rule_clear(&r);
	return ok;
}

/*
 * The path prefix to suggest for PATH (LEN bytes, starting with '/'): its
 * first segment, with the '/' after it, cut before the first byte
 * suggest_path_byte() does not keep, and before a dot segment that cut
 * would leave at its end.  Returns its length, 0 when there is none.
 */
static size_t
suggest_prefix(const char *path, size_t len)
{
	size_t n = 1, seg;

	if (len == 0 || path[0] != '/')
		return 0;
	while (n < len && path[n] != '/' && path[n] != '?')
		n++;
	if (n < len && path[n] == '/')
		n++;
	for (seg = 0; seg < n; seg++)
		if (!suggest_path_byte((unsigned char)path[seg]))
			break;
	n = seg;
	/* "/.." of "/..,x": the segment left is a dot segment, which no
	 * prefix may hold; cut back to its '/'. */
	for (seg = n; seg > 0 && path[seg - 1] != '/'; seg--)
		;
	if ((n - seg == 1 && path[seg] == '.') ||
	    (n - seg == 2 && path[seg] == '.' && path[seg + 1] == '.'))
		n = seg;
	return n;
}

char *
cf_suggest_pattern(const struct cf_session *s, enum cf_mode mode, const struct cf_host *h,
    uint16_t port, const char *path, size_t len, const struct cf_decision *d,
    char *buf, size_t size)
{
	char hbuf[CF_HOST_TEXT_MAX];
	uint16_t dflt = mode == CF_MODE_HTTP ? 80 : 443;
	/* A rule that needed "private" to reach its address: the one that
	 * widens it to another port or path needs it too. */
	const char *priv = d->rule != NULL && d->rule->private_ok ? " private" : "";
	const char *prefix = NULL;
	size_t plen = 0;
	int private_ok = priv[0] != '\0';
	struct bs_str b;

	(void)s;
	buf[0] = '\0';
	/* Appended, not printf()'d: every refusal asks for its pattern
	 * (the words, the learn summary). */
	switch (d->reason) {
	case CF_R_HOST_NOT_ALLOWED:
	case CF_R_PORT_NOT_ALLOWED:
		suggest_host(&b, buf, size, h, hbuf, sizeof(hbuf), port, dflt);
		bs_str_add(&b, priv);
		break;
	case CF_R_PATH_NOT_ALLOWED:
		/* Suggest the request's first path segment as the prefix. */
		if (path == NULL || len == 0) {
			path = "/";
			len = 1;
		}
		/* No prefix admits a path with a dot segment, ';' or a
		 * non-unreserved escape, and a path the rule already admits
		 * was refused for a header: no prefix to suggest. */
		if (!cf_rule_match_path(NULL, path, len) ||
		    (d->rule != NULL && d->rule->path != NULL && cf_rule_match_path(d->rule, path, len)))
			break;
		/* "%.*s": up to a NUL, as printf() stops there. */
		plen = suggest_prefix(path, strnlen(path, len));
		if (plen == 0)
			break;
		prefix = path;
		/* An address's "/8" would read as a prefix length: its port,
		 * always written, ends the host before the path. */
		suggest_host(&b, buf, size, h, hbuf, sizeof(hbuf), port,
		    h->kind == CF_HOST_NAME ? dflt : 0);
		bs_str_addn(&b, path, plen);
		bs_str_add(&b, priv);
		break;
	case CF_R_PRIVATE_ADDRESS:
		/* No allowing rule behind it: the proxy's own listener, or not
		 * IP at all; "private" would change nothing. */
		if (d->rule != NULL) {
			suggest_host(&b, buf, size, h, hbuf, sizeof(hbuf), port, dflt);
			bs_str_add(&b, " private");
			private_ok = 1;
		}
		break;
	default:
		break;
	}
	/* What is offered must read back as the one rule meant, whatever
	 * bytes the request held; anything else is offered as nothing. */
	if (buf[0] != '\0' && !cf_suggest_check(buf, mode, h, port, prefix, plen, private_ok))
		buf[0] = '\0';
	return buf;
}

char *
cf_suggest(const struct cf_session *s, enum cf_mode mode, const struct cf_host *h,
    uint16_t port, const char *path, size_t len, const struct cf_decision *d,
    char *buf, size_t size)
{
	char section[96], pat[CF_HOST_TEXT_MAX + 600];

	buf[0] = '\0';
	struct bs_str b;

	cf_suggest_pattern(s, mode, h, port, path, len, d, pat, sizeof(pat));
	bs_str_init(&b, section, sizeof(section));
	if (s->is_default) {
		bs_str_add(&b, "[defaults]");
	} else {
		bs_str_add(&b, "[session ");
		bs_str_add(&b, s->name);
		bs_str_addn(&b, "]", 1);
	}

	switch (d->reason) {
	case CF_R_HOST_NOT_ALLOWED:
	case CF_R_PORT_NOT_ALLOWED:
	case CF_R_PATH_NOT_ALLOWED:
		if (pat[0] == '\0')
			break;
		bs_str_init(&b, buf, size);
		if (s->cli_hints) {
			bs_str_add(&b, "pass --allow '");
			bs_str_add(&b, pat);
			bs_str_addn(&b, "'", 1);
		} else {
			bs_str_add(&b, "add to ");
			bs_str_add(&b, section);
			bs_str_add(&b, ": allow_hosts = ");
			bs_str_add(&b, pat);
		}
		break;
	case CF_R_PRIVATE_ADDRESS:
		if (pat[0] == '\0')
			break;
		if (s->cli_hints)
			snprintf(buf, size, "if this private address is intended, pass --allow '%s'", pat);
		else
			snprintf(buf, size, "if this private address is intended, add to %s: allow_hosts = %s",
			    section, pat);
		break;
	case CF_R_METHOD_NOT_ALLOWED:
		if (d->rule != NULL && d->rule->methods != NULL)
			snprintf(buf, size, "add the method to methods= of allow_hosts = %s (%s:%d), which "
			    "admits %s only", d->rule->text, d->rule->file, d->rule->line, d->rule->methods);
		break;
	case CF_R_BUDGET_EXCEEDED:
		/* Over a budget the rule allows the request: only a larger
		 * budget (or waiting) lets it through. */
		if (d->rule != NULL && cf_rule_has_budget(d->rule)) {
			char bud[128];
			snprintf(buf, size, "raise the budget of allow_hosts = %s (%s:%d), %s per session",
			    d->rule->text, d->rule->file, d->rule->line, cf_rule_budget_text(d->rule, bud, sizeof(bud)));
		}
		break;
	case CF_R_DENIED_BY_RULE:
		if (d->rule != NULL)
			snprintf(buf, size, "denied on purpose by deny_hosts = %s (%s:%d); deny wins over allow",
			    d->rule->text, d->rule->file, d->rule->line);
		break;
	default:
		break;
	}
	return buf;
}
