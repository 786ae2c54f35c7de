/*
 * proxy/policy/learn.h: the learn summary: per session, every request
 * the allowlist refused, or in report mode would have refused, gathered
 * under the allow_hosts item that would allow it (cf_suggest_pattern(),
 * the very item the refusal's hint offers), with how many requests it
 * covers and the first one seen.  It renders as a ready config block
 * (postern-sidecar run --learn, postern-proxy ctl learn, GET /learn).
 *
 * A host whose address was refused as never-reachable learns the item
 * with "private" and a comment naming the address, so that the block fed
 * back allows what it says.  Plain HTTP learns the host (port 80), not a
 * path prefix: the rule an admin reads as "this host", with the first path
 * in its comment; a host whose rule already narrows it by path learns the
 * prefix cf_suggest() offers.  Each item is parsed back as its line will
 * be written (cf_suggest_check()); one that is not exactly one rule for
 * the refused host and port, whose path prefix the request's path starts
 * with, is left out and counted, whatever bytes the client sent.
 *
 * Bounded: a session keeps at most PX_LEARN_MAX items, each short enough
 * for one config line, at most PX_LEARN_SESSIONS sessions are learned
 * from, and a summary says how many requests were left out.  Only the event loop's thread touches
 * it; no locking.
 */
#ifndef POSTERN_PROXY_LEARN_H
#define POSTERN_PROXY_LEARN_H

#include <stddef.h>
#include <stdint.h>

#include "conf/config.h"

/* Items kept per session, and sessions kept. */
#define PX_LEARN_MAX 256
#define PX_LEARN_SESSIONS 64

struct px_learn;

/* A new, empty summary, or NULL with errno ENOMEM.  px_learn_free(NULL)
 * does nothing. */
struct px_learn *px_learn_new(void);
void px_learn_free(struct px_learn *l);

/*
 * Learn one request of session S (named NAME in the audit): MODE, host H,
 * PORT, METHOD and PATH (NUL-terminated; "" or NULL for a tunnel), which
 * the allowlist refused (or would have) with REASON by RULE (NULL when no
 * rule names the host): host_not_allowed, port_not_allowed,
 * path_not_allowed, or private_address for an address refused as
 * never-reachable.  ADDR, when not NULL, is the address the name answered
 * that was refused as never-reachable (text): the item then needs
 * "private".  Any other reason, or one no allow_hosts item fixes, is not
 * learned.  Strings are copied; L may be NULL.  Never fails: what cannot
 * be kept is counted as left out.
 */
void px_learn_add(struct px_learn *l, const struct cf_session *s, const char *name,
    enum cf_mode mode, const struct cf_host *h, uint16_t port, const char *method,
    const char *path, enum cf_reason reason, const struct cf_rule *rule, const char *addr);

/* Nonzero when L has learned anything of session NAME. */
int px_learn_known(const struct px_learn *l, const char *name);

/*
 * The block of session NAME as text (malloc'd, NUL-terminated; the caller
 * frees it), or NULL with errno ENOMEM: a comment line saying how many
 * requests it covers, "[defaults]" (IS_DEFAULT) or "[session NAME]", one
 * "allow_hosts = ITEM" line per item, each after a comment with its count
 * and first request (and, for a private one, the address and why), every
 * line short enough for the config reader, then the same items as --allow
 * flags on comment lines.  A session with nothing learned gets a comment
 * saying so and its section header.
 */
char *px_learn_render(const struct px_learn *l, const char *name, int is_default);

/* The blocks of every session learned from, one after the other ("" when
 * none), malloc'd, or NULL with errno ENOMEM. */
char *px_learn_render_all(const struct px_learn *l);

#endif
