/*
 * conf/parent.h: a session's parent proxy (upstream_proxy and its keys):
 * the keys' values as read, and what the snapshot keeps of them.
 */
#ifndef POSTERN_CONF_PARENT_H
#define POSTERN_CONF_PARENT_H

#include <stddef.h>
#include <stdint.h>

#include "conf/host.h"

struct cf_build;
struct cf_session;

/* The keys, in the order of struct cf_sess_build's up_val[] and up_line[]. */
enum cf_parent_key {
	CFP_PROXY = 0,   /* upstream_proxy = http://HOST:PORT */
	CFP_AUTH,        /* upstream_proxy_auth = env:VAR | file:PATH */
	CFP_DIRECT,      /* upstream_proxy_direct = HOST, *.DOMAIN, ... */
	CFP_NAMES,       /* upstream_proxy_names = yes | no */
	CFP_NKEYS
};

/* A parent proxy, owned by its session in the snapshot. */
struct cf_parent {
	struct cf_host host;        /* a name or an address */
	uint16_t port;
	char text[CF_HOST_TEXT_MAX + 16]; /* "http://HOST:PORT", for messages */
	/* "Basic BASE64" for Proxy-Authorization, or NULL: held in the
	 * snapshot only, cleansed when it is freed. */
	char *auth;
	size_t auth_len;
	int names;                  /* ask the parent for names, not addresses */
	struct cf_host *direct;     /* hosts that go direct; a name may be "*.DOMAIN" */
	size_t ndirect;
	int line;                   /* of upstream_proxy */
};

/*
 * Check VALUE of key KEY (enum cf_parent_key) as the key table reads it:
 * 0, or -EINVAL with *WHY.  Nothing is read from the environment or a
 * file here (that is cfp_attach()'s).
 */
int cfp_check(int key, const char *value, const char **why);

/*
 * Give each of the N SESSIONS (0: [defaults], I: B's session I - 1) its
 * parent: its own keys, or [defaults]' for the keys it does not set.  An
 * error ("FILE:LINE: ...") goes to B.  Returns 0 or -ENOMEM.
 */
int cfp_attach(struct cf_build *b, struct cf_session *sessions, size_t n);

/* Free P (NULL is fine), cleansing its credential. */
void cfp_free(struct cf_parent *p);

/*
 * The parent a request of session S to HOST goes through, or NULL: none
 * is set, or HOST is on upstream_proxy_direct.
 */
const struct cf_parent *cf_session_parent(const struct cf_session *s, const struct cf_host *host);

#endif
