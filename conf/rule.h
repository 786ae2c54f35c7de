/*
 * conf/rule.h: host patterns (postern.ini(5)) and the decision
 * made from them.
 */
#ifndef POSTERN_CONF_RULE_H
#define POSTERN_CONF_RULE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "conf/host.h"

enum cf_rule_type {
	CF_RULE_ALLOW = 1,
	CF_RULE_DENY,
};

enum cf_pat_kind {
	CF_PAT_EXACT = 1, /* example.com */
	CF_PAT_WILDCARD,  /* *.example.com: strictly below, any depth */
	CF_PAT_DOMAIN,    /* .example.com: the name and anything below */
	CF_PAT_NET4,      /* 10.0.0.5, 10.0.0.0/8 */
	CF_PAT_NET6,      /* [fd00::1], [fd00::]/8 */
};

/* What a request asks for: a tunnel (CONNECT) or one plain-HTTP request. */
enum cf_mode {
	CF_MODE_CONNECT = 1,
	CF_MODE_HTTP,
	/* A request inside a TLS tunnel the proxy terminates:
	 * port 443 by default as for CONNECT, and path and method rules
	 * apply as for plain HTTP; with no path, the CONNECT that opens
	 * such a tunnel, which a path or method rule admits (each request
	 * inside is judged by it). */
	CF_MODE_TLS,
};

/*
 * One rule, immutable once its config is built.  Public so that --check,
 * --explain, the audit log and the metrics can show it; nobody but conf/
 * writes it.
 */
struct cf_rule {
	enum cf_rule_type type;
	enum cf_pat_kind kind;
	/* EXACT, WILDCARD, DOMAIN: the base name in normal form. */
	char name[CF_HOST_MAX];
	/* NET4, NET6: network address (host bits cleared) and prefix length. */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} net;
	int prefix;
	/* Ports: port_given is zero when the rule names none (an allow rule
	 * then means 443 for CONNECT and 80 for plain HTTP; a deny rule means
	 * every port). */
	int port_given;
	uint16_t port_lo, port_hi; /* "*" is 1-65535 */
	char *path;                /* plain-HTTP path prefix, or NULL */
	/* The "methods=GET,HEAD" flag: the RFC 9110 §9 method tokens it
	 * admits, comma-separated as written, or NULL for every method. */
	char *methods;
	int private_ok;            /* the "private" flag */
	int inspect;               /* the "inspect" flag: TLS is terminated */
	/* Budgets, zero when not given: "up=SIZE/WINDOW" (bytes
	 * from the client to the upstream per UP_WINDOW seconds), "rps=N"
	 * (requests and new tunnels per second, burst N), "conns=N"
	 * (connections to the rule's hosts at once).  Counted by
	 * proxy/policy/budget per session and rule text, outside the snapshot. */
	uint64_t up_max;
	uint32_t up_window;
	uint32_t rps;
	uint32_t conns;
	char *text;                /* the item as written, for people */
	char *taken_as;            /* a URL item: the pattern it stood for, else NULL */
	const char *file;          /* where it was written; owned by the config */
	int line;
	const char *section;       /* "defaults", or the session's name */
	unsigned id;               /* unique within one config, for counters */
};

/*
 * Parse one allow_hosts or deny_hosts item, "PATTERN [FLAG]..." of LEN bytes
 * at S, into OUT (which the caller then owns: release with cf_rule_clear()).
 * Returns 0, or -EINVAL with *WHY set to a static phrase.  file, line,
 * section and id are left for the caller to fill in.  A pasted URL
 * (https://HOST[:PORT][/], http://HOST[:PORT][/PATH]) stands for
 * HOST:PORT[/PATH], the scheme giving an allow rule the port it does not
 * name (a deny rule without one keeps denying every port), and
 * out->taken_as is that pattern; an https:// URL with a path is refused
 * unless the rule says "inspect".  The flags, allow rules only: "private";
 * "inspect" (an exact host name on one port, never an address, wildcard,
 * domain or http:// URL: TLS to it is terminated so that each request is
 * judged); "methods=M[,M]..." (method tokens of RFC 9110 §9.1 of at
 * most CF_METHOD_MAX bytes, upper-case letters, digits, '-' and '_' as
 * every registered method is, not CONNECT, each once); the budgets
 * "up=SIZE/WINDOW" (SIZE digits with an optional k, M or G, powers of
 * 1024, up to CF_BUDGET_UP_MAX bytes; WINDOW an optional count and s, m,
 * h or d, up to CF_BUDGET_WINDOW_MAX seconds: up=1M/h, up=64k/10m),
 * "rps=N" and "conns=N" (1 to CF_BUDGET_N_MAX), each once, never zero.
 */
#define CF_METHOD_MAX 20
#define CF_BUDGET_UP_MAX (UINT64_C(1) << 50)      /* 1024 TiB */
#define CF_BUDGET_WINDOW_MAX (366u * 86400u)      /* a year */
#define CF_BUDGET_N_MAX 1000000u

int cf_rule_parse(const char *s, size_t len, enum cf_rule_type type,
    struct cf_rule *out, const char **why);

/*
 * The length of the first item of the comma-separated list at S (up to the
 * first comma or the end), where a comma inside a "methods=" flag directly
 * followed by a method (methods=GET,HEAD) continues the flag, not the list.
 */
size_t cf_rule_item_len(const char *s);

/* Nonzero when R carries any budget (up=, rps=, conns=). */
int cf_rule_has_budget(const struct cf_rule *r);

/*
 * R's budgets for people, "up 1M per 1h, 5 requests/s, 4 at once", into
 * BUF (SIZE bytes); an empty string when it has none.  Returns BUF.
 */
char *cf_rule_budget_text(const struct cf_rule *r, char *buf, size_t size);

/* Free what cf_rule_parse() allocated in R; R itself is not freed. */
void cf_rule_clear(struct cf_rule *r);

/* Nonzero when the rule's pattern covers host H (ports not considered). */
int cf_rule_match_host(const struct cf_rule *r, const struct cf_host *h);

/* Nonzero when the rule's ports cover PORT for a request in MODE. */
int cf_rule_match_port(const struct cf_rule *r, enum cf_mode mode, uint16_t port);

/* Nonzero when an address rule (NET4/NET6) contains the address SA. */
int cf_rule_match_sockaddr(const struct cf_rule *r, const struct sockaddr *sa);

/*
 * Nonzero when the path prefix of an allow rule admits PATH (LEN bytes, the
 * request target's path and query; only the path, up to the first '?' or
 * '#', is judged).  A path containing a dot segment, a backslash, a ';'
 * (Tomcat and Spring path parameters: "/hooks/..;/admin"), or any %-escape
 * other than of an RFC 3986 unreserved character other than '.' (so no
 * %2e, %2f, %00, %25, overlong or full-width UTF-8) never matches a prefix
 * rule: some upstream might resolve it to somewhere outside the prefix.
 */
int cf_rule_match_path(const struct cf_rule *r, const char *path, size_t len);

/*
 * Nonzero when the methods flag of an allow rule admits METHOD (a
 * NUL-terminated request method; compared case-sensitively, RFC 9110
 * §9.1); a rule without the flag admits every method.
 */
int cf_rule_match_method(const struct cf_rule *r, const char *method);

/*
 * Nonzero when two rules overlap so that DENY takes away everything ALLOW
 * grants (used for --check's "shadowed by a deny" warning).
 */
int cf_rule_shadows(const struct cf_rule *deny, const struct cf_rule *allow);

/* "FILE:LINE", where R was written, into BUF of SIZE bytes (cut to fit,
 * as snprintf() would); returns BUF.  Without printf(): the audit line
 * and the metrics write it on every decision a rule made. */
char *cf_rule_at(const struct cf_rule *r, char *buf, size_t size);

#endif
