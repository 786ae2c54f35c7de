/*
 * conf/secmem.h: where the values of secrets are kept.
 *
 * OpenSSL's secure heap holds them (locked in memory, left out of core
 * files).  It also holds OpenSSL's own private keys: a session CA's, and
 * the ephemeral key of every TLS handshake in flight.  OpenSSL has no way
 * out when the arena is full, so a key it makes then fails; values do:
 * they take the arena only while at most half of it is in use, and the
 * plain heap after that (the process dumps no core either way).
 */
#ifndef POSTERN_CONF_SECMEM_H
#define POSTERN_CONF_SECMEM_H

#include <stddef.h>

/* The secure heap's size, set up by px_engine_harden(): room for 32
 * values of the longest kind (4097 bytes, rounded up to 8 KiB) in the
 * half values may take, and as much again for OpenSSL's keys. */
#define CF_SECMEM_ARENA (512 * 1024)

/*
 * N zeroed bytes for a value: in the secure heap while it stays at most
 * half full, else on the plain heap; NULL when neither has room.  A full
 * arena's error is not left on OpenSSL's error queue.  Free with
 * OPENSSL_secure_clear_free(), which wipes and frees either kind.
 */
void *cf_secmem_alloc(size_t n);

#endif
