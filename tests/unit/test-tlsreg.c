/*
 * tests/unit/test-tlsreg.c: the sessions' CAs follow the config
 * (proxy/tls/registry.h): a reload that adds a terminated host keeps the CA
 * running sandboxes trust and adds one for the new host, a host no longer
 * terminated drops its CA, a failed update changes nothing, and a restart
 * with a state directory finds the same CA.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include "conf/config.h"
#include "proxy/core/log.h"
#include "proxy/tls/registry.h"
#include "tests/unit/tap.h"

#define HEAD "[proxy]\nlisten = tcp:127.0.0.1:3999\n%s\n" \
	"[secret s1]\nfrom_env = T_SESSTLS_1\ninject = a.example header x-k\n" \
	"[secret s2]\nfrom_env = T_SESSTLS_2\ninject = b.example header x-k\n" \
	"[session one]\nlisten = tcp:127.0.0.1:4000\nallow_hosts = a.example, b.example\n" \
	"secrets = %s\n"

static struct cf_config *
conf(const char *proxy_extra, const char *secrets)
{
	struct cf_overrides ov;
	struct cf_diag d;
	struct cf_config *c;
	char text[2048];
	size_t i;

	memset(&ov, 0, sizeof(ov));
	memset(&d, 0, sizeof(d));
	snprintf(text, sizeof(text), HEAD, proxy_extra, secrets);
	c = cf_config_parse("t.ini", text, strlen(text), &ov, &d);
	for (i = 0; i < d.nerrors; i++)
		fprintf(stderr, "# %s\n", d.errors[i]);
	cf_diag_free(&d);
	if (c == NULL) {
		fprintf(stderr, "config refused\n");
		exit(99);
	}
	return c;
}

/* Does the leaf of CTX verify for HOST against the certificates in PEM? */
static int
verifies(SSL_CTX *ctx, const char *host, const char *pem)
{
	X509_STORE *st = X509_STORE_new();
	X509_STORE_CTX *vc = X509_STORE_CTX_new();
	BIO *b = BIO_new_mem_buf(pem, -1);
	X509 *x, *leaf = ctx ? SSL_CTX_get0_certificate(ctx) : NULL;
	int ok = 0;

	while ((x = PEM_read_bio_X509(b, NULL, NULL, NULL)) != NULL) {
		X509_STORE_add_cert(st, x);
		X509_free(x);
	}
	ERR_clear_error();
	if (leaf != NULL && X509_STORE_CTX_init(vc, st, leaf, NULL) == 1) {
		X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(vc), host, 0);
		ok = X509_verify_cert(vc) == 1;
	}
	X509_STORE_CTX_free(vc);
	X509_STORE_free(st);
	BIO_free(b);
	return ok;
}

int
main(void)
{
	struct px_tlsreg *r = px_tlsreg_new();
	struct cf_config *c1, *c2, *c3, *bad;
	char err[400], dir[] = "/tmp/test-tlsreg.XXXXXX", extra[300], *pem1, *pem2;
	SSL_CTX *la, *lb;
	size_t made;

	log_init("test-tlsreg", 0);
	setenv("T_SESSTLS_1", "sk-test-one-0123456789abcdef", 1);
	setenv("T_SESSTLS_2", "sk-test-two-0123456789abcdef", 1);
	c1 = conf("", "s1");
	c2 = conf("", "s1, s2");
	c3 = conf("", "s2");
	bad = conf("upstream_ca_file = /nonexistent/ca.pem", "s1, s2");

	/* Start: one CA, for a.example only. */
	tap_ok(px_tlsreg_update(r, c1, &made, err, sizeof(err)) == 0 && made == 1,
	    "start: one CA made (%s)", err);
	tap_ok(px_tlsreg_ncas(r, "one") == 1 && px_tlsreg_ncas(r, "default") == 0,
	    "session one has a CA, the default session none");
	tap_ok(px_tlsreg_upstream(r) != NULL, "an upstream context");
	pem1 = strdup(px_tlsreg_pem(r, "one"));
	la = px_tlsreg_leaf(r, "one", "a.example");
	tap_ok(la != NULL && verifies(la, "a.example", pem1), "a leaf for a.example under it");
	SSL_CTX_free(la);
	errno = 0;
	tap_ok(px_tlsreg_leaf(r, "one", "b.example") == NULL && errno == ENOENT,
	    "no leaf for a host not terminated");
	tap_ok(px_tlsreg_leaf(r, "default", "a.example") == NULL, "no leaf in another session");

	/* A reload adds b.example: the first CA stays, a second is made. */
	tap_ok(px_tlsreg_update(r, c2, &made, err, sizeof(err)) == 0 && made == 1,
	    "reload adding a host makes one CA (%s)", err);
	tap_ok(px_tlsreg_ncas(r, "one") == 2, "session one has two CAs");
	pem2 = strdup(px_tlsreg_pem(r, "one"));
	tap_ok(strncmp(pem2, pem1, strlen(pem1)) == 0 && strlen(pem2) > strlen(pem1),
	    "the bundle starts with the CA running sandboxes trust");
	la = px_tlsreg_leaf(r, "one", "a.example");
	lb = px_tlsreg_leaf(r, "one", "b.example");
	tap_ok(la != NULL && verifies(la, "a.example", pem1),
	    "a.example still verifies with the first CA alone");
	tap_ok(lb != NULL && !verifies(lb, "b.example", pem1) && verifies(lb, "b.example", pem2),
	    "b.example needs the new CA");
	SSL_CTX_free(la);
	SSL_CTX_free(lb);

	/* What any worker reads: a copy of the same PEM, or none. */
	{
		char *copy = NULL, *none = (char *)"x";

		tap_ok(px_tlsreg_pem_copy(r, "one", &copy) == 0 && copy != NULL &&
		    strcmp(copy, pem2) == 0 && copy != px_tlsreg_pem(r, "one"),
		    "px_tlsreg_pem_copy() hands out a copy of the session's PEM");
		free(copy);
		tap_ok(px_tlsreg_pem_copy(r, "nosuch", &none) == 0 && none == NULL,
		    "and NULL for a session that terminates nothing");
	}

	/* The same config again: nothing made. */
	tap_ok(px_tlsreg_update(r, c2, &made, err, sizeof(err)) == 0 && made == 0 &&
	    strcmp(px_tlsreg_pem(r, "one"), pem2) == 0, "an unchanged reload makes nothing");

	/* A failing update changes nothing. */
	tap_ok(px_tlsreg_update(r, bad, &made, err, sizeof(err)) == -1 &&
	    strstr(err, "upstream_ca_file") != NULL, "a bad upstream_ca_file is refused: %s", err);
	tap_ok(px_tlsreg_ncas(r, "one") == 2 && strcmp(px_tlsreg_pem(r, "one"), pem2) == 0,
	    "and the CAs are as they were");

	/* a.example no longer terminated: its CA goes, b.example's stays. */
	tap_ok(px_tlsreg_update(r, c3, &made, err, sizeof(err)) == 0 && made == 0,
	    "reload dropping a host (%s)", err);
	tap_ok(px_tlsreg_ncas(r, "one") == 1 &&
	    strcmp(px_tlsreg_pem(r, "one"), pem2 + strlen(pem1)) == 0,
	    "only the CA of b.example is left");
	free(pem1);
	free(pem2);
	px_tlsreg_free(r);

	/* A state directory: a restart finds the same CA. */
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 99;
	}
	snprintf(extra, sizeof(extra), "state_dir = %s", dir);
	cf_config_free(c1);
	c1 = conf(extra, "s1, s2");
	r = px_tlsreg_new();
	tap_ok(px_tlsreg_update(r, c1, &made, err, sizeof(err)) == 0 && made == 1,
	    "with state_dir: one CA for both hosts (%s)", err);
	pem1 = strdup(px_tlsreg_pem(r, "one"));
	px_tlsreg_free(r);
	r = px_tlsreg_new();
	tap_ok(px_tlsreg_update(r, c1, &made, err, sizeof(err)) == 0 &&
	    strcmp(px_tlsreg_pem(r, "one"), pem1) == 0, "a restart loads the same CA");
	free(pem1);
	px_tlsreg_free(r);
	{
		char cmd[200];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "# could not remove %s\n", dir);
	}
	cf_config_free(c1);
	cf_config_free(c2);
	cf_config_free(c3);
	cf_config_free(bad);
	return tap_done();
}
