/*
 * conf/grantfile.h: the grants_file of [proxy], the runtime
 * grants an admin saved (postern-proxy ctl grants --save), read as a
 * drop-in in the config's own syntax:
 *
 *     [session NAME]
 *     allow_hosts = HOST:PORT, ...
 *     deny_hosts = HOST:PORT, ...
 *
 * NAME is a session of the config the file goes with ("default" for the
 * default session).  A grant is one host, in normal form, and one port:
 * no pattern, no flag.  Lines are read by the config's own reader (inih
 * through conf/reader.c), so a malformed line is refused the same way,
 * with FILE:LINE.
 */
#ifndef POSTERN_CONF_GRANTFILE_H
#define POSTERN_CONF_GRANTFILE_H

#include <stddef.h>
#include <stdint.h>

#include "conf/config.h"
#include "conf/host.h"

/* One grant of the file. */
struct cf_grant_entry {
	char session[72];
	char host[CF_HOST_TEXT_MAX];   /* cf_host_format()'s normal form */
	uint16_t port;
	int deny;                      /* deny_hosts (else allow_hosts) */
	int line;
};

/*
 * Parse LEN bytes of TEXT, the grants file named FILE in messages, against
 * the sessions of C.  On success returns 0 and sets *OUT (malloc'd, the
 * caller frees it; NULL when empty) and *N.  On any error returns -EINVAL
 * with every error, as "FILE:LINE: why", appended to DIAG (may be NULL),
 * and *OUT NULL; -ENOMEM when out of memory.
 */
int cf_grants_parse(const char *file, const char *text, size_t len, const struct cf_config *c,
    struct cf_diag *diag, struct cf_grant_entry **out, size_t *n);

/*
 * The same from the file PATH.  A file that does not exist holds no grant
 * (0, *N 0: nothing was saved yet); one that cannot be read is an error
 * ("PATH: why" in DIAG, -errno).
 */
int cf_grants_load(const char *path, const struct cf_config *c, struct cf_diag *diag,
    struct cf_grant_entry **out, size_t *n);

#endif
