/*
 * conf/etchosts.h: whether /etc/hosts names a host, only to explain a
 * refusal.  The proxy never takes an address from /etc/hosts (a file the
 * sandbox's image or a co-tenant may shape; see [hosts] in postern.ini(5)
 * for names an admin pins on purpose), but a name that ends in dns_failure
 * while /etc/hosts lists it deserves a sentence saying why.
 */
#ifndef POSTERN_CONF_ETCHOSTS_H
#define POSTERN_CONF_ETCHOSTS_H

#include <stddef.h>

/*
 * Nonzero when some line of the hosts(5) text TEXT (LEN bytes, any bytes)
 * lists NAME (normal form: lower case, no trailing dot) as a name after its
 * address; compared without case and with one trailing dot removed.  A '#'
 * starts a comment.  Reads nothing beyond TEXT + LEN.
 */
int cf_etchosts_lists(const char *text, size_t len, const char *name);

/*
 * The same for the file PATH (its first 64 KiB); 0 when it cannot be read.
 * A small blocking read, made only when a lookup has already failed.
 */
int cf_etchosts_file_lists(const char *path, const char *name);

#endif
