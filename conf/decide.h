/*
 * conf/decide.h: the decisions on one request, made against one session of
 * a config snapshot (conf/config.h): the host, port and path before any
 * lookup (cf_decide), then every address the name resolved to
 * (cf_decide_addr, cf_decide_addrs), and the config line that would have
 * allowed what was refused (cf_suggest).  They read the snapshot and never
 * change it; they allocate nothing and never fail.
 *
 * conf/config.h includes this header, so a caller needs only that one.
 */
#ifndef POSTERN_CONF_DECIDE_H
#define POSTERN_CONF_DECIDE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "conf/host.h"
#include "conf/rule.h"

struct cf_config;
struct cf_session;

/* Stable machine-readable reason codes (X-Postern-Reason). */
enum cf_reason {
	CF_R_ALLOWED = 0,
	CF_R_HOST_NOT_ALLOWED,
	CF_R_PORT_NOT_ALLOWED,
	CF_R_PATH_NOT_ALLOWED,
	CF_R_DENIED_BY_RULE,
	CF_R_PRIVATE_ADDRESS,
	CF_R_BAD_REQUEST,
	CF_R_HOST_MISMATCH,
	CF_R_DNS_FAILURE,
	CF_R_CONNECT_FAILURE,
	CF_R_TIMEOUT,
	CF_R_SNI_MISMATCH,
	CF_R_UNAVAILABLE,
	CF_R_SESSION_CONNECTION_LIMIT,
	CF_R_UID_CONNECTION_LIMIT,
	CF_R_SESSION_REMOVED,        /* the listener's session left the config */
	CF_R_BAD_UPSTREAM_RESPONSE,  /* upstream closed, failed or sent a bad head */
	CF_R_MISDIRECTED_REQUEST,    /* in a terminated tunnel, Host names another host */
	CF_R_SECRET_MISDIRECTED,     /* a placeholder sent where its secret is not bound */
	CF_R_UPSTREAM_TLS_FAILED,    /* the upstream of a terminated tunnel failed TLS */
	CF_R_METHOD_NOT_ALLOWED,     /* the host's rules admit other methods only */
	CF_R_BUDGET_EXCEEDED,        /* the allowing rule's up=, rps= or conns= is spent */
	CF_R_ASK_TIMEOUT,            /* mode = ask: no admin answered in ask_timeout */
	CF_R_DENIED_BY_ADMIN,        /* an admin's answer or runtime grant denies it */
	CF_R_SECRET_REFLECTED,       /* a response carried a secret's value back */
	CF_R_PROXY_AUTH_REQUIRED,    /* auth=token listener: no credential (407) */
	CF_R_PROXY_AUTH_FAILED,      /* auth=token listener: a wrong one (407) */
	CF_R_PROXY_AUTH_BLOCKED,     /* auth=token listener: too many wrong ones (429) */
	CF_R_DECIDER_DENIED,         /* the session's decider answered deny */
	CF_R_DECIDER_TIMEOUT,        /* the decider did not answer in decider_timeout */
	CF_R_DECIDER_BAD_ANSWER,     /* the decider's answer was not one */
	CF_R_DECIDER_DOWN,           /* the decider could not be reached, or closed */
	CF_R_PARENT_REFUSED,         /* the parent proxy refused the CONNECT */
	CF_R_PARENT_UNREACHABLE,     /* the parent proxy could not be reached */
	CF_R_SECRET_SIGNATURE,       /* an aws-sigv4 request that cannot be re-signed */
	CF_R_CREDENTIAL_UNAVAILABLE, /* a minted secret's token could not be had */
	CF_R_REPOSITORY_NOT_ALLOWED, /* a GitHub repository outside the session's list */
	CF_R_NREASONS /* not a reason: how many there are */
};

/* "allowed", "host_not_allowed", ... */
const char *cf_reason_code(enum cf_reason r);

struct cf_decision {
	int allow;
	enum cf_reason reason;
	const struct cf_rule *rule;   /* the rule that decided, or NULL */
	char detail[512];             /* one sentence for people */
	/* Report mode (S->report): the allowlist refused the request with
	 * WOULD (host, port, path or method not allowed) by WOULD_RULE (or
	 * NULL), yet ALLOW is 1, REASON CF_R_ALLOWED and RULE NULL (no rule
	 * allowed it: its address must still pass cf_decide_addr() on its
	 * own).  CF_R_ALLOWED (0) when the request is not relaxed. */
	enum cf_reason would;
	const struct cf_rule *would_rule;
};

/*
 * Decide a request in session S before any lookup: MODE, host H in normal
 * form, PORT, and for plain HTTP (or a request inside a terminated tunnel)
 * the PATH (LEN bytes) and METHOD (NUL-terminated); both NULL for CONNECT
 * and for the CONNECT of a terminated tunnel (CF_MODE_TLS), which a rule
 * narrowed by path or method admits.  A METHOD of NULL in CF_MODE_HTTP
 * matches no rule narrowed by method.  Deny rules win over allow rules;
 * any allow rule that admits the request admits it.  In a session in
 * report mode (S->report) a request the allow rules would refuse is allowed
 * with D->would set (see struct cf_decision); deny rules are never relaxed.
 * Fills D; never fails.
 */
void cf_decide(const struct cf_session *s, enum cf_mode mode, const struct cf_host *h,
    uint16_t port, const char *path, size_t len, const char *method, struct cf_decision *d);

/*
 * Decide one resolved (or literal) address SA for a request that cf_decide()
 * allowed with ALLOWED: refused when it is one of the proxy's own TCP
 * listeners in C, inside a deny rule's address range, or never-reachable
 * (unless the allowing rule says "private" or names the range itself; for
 * a request report mode relaxed, the rule that would have refused it, which
 * names the same host, or none).  Fills D.
 */
void cf_decide_addr(const struct cf_config *c, const struct cf_session *s,
    const struct cf_decision *allowed, const struct sockaddr *sa, struct cf_decision *d);

/*
 * Decide every address of ADDRS[0..N) (ports set: the request's) as
 * cf_decide_addr() does one: a host is refused when any one of its
 * addresses is, however many it has, so the caller must pass all of them,
 * not only those it will dial.  Returns 1 when every one is allowed (D then
 * holds the last one's decision), or 0 with D the decision on the first one
 * refused and *BAD (when not NULL) its index; N == 0 is refused ("no
 * address"), with *BAD 0.
 */
int cf_decide_addrs(const struct cf_config *c, const struct cf_session *s,
    const struct cf_decision *allowed, const struct sockaddr_storage *addrs, size_t n,
    struct cf_decision *d, size_t *bad);

/*
 * Write into BUF (SIZE bytes) the config line that would allow a request
 * refused with D (for host_not_allowed, port_not_allowed, path_not_allowed,
 * private_address), what to remove (denied_by_rule) or which rule's
 * methods= to extend (method_not_allowed), naming the section
 * of session S, or with S->cli_hints the "--allow 'PATTERN'" to pass.  The
 * pattern keeps the "private" flag of the rule D names, without which the
 * new rule would be refused at the address.  Returns BUF; an empty string
 * when no config change helps.
 */
char *cf_suggest(const struct cf_session *s, enum cf_mode mode, const struct cf_host *h,
    uint16_t port, const char *path, size_t len, const struct cf_decision *d,
    char *buf, size_t size);

/*
 * The allow_hosts item alone that cf_suggest() would offer for D (the
 * "PATTERN" of its "--allow 'PATTERN'"), into BUF (SIZE bytes): for
 * host_not_allowed, port_not_allowed, path_not_allowed, and for
 * private_address when D names the allowing rule ("HOST[:PORT] private").
 * A path prefix is the request's first segment (with its '/'), cut before
 * the first byte other than a letter, a digit or one of "-._~/@+="; an
 * address's port is always written before a path.  Every item passes
 * cf_suggest_check() for H, PORT and the prefix meant, whatever bytes PATH
 * holds.  Returns BUF; an empty string when no allow_hosts item helps (a
 * deny rule, a method, an address with no rule behind it, a path with no
 * prefix to offer).  postern-proxy's learn summary (proxy/policy/learn.h) writes
 * these very items.
 */
char *cf_suggest_pattern(const struct cf_session *s, enum cf_mode mode, const struct cf_host *h,
    uint16_t port, const char *path, size_t len, const struct cf_decision *d,
    char *buf, size_t size);

/*
 * Nonzero when ITEM (NUL-terminated), read as the config reader reads an
 * allow_hosts value and run reads --allow (the first item of a list, then
 * cf_rule_parse()), is exactly one allow rule: its whole text one item,
 * only bytes a suggestion writes (cf_suggest_pattern()), no URL and no
 * flag but "private" (PRIVATE_OK 1: it has it, 0: it has not, -1: either),
 * one exact host or single address on one port (or none).  With H not
 * NULL it must also be for H itself on PORT in MODE, with the path prefix
 * PREFIX (PLEN bytes), or none when PREFIX is NULL.  What postern suggests
 * or writes to allow a request passes this first.
 */
int cf_suggest_check(const char *item, enum cf_mode mode, const struct cf_host *h, uint16_t port,
    const char *prefix, size_t plen, int private_ok);

#endif
