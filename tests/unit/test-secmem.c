/*
 * tests/unit/test-secmem.c: values leave OpenSSL's keys room in the secure
 * heap (conf/secmem.c).  The heap is set up as the proxy does it; values
 * of the longest kind, twice what would fill it, take at most half and go
 * on the plain heap after that; then a session CA and many handshake-sized
 * keys are still made; freeing every value gives the heap back.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "conf/secmem.h"
#include "proxy/engine.h"
#include "proxy/tls/ca.h"
#include "tests/unit/tap.h"

#define VALUE 4097   /* the longest value a secret may have, and its NUL */
#define NVALUES (2 * CF_SECMEM_ARENA / 8192)
#define NKEYS 400    /* P-256 keys held at once, as handshakes in flight */

int
main(void)
{
	static void *v[NVALUES];
	static EVP_PKEY *k[NKEYS];
	const char *hosts[] = { "api.example.com" };
	size_t i, base, insecure = 0, bad = 0, made = 0;
	struct px_ca *ca;
	char err[256];

	px_engine_harden();
	if (!tap_ok(CRYPTO_secure_malloc_initialized(), "the secure heap is set up")) {
		tap_diag("CRYPTO_secure_malloc_init() failed here; nothing more to check");
		return tap_done();
	}
	/* OpenSSL's random generators keep their state there from their
	 * first use on: one CA made and freed first. */
	px_ca_free(px_ca_new("first", hosts, 1, NULL, err, sizeof(err)));
	base = CRYPTO_secure_used();
	for (i = 0; i < NVALUES; i++) {
		if ((v[i] = cf_secmem_alloc(VALUE)) == NULL) {
			bad++;
			continue;
		}
		for (size_t j = 0; j < VALUE; j++)
			bad += ((unsigned char *)v[i])[j] != 0;
		memset(v[i], 'x', VALUE);
		insecure += !CRYPTO_secure_allocated(v[i]);
	}
	tap_cmp_int((long long)bad, "==", 0, "%d values of %d bytes, each zeroed", NVALUES, VALUE);
	tap_ok(CRYPTO_secure_allocated(v[0]), "the first value is in the secure heap");
	tap_cmp_int((long long)CRYPTO_secure_used(), "<=", CF_SECMEM_ARENA / 2,
	    "values take at most half of the secure heap");
	tap_cmp_int((long long)insecure, ">=", NVALUES / 2, "the rest went on the plain heap");

	ca = px_ca_new("filled", hosts, 1, NULL, err, sizeof(err));
	tap_ok(ca != NULL, "a session CA is still made: %s", ca != NULL ? "made" : err);
	px_ca_free(ca);
	for (i = 0; i < NKEYS; i++)
		made += (k[i] = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256")) != NULL;
	tap_cmp_int((long long)made, "==", NKEYS, "%d P-256 keys held at once", NKEYS);
	for (i = 0; i < NKEYS; i++)
		EVP_PKEY_free(k[i]);

	for (i = 0; i < NVALUES; i++)
		OPENSSL_secure_clear_free(v[i], VALUE);
	tap_cmp_int((long long)CRYPTO_secure_used(), "==", (long long)base,
	    "freeing every value gives the secure heap back");
	return tap_done();
}
