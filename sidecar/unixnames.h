/*
 * sidecar/unixnames.h: the pathnames of the UNIX sockets bound in a network
 * namespace, read from the kernel's /proc/net/unix table.  `run` covers
 * each of them in the command's mount namespace.  The table is the
 * kernel's text, but the names in it are chosen by whoever bound each
 * socket (any local user), so it is parsed as hostile bytes.
 */
#ifndef POSTERN_SIDECAR_UNIXNAMES_H
#define POSTERN_SIDECAR_UNIXNAMES_H

#include <stddef.h>

/*
 * Called once per absolute pathname found, with PATH NUL-terminated (a
 * copy owned by the parser, valid during the call only) and LEN its length.
 * A nonzero return stops the parse and is returned by the parser.
 */
typedef int (*sc_unixnames_fn)(const char *path, size_t len, void *arg);

/*
 * Parse LEN bytes of /proc/net/unix text at BUF: a header line, then one
 * line per socket, "Num: RefCount Protocol Flags Type St Inode [Path]".
 * FN is called for each line whose Path starts with '/' (abstract names,
 * "@...", and relative ones are skipped: the first are per network
 * namespace, the second cannot be resolved by anyone but their binder).
 * Lines that do not have the seven fields, and paths longer than a
 * sockaddr_un holds, are skipped.  A name holding a newline is split by
 * the kernel's format itself and cannot be recognised (see the LIMITS of
 * postern-sidecar(8)).  Returns 0, or the first nonzero value FN returned.
 */
int sc_unixnames_parse(const char *buf, size_t len, sc_unixnames_fn fn, void *arg);

/*
 * Read the table at PATH (such as "/proc/self/net/unix") and parse it as
 * sc_unixnames_parse() does.  Returns 0, FN's nonzero value, or a negative
 * errno when the file cannot be read.
 */
int sc_unixnames_read(const char *path, sc_unixnames_fn fn, void *arg);

#endif
