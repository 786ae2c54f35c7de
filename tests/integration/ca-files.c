/*
 * tests/integration/ca-files.c: write a session CA made by proxy/tls/ca.c and
 * certificates under it to files, for tests/integration/ca-tls.sh to serve
 * and verify with real clients (openssl s_server, curl, openssl verify).
 *
 *   ca-files DIR HOST...
 *
 * makes the CA of session "t" for HOST... (saved in DIR/state) and writes
 *   DIR/ca.pem                  the CA certificate (what a sandbox trusts)
 *   DIR/leaf.pem, DIR/leaf.key  the leaf proxy/tls/ca.c makes for the first HOST
 *   DIR/evil.pem                a leaf for evil.test, signed with the CA key
 *                               (read back from the state directory) as a
 *                               thief would: outside the name constraints
 *   DIR/ip.pem                  a leaf for the first HOST and IP:127.0.0.1,
 *                               signed the same way
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "proxy/tls/ca.h"
#include "proxy/core/log.h"

static int
add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX v3;
	X509_EXTENSION *e;
	int ok;

	X509V3_set_ctx(&v3, issuer, x, NULL, NULL, 0);
	if ((e = X509V3_EXT_conf_nid(NULL, &v3, nid, value)) == NULL)
		return 0;
	ok = X509_add_ext(x, e, -1);
	X509_EXTENSION_free(e);
	return ok;
}

/* Write a leaf for CN with SAN, signed by CAKEY under CA, to PATH. */
static int
forge(const char *path, X509 *ca, EVP_PKEY *cakey, const char *cn, const char *san)
{
	X509 *x = X509_new();
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	X509_NAME *n = X509_NAME_new();
	FILE *f = NULL;
	int ok = 0;

	if (x == NULL || k == NULL || n == NULL ||
	    !X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0) ||
	    !X509_set_version(x, X509_VERSION_3) ||
	    !ASN1_INTEGER_set(X509_get_serialNumber(x), 4242) ||
	    !X509_set_subject_name(x, n) || !X509_set_issuer_name(x, X509_get_subject_name(ca)) ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), -60) ||
	    !X509_gmtime_adj(X509_getm_notAfter(x), 86400) || !X509_set_pubkey(x, k) ||
	    !add_ext(x, ca, NID_basic_constraints, "critical,CA:FALSE") ||
	    !add_ext(x, ca, NID_ext_key_usage, "serverAuth") ||
	    !add_ext(x, ca, NID_authority_key_identifier, "keyid:always") ||
	    !add_ext(x, ca, NID_subject_alt_name, san) || X509_sign(x, cakey, EVP_sha256()) <= 0)
		goto out;
	if ((f = fopen(path, "w")) == NULL || !PEM_write_X509(f, x))
		goto out;
	ok = 1;
out:
	if (f != NULL && fclose(f) != 0)
		ok = 0;
	X509_NAME_free(n);
	EVP_PKEY_free(k);
	X509_free(x);
	return ok;
}

int
main(int argc, char **argv)
{
	char path[4096], san[300], err[512];
	struct px_ca *ca;
	SSL_CTX *leaf;
	EVP_PKEY *cakey;
	FILE *f;
	int ok;

	if (argc < 3) {
		fprintf(stderr, "usage: ca-files DIR HOST...\n");
		return 2;
	}
	log_init("ca-files", 0);
	snprintf(path, sizeof(path), "%s/state", argv[1]);
	if (mkdir(path, 0700) < 0 && errno != EEXIST) {
		perror(path);
		return 1;
	}
	ca = px_ca_new("t", (const char *const *)argv + 2, (size_t)argc - 2, path, err, sizeof(err));
	if (ca == NULL) {
		fprintf(stderr, "ca-files: %s\n", err);
		return 1;
	}
	if ((leaf = px_ca_leaf_ctx(ca, argv[2])) == NULL) {
		fprintf(stderr, "ca-files: no leaf for %s\n", argv[2]);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/state/ca/t.key", argv[1]);
	if ((f = fopen(path, "r")) == NULL) {
		perror(path);
		return 1;
	}
	cakey = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	snprintf(san, sizeof(san), "DNS:%s,IP:127.0.0.1", argv[2]);

	snprintf(path, sizeof(path), "%s/ca.pem", argv[1]);
	ok = (f = fopen(path, "w")) != NULL && fputs(px_ca_pem(ca), f) >= 0;
	ok = f != NULL && fclose(f) == 0 && ok;
	snprintf(path, sizeof(path), "%s/leaf.pem", argv[1]);
	ok = ok && (f = fopen(path, "w")) != NULL && PEM_write_X509(f, SSL_CTX_get0_certificate(leaf));
	ok = ok && fclose(f) == 0;
	snprintf(path, sizeof(path), "%s/leaf.key", argv[1]);
	ok = ok && (f = fopen(path, "w")) != NULL &&
	    PEM_write_PrivateKey(f, SSL_CTX_get0_privatekey(leaf), NULL, NULL, 0, NULL, NULL);
	ok = ok && fclose(f) == 0;
	snprintf(path, sizeof(path), "%s/evil.pem", argv[1]);
	ok = ok && cakey != NULL &&
	    forge(path, px_ca_cert(ca), cakey, "evil.test", "DNS:evil.test");
	snprintf(path, sizeof(path), "%s/ip.pem", argv[1]);
	ok = ok && forge(path, px_ca_cert(ca), cakey, argv[2], san);
	EVP_PKEY_free(cakey);
	SSL_CTX_free(leaf);
	px_ca_free(ca);
	if (!ok) {
		fprintf(stderr, "ca-files: writing the files failed\n");
		return 1;
	}
	return 0;
}
