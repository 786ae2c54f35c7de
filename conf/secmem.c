/*
 * conf/secmem.c: values in the secure heap while it leaves OpenSSL's keys
 * room (see secmem.h).
 */
#include "config.h"

#include <openssl/crypto.h>
#include <openssl/err.h>

#include "conf/secmem.h"

/* What N bytes take in the arena: it hands out powers of two, 32 at least
 * (px_engine_harden()'s minimum). */
static size_t
arena_size(size_t n)
{
	size_t s = 32;

	while (s < n && s <= CF_SECMEM_ARENA)
		s *= 2;
	return s;
}

void *
cf_secmem_alloc(size_t n)
{
	void *p = NULL;

	/* CRYPTO_secure_used() counts OpenSSL's keys too: values stop at
	 * half, whoever holds the rest. */
	if (CRYPTO_secure_malloc_initialized() &&
	    CRYPTO_secure_used() + arena_size(n) <= CF_SECMEM_ARENA / 2) {
		ERR_set_mark();
		p = OPENSSL_secure_zalloc(n);
		ERR_pop_to_mark();
	}
	return p != NULL ? p : OPENSSL_zalloc(n);
}
