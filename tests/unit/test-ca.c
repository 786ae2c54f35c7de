/*
 * tests/unit/test-ca.c: proxy/tls/ca.c (the session CA, its name constraints,
 * leaves, cache and state directory) and proxy/tls/tlsup.c (the verified client
 * side to upstreams), with OpenSSL's own verifier as the judge.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "proxy/tls/ca.h"
#include "proxy/core/log.h"
#include "proxy/tls/tlsup.h"
#include "tests/unit/tap.h"

static const char *const hosts_a[] = { "api.example.test", "git.example.test" };

/* X509_verify_cert() of LEAF against the single trust anchor CA (no
 * partial chains), with HOST checked when not NULL: the error, or
 * X509_V_OK. */
static int
verify(X509 *leaf, X509 *ca, const char *host)
{
	X509_STORE *st = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	int rc = -1;

	if (st == NULL || ctx == NULL || X509_STORE_add_cert(st, ca) != 1 ||
	    X509_STORE_CTX_init(ctx, st, leaf, NULL) != 1)
		goto out;
	X509_VERIFY_PARAM_set_purpose(X509_STORE_CTX_get0_param(ctx), X509_PURPOSE_SSL_SERVER);
	if (host != NULL)
		X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(ctx), host, 0);
	rc = X509_verify_cert(ctx) == 1 ? X509_V_OK : X509_STORE_CTX_get_error(ctx);
out:
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(st);
	return rc;
}

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

/* A leaf the proxy would never make: CN, SAN as given, signed by CAKEY
 * under CA's name, the way a thief holding the CA key would. */
static X509 *
forge(X509 *ca, EVP_PKEY *cakey, const char *cn, const char *san)
{
	X509 *x = X509_new();
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	X509_NAME *n = X509_NAME_new();

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
	    !add_ext(x, ca, NID_subject_alt_name, san) || X509_sign(x, cakey, EVP_sha256()) <= 0) {
		X509_free(x);
		x = NULL;
	}
	X509_NAME_free(n);
	EVP_PKEY_free(k);
	return x;
}

static EVP_PKEY *
read_key(const char *path)
{
	FILE *f = fopen(path, "r");
	EVP_PKEY *k;

	if (f == NULL)
		return NULL;
	k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	return k;
}

/* A handshake on a BIO pair between a server made from SCTX and a client
 * from CCTX asking for HOST.  Returns 0 when both sides finished, else -1
 * with the client's verify result in *VR. */
static int
handshake(SSL_CTX *sctx, SSL_CTX *cctx, const char *host, long *vr)
{
	SSL *s = SSL_new(sctx), *c = SSL_new(cctx);
	BIO *bs = NULL, *bc = NULL;
	int i, sd = 0, cd = 0, rc = -1;

	*vr = -1;
	if (s == NULL || c == NULL || !BIO_new_bio_pair(&bs, 0, &bc, 0) ||
	    px_tlsup_prepare(c, host) < 0)
		goto out;
	SSL_set_bio(s, bs, bs);
	SSL_set_bio(c, bc, bc);
	bs = bc = NULL;
	SSL_set_accept_state(s);
	SSL_set_connect_state(c);
	for (i = 0; i < 100 && !(sd && cd); i++) {
		int r;

		if (!cd) {
			r = SSL_do_handshake(c);
			if (r == 1)
				cd = 1;
			else if (SSL_get_error(c, r) != SSL_ERROR_WANT_READ)
				break;
		}
		if (!sd) {
			r = SSL_do_handshake(s);
			if (r == 1)
				sd = 1;
			else if (SSL_get_error(s, r) != SSL_ERROR_WANT_READ)
				break;
		}
	}
	*vr = SSL_get_verify_result(c);
	rc = sd && cd ? 0 : -1;
out:
	ERR_clear_error();
	SSL_free(s);
	SSL_free(c);
	return rc;
}

static int
ext_critical(X509 *x, int nid)
{
	int i = X509_get_ext_by_NID(x, nid, -1);

	return i >= 0 && X509_EXTENSION_get_critical(X509_get_ext(x, i));
}

int
main(void)
{
	char tmpl[] = "/tmp/test-ca.XXXXXX", *dir = mkdtemp(tmpl);
	char path[512], pem[512], err[512], *pem_a = NULL;
	const char *hosts_ab[] = { "api.example.test", "git.example.test", "new.example.test" };
	const char *many[PX_CA_LEAF_CACHE + 20];
	char many_buf[PX_CA_LEAF_CACHE + 20][32];
	struct px_ca *a = NULL, *b, *c;
	SSL_CTX *l1, *l2, *first, *cctx;
	EVP_PKEY *cakey;
	X509 *leaf, *bad;
	long vr;
	size_t i;
	int e;

	log_init("test-ca", 0);
	if (dir == NULL) {
		perror("mkdtemp");
		return 1;
	}

	/* Refusals before anything is made. */
	{
		const char *ip[] = { "127.0.0.1" }, *ip6[] = { "::1" };

		errno = 0;
		tap_ok(px_ca_new("a", ip, 1, NULL, err, sizeof(err)) == NULL && errno == EINVAL,
		    "an IPv4 literal is no host for a CA (%s)", err);
		tap_ok(px_ca_new("a", ip6, 1, NULL, err, sizeof(err)) == NULL && errno == EINVAL,
		    "nor an IPv6 literal");
		tap_ok(px_ca_new("a", hosts_a, 0, NULL, err, sizeof(err)) == NULL && errno == EINVAL,
		    "no hosts: no CA");
		tap_ok(px_ca_new("../x", hosts_a, 2, NULL, err, sizeof(err)) == NULL && errno == EINVAL,
		    "a session name that is a path: refused");
	}

	a = px_ca_new("a", hosts_a, 2, dir, err, sizeof(err));
	if (!tap_ok(a != NULL, "CA of session a, saved in %s (%s)", dir, err))
		return tap_done();
	tap_ok(!px_ca_reused(a), "nothing saved yet: a new CA");
	pem_a = strdup(px_ca_pem(a));
	tap_ok(strncmp(pem_a, "-----BEGIN CERTIFICATE-----\n", 28) == 0, "its PEM");

	/* The CA's own shape. */
	{
		X509 *x = px_ca_cert(a);
		uint32_t f = X509_get_extension_flags(x);

		tap_ok((f & EXFLAG_CA) && X509_check_ca(x) == 1, "CA:TRUE");
		tap_ok(X509_get_pathlen(x) == 0, "pathlen:0");
		tap_ok(ext_critical(x, NID_basic_constraints), "basicConstraints critical");
		tap_ok((X509_get_key_usage(x) & (KU_KEY_CERT_SIGN | KU_CRL_SIGN)) ==
		    (KU_KEY_CERT_SIGN | KU_CRL_SIGN) &&
		    !(X509_get_key_usage(x) & KU_DIGITAL_SIGNATURE),
		    "keyUsage keyCertSign, cRLSign only");
		tap_ok(ext_critical(x, NID_key_usage), "keyUsage critical");
		tap_ok(ext_critical(x, NID_name_constraints), "nameConstraints critical");
		tap_ok(X509_get0_subject_key_id(x) != NULL, "subjectKeyIdentifier");
	}

	/* The leaf it makes verifies, for its host only. */
	l1 = px_ca_leaf_ctx(a, "api.example.test");
	if (!tap_ok(l1 != NULL, "leaf for api.example.test"))
		return tap_done();
	leaf = SSL_CTX_get0_certificate(l1);
	e = verify(leaf, px_ca_cert(a), "api.example.test");
	tap_ok(e == X509_V_OK, "the leaf verifies against the CA with the host checked (%s)",
	    X509_verify_cert_error_string(e));
	e = verify(leaf, px_ca_cert(a), "git.example.test");
	tap_ok(e == X509_V_ERR_HOSTNAME_MISMATCH, "not for another host of the session (%d)", e);
	tap_ok(X509_check_host(leaf, "x.api.example.test", 0, 0, NULL) != 1,
	    "nor for a name below it");
	tap_ok(X509_get_ext_by_NID(leaf, NID_subject_alt_name, -1) >= 0 &&
	    (X509_get_extended_key_usage(leaf) & XKU_SSL_SERVER) && X509_check_ca(leaf) == 0,
	    "leaf: SAN, EKU serverAuth, not a CA");
	errno = 0;
	tap_ok(px_ca_leaf_ctx(a, "evil.test") == NULL && errno == EPERM,
	    "no leaf for a host the CA was not made for");
	l2 = px_ca_leaf_ctx(a, "API.example.test");
	tap_ok(l2 == l1, "the cache hands out the same leaf for the same host");
	SSL_CTX_free(l2);

	/* What a thief with the CA key could sign is still refused. */
	snprintf(path, sizeof(path), "%s/ca/a.key", dir);
	snprintf(pem, sizeof(pem), "%s/ca/a.pem", dir);
	cakey = read_key(path);
	tap_ok(cakey != NULL, "the saved CA key reads back");
	bad = cakey ? forge(px_ca_cert(a), cakey, "evil.test", "DNS:evil.test") : NULL;
	e = bad ? verify(bad, px_ca_cert(a), NULL) : -1;
	tap_ok(e == X509_V_ERR_PERMITTED_VIOLATION,
	    "a leaf for a host outside the constraints, signed with the CA key: "
	    "permitted subtree violation (%d: %s)", e, X509_verify_cert_error_string(e));
	X509_free(bad);
	bad = cakey ? forge(px_ca_cert(a), cakey, "api.example.test",
	    "DNS:api.example.test,IP:127.0.0.1") : NULL;
	e = bad ? verify(bad, px_ca_cert(a), NULL) : -1;
	tap_ok(e == X509_V_ERR_EXCLUDED_VIOLATION,
	    "a leaf with an IPv4 SAN, signed with the CA key: excluded (%d: %s)", e,
	    X509_verify_cert_error_string(e));
	X509_free(bad);
	bad = cakey ? forge(px_ca_cert(a), cakey, "api.example.test",
	    "DNS:api.example.test,IP:::1") : NULL;
	e = bad ? verify(bad, px_ca_cert(a), NULL) : -1;
	tap_ok(e == X509_V_ERR_EXCLUDED_VIOLATION, "and with an IPv6 SAN (%d)", e);
	X509_free(bad);
	bad = cakey ? forge(px_ca_cert(a), cakey, "x.evil.test", "DNS:api.example.test.evil.test")
	    : NULL;
	e = bad ? verify(bad, px_ca_cert(a), NULL) : -1;
	tap_ok(e == X509_V_ERR_PERMITTED_VIOLATION, "a name that only starts like a host (%d)", e);
	X509_free(bad);
	EVP_PKEY_free(cakey);

	/* Another session's CA does not vouch for this one's leaf. */
	b = px_ca_new("b", hosts_a, 2, NULL, err, sizeof(err));
	tap_ok(b != NULL && verify(leaf, px_ca_cert(b), "api.example.test") != X509_V_OK,
	    "session a's leaf does not verify against session b's CA (same hosts)");
	tap_ok(b != NULL && verify(leaf, px_ca_cert(b), NULL) != X509_V_OK,
	    "not even without the host check");
	px_ca_free(b);

	/* The upstream side: a real handshake over a BIO pair. */
	cctx = px_tlsup_ctx_new(pem, err, sizeof(err));
	tap_ok(cctx != NULL && SSL_CTX_get_min_proto_version(cctx) == TLS1_2_VERSION,
	    "upstream context: TLS 1.2 minimum (%s)", err);
	if (cctx != NULL) {
		e = handshake(l1, cctx, "api.example.test", &vr);
		tap_ok(e == 0 && vr == X509_V_OK,
		    "handshake with the leaf, trusting the CA file: verified");
		e = handshake(l1, cctx, "git.example.test", &vr);
		tap_ok(e < 0 && strcmp(px_tlsup_reason(vr), "hostname mismatch") == 0,
		    "another name: fails, \"%s\"", px_tlsup_reason(vr));
		X509_VERIFY_PARAM_set_time(SSL_CTX_get0_param(cctx),
		    time(NULL) + (time_t)(PX_CA_LEAF_DAYS + 1) * 86400);
		e = handshake(l1, cctx, "api.example.test", &vr);
		tap_ok(e < 0 && strcmp(px_tlsup_reason(vr), "certificate has expired") == 0,
		    "after the leaf's end: fails, \"%s\"", px_tlsup_reason(vr));
		SSL_CTX_free(cctx);
	}
	cctx = px_tlsup_ctx_new(NULL, err, sizeof(err));
	e = cctx != NULL ? handshake(l1, cctx, "api.example.test", &vr) : 0;
	tap_ok(e < 0 && strcmp(px_tlsup_reason(vr), "untrusted issuer") == 0,
	    "the system store does not trust a session CA: \"%s\"", px_tlsup_reason(vr));
	SSL_CTX_free(cctx);
	tap_ok(px_tlsup_ctx_new("/nonexistent/ca.pem", err, sizeof(err)) == NULL &&
	    strstr(err, "/nonexistent/ca.pem") != NULL, "a missing CA file: %s", err);
	SSL_CTX_free(l1);

	/* The cache stays bounded and drops the least recently used. */
	for (i = 0; i < PX_CA_LEAF_CACHE + 20; i++) {
		snprintf(many_buf[i], sizeof(many_buf[i]), "h%zu.example.test", i);
		many[i] = many_buf[i];
	}
	c = px_ca_new("many", many, PX_CA_LEAF_CACHE + 20, NULL, err, sizeof(err));
	first = c ? px_ca_leaf_ctx(c, many[0]) : NULL;
	for (i = 1; c != NULL && i < PX_CA_LEAF_CACHE + 20; i++)
		SSL_CTX_free(px_ca_leaf_ctx(c, many[i]));
	tap_ok(c != NULL && px_ca_cached(c) == PX_CA_LEAF_CACHE,
	    "%d hosts asked for: the cache holds %d", PX_CA_LEAF_CACHE + 20, PX_CA_LEAF_CACHE);
	l2 = c ? px_ca_leaf_ctx(c, many[0]) : NULL;
	tap_ok(first != NULL && l2 != NULL && l2 != first,
	    "the least recently used leaf was dropped and is made anew");
	tap_ok(l2 != NULL && verify(SSL_CTX_get0_certificate(first), px_ca_cert(c), many[0]) == 0,
	    "the dropped leaf still held by a caller stays valid");
	SSL_CTX_free(l2);
	SSL_CTX_free(first);
	px_ca_free(c);

	/* Persistence: a restart reuses the saved CA when it still fits. */
	px_ca_free(a);
	a = px_ca_new("a", hosts_a, 2, dir, err, sizeof(err));
	tap_ok(a != NULL && px_ca_reused(a) && strcmp(px_ca_pem(a), pem_a) == 0,
	    "restart, same hosts: the saved CA is reused (%s)", err);
	px_ca_free(a);
	a = px_ca_new("a", hosts_a, 1, dir, err, sizeof(err));
	tap_ok(a != NULL && px_ca_reused(a) && strcmp(px_ca_pem(a), pem_a) == 0,
	    "fewer hosts: still reused");
	px_ca_free(a);
	a = px_ca_new("a", hosts_ab, 3, dir, err, sizeof(err));
	tap_ok(a != NULL && !px_ca_reused(a) && strcmp(px_ca_pem(a), pem_a) != 0,
	    "a host outside the saved constraints: a new CA");
	free(pem_a);
	pem_a = a ? strdup(px_ca_pem(a)) : NULL;
	px_ca_free(a);
	a = px_ca_new("a", hosts_ab, 3, dir, err, sizeof(err));
	tap_ok(a != NULL && px_ca_reused(a) && pem_a && strcmp(px_ca_pem(a), pem_a) == 0,
	    "and the new one was saved in its place");
	px_ca_free(a);
	{
		struct stat st;

		tap_ok(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600, "the key file is 0600");
		snprintf(err, sizeof(err), "%s/ca", dir);
		tap_ok(stat(err, &st) == 0 && (st.st_mode & 07777) == 0700, "STATE/ca is 0700");
	}

	/* A key file others could read, or that is not ours: refused. */
	chmod(path, 0644);
	errno = 0;
	a = px_ca_new("a", hosts_ab, 3, dir, err, sizeof(err));
	tap_ok(a == NULL && errno == EPERM && strstr(err, "0644") && strstr(err, "0600"),
	    "key file mode 0644: refused (%s)", err);
	px_ca_free(a);
	chmod(path, 0600);
	if (geteuid() == 0 && chown(path, 4242, (gid_t)-1) == 0) {
		errno = 0;
		a = px_ca_new("a", hosts_ab, 3, dir, err, sizeof(err));
		tap_ok(a == NULL && errno == EPERM && strstr(err, "owned by uid 4242"),
		    "key file owned by another uid: refused (%s)", err);
		px_ca_free(a);
		if (chown(path, 0, (gid_t)-1) < 0)
			perror("chown");
	} else {
		tap_ok(1, "# SKIP key file of another uid: needs root");
	}
	{
		char moved[600];

		snprintf(moved, sizeof(moved), "%s.real", path);
		errno = 0;
		a = NULL;
		if (rename(path, moved) == 0 && symlink(moved, path) == 0)
			a = px_ca_new("a", hosts_ab, 3, dir, err, sizeof(err));
		tap_ok(a == NULL && errno == EPERM && strstr(err, "symbolic link"),
		    "key file that is a symbolic link: refused (%s)", err);
		px_ca_free(a);
		unlink(path);
		rename(moved, path);
		a = px_ca_new("a", hosts_ab, 3, dir, err, sizeof(err));
		tap_ok(a != NULL && px_ca_reused(a), "put back: reused again (%s)", err);
		px_ca_free(a);
	}
	snprintf(err, sizeof(err), "%s/ca", dir);
	chmod(err, 0777);
	errno = 0;
	a = px_ca_new("a", hosts_ab, 3, dir, err, sizeof(err));
	tap_ok(a == NULL && errno == EPERM, "STATE/ca writable by others: refused (%s)", err);
	px_ca_free(a);
	free(pem_a);

	snprintf(err, sizeof(err), "rm -rf '%s'", dir);
	if (system(err) != 0)
		tap_diag("could not remove %s", dir);
	return tap_done();
}
