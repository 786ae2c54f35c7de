/*
 * proxy/tls/ca.c: the certificate authority of one session (proxy/tls/ca.h has the
 * contract and the shape of every certificate).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include "proxy/tls/ca.h"
#include "proxy/core/log.h"

#define STR(x) #x
#define XSTR(x) STR(x)

struct leaf {
	char *host;
	SSL_CTX *ctx;
	time_t not_after;
	unsigned long used;     /* the cache's clock when last handed out */
};

struct px_ca {
	char *session;
	char **hosts;
	size_t nhosts;
	EVP_PKEY *key;          /* the CA's key: signs leaves, nothing else */
	X509 *cert;
	char *pem;
	int reused;
	EVP_PKEY *leaf_key;     /* shared by the leaves, memory only */
	struct leaf cache[PX_CA_LEAF_CACHE];
	size_t ncached;
	unsigned long clock;
};

__attribute__((format(printf, 3, 4))) static void
set_err(char *err, size_t errsz, const char *fmt, ...)
{
	va_list ap;

	if (errsz == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errsz, fmt, ap);
	va_end(ap);
}

/* The OpenSSL error queue drained into one line after WHAT. */
static void
ssl_err(char *err, size_t errsz, const char *what)
{
	char buf[256] = "";
	unsigned long e, first = 0;

	while ((e = ERR_get_error()) != 0)
		if (first == 0)
			first = e;
	if (first != 0)
		ERR_error_string_n(first, buf, sizeof(buf));
	set_err(err, errsz, "%s: %s", what, first != 0 ? buf : "OpenSSL failed");
	errno = EPROTO;
}

/* A session name is used in a file name: letters, digits, '-', '_', '.',
 * 1..64 bytes (conf's rule), and not "." or ".."; also '+', which no
 * session name has, for a session's further CAs (proxy/tls/registry.h:
 * SESSION+2, ...), so that they can never collide with a session. */
static int
session_ok(const char *s)
{
	size_t i, len = strlen(s);

	if (len == 0 || len > 72 || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return 0;
	for (i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '+'))
			return 0;
	}
	return 1;
}

/* A host name a DNS name constraint can carry: LDH labels and '_', no
 * wildcard, no IP literal (the CA must never sign for an address). */
static int
host_ok(const char *h)
{
	unsigned char a[16];
	size_t i, len = strlen(h);

	if (len == 0 || len > 253 || h[0] == '.' || h[len - 1] == '.')
		return 0;
	if (inet_pton(AF_INET, h, a) == 1 || inet_pton(AF_INET6, h, a) == 1)
		return 0;
	for (i = 0; i < len; i++) {
		char c = h[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_' ||
		    (c == '.' && h[i + 1] != '.')))
			return 0;
	}
	return 1;
}

static EVP_PKEY *
p256_key(void)
{
	return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
}

/* 128 random bits, positive (RFC 5280 §4.1.2.2: at most 20 octets). */
static int
set_serial(X509 *x)
{
	unsigned char r[16];
	BIGNUM *bn = NULL;
	ASN1_INTEGER *ai = NULL;
	int ok = 0;

	if (RAND_bytes(r, sizeof(r)) != 1)
		goto out;
	r[0] &= 0x7f;
	r[0] |= 0x40;   /* never zero, always 16 octets */
	if ((bn = BN_bin2bn(r, sizeof(r), NULL)) == NULL ||
	    (ai = BN_to_ASN1_INTEGER(bn, NULL)) == NULL)
		goto out;
	ok = X509_set_serialNumber(x, ai);
out:
	ASN1_INTEGER_free(ai);
	BN_free(bn);
	return ok;
}

static int
add_ext(X509 *x, X509V3_CTX *v3, int nid, const char *value)
{
	X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, v3, nid, value);
	int ok;

	if (ext == NULL)
		return 0;
	ok = X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	return ok;
}

/* One subtree of TYPE holding VALUE (an IA5String or an octet string). */
static int
push_subtree(STACK_OF(GENERAL_SUBTREE) *sk, int type, const void *val, int len)
{
	GENERAL_SUBTREE *st = GENERAL_SUBTREE_new();
	ASN1_STRING *s = type == GEN_DNS ? ASN1_IA5STRING_new() : ASN1_OCTET_STRING_new();
	GENERAL_NAME *gn = GENERAL_NAME_new();

	if (st == NULL || s == NULL || gn == NULL || !ASN1_STRING_set(s, val, len))
		goto fail;
	GENERAL_NAME_set0_value(gn, type, s);
	s = NULL;
	GENERAL_NAME_free(st->base);
	st->base = gn;
	gn = NULL;
	if (!sk_GENERAL_SUBTREE_push(sk, st))
		goto fail;
	return 1;
fail:
	GENERAL_NAME_free(gn);
	ASN1_STRING_free(s);
	GENERAL_SUBTREE_free(st);
	return 0;
}

/*
 * The name constraints: permitted DNS:HOST for each host, and every address
 * excluded.  RFC 5280 §4.2.1.10 applies a constraint only to names of its
 * own type, so without the excluded IP subtrees a leaf with an iPAddress
 * SAN would pass; an iPAddress constraint is the address followed by the
 * mask, 0.0.0.0/0 being eight zero octets and ::/0 thirty-two.
 */
static int
add_name_constraints(X509 *x, char *const *hosts, size_t n)
{
	static const unsigned char zeros[32];
	NAME_CONSTRAINTS *nc = NAME_CONSTRAINTS_new();
	size_t i;
	int ok = 0;

	if (nc == NULL || (nc->permittedSubtrees = sk_GENERAL_SUBTREE_new_null()) == NULL ||
	    (nc->excludedSubtrees = sk_GENERAL_SUBTREE_new_null()) == NULL)
		goto out;
	for (i = 0; i < n; i++)
		if (!push_subtree(nc->permittedSubtrees, GEN_DNS, hosts[i], (int)strlen(hosts[i])))
			goto out;
	if (!push_subtree(nc->excludedSubtrees, GEN_IPADD, zeros, 8) ||
	    !push_subtree(nc->excludedSubtrees, GEN_IPADD, zeros, 32))
		goto out;
	ok = X509_add1_ext_i2d(x, NID_name_constraints, nc, 1, X509V3_ADD_DEFAULT) == 1;
out:
	NAME_CONSTRAINTS_free(nc);
	return ok;
}

static int
set_validity(X509 *x, time_t end)
{
	time_t now = time(NULL);

	return X509_time_adj(X509_getm_notBefore(x), -3600, &now) != NULL &&
	    ASN1_TIME_set(X509_getm_notAfter(x), end) != NULL;
}

static char *
cert_pem(X509 *x)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *data, *pem = NULL;
	long len;

	if (b == NULL || !PEM_write_bio_X509(b, x))
		goto out;
	len = BIO_get_mem_data(b, &data);
	if ((pem = malloc((size_t)len + 1)) == NULL)
		goto out;
	memcpy(pem, data, (size_t)len);
	pem[len] = '\0';
out:
	BIO_free(b);
	return pem;
}

/* A new CA key and certificate for CA's session and hosts. */
static int
make_ca(struct px_ca *ca, char *err, size_t errsz)
{
	X509_NAME *name = NULL;
	X509V3_CTX v3;
	char cn[65];
	int ok = 0;

	EVP_PKEY_free(ca->key);
	X509_free(ca->cert);
	ca->cert = NULL;
	if ((ca->key = p256_key()) == NULL || (ca->cert = X509_new()) == NULL)
		goto out;
	/* The CN is at most 64 bytes (RFC 5280 ub-common-name); the name is
	 * ASCII (session_ok), so cutting it keeps it valid. */
	snprintf(cn, sizeof(cn), "postern %s", ca->session);
	if ((name = X509_NAME_new()) == NULL ||
	    !X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"postern", -1, -1, 0) ||
	    !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0))
		goto out;
	if (!X509_set_version(ca->cert, X509_VERSION_3) || !set_serial(ca->cert) ||
	    !X509_set_subject_name(ca->cert, name) || !X509_set_issuer_name(ca->cert, name) ||
	    !set_validity(ca->cert, time(NULL) + (time_t)PX_CA_DAYS * 86400) ||
	    !X509_set_pubkey(ca->cert, ca->key))
		goto out;
	X509V3_set_ctx(&v3, ca->cert, ca->cert, NULL, NULL, 0);
	/* pathlen:0: the CA issues leaves only, never another CA. */
	if (!add_ext(ca->cert, &v3, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
	    !add_ext(ca->cert, &v3, NID_key_usage, "critical,keyCertSign,cRLSign") ||
	    !add_ext(ca->cert, &v3, NID_subject_key_identifier, "hash") ||
	    !add_name_constraints(ca->cert, ca->hosts, ca->nhosts))
		goto out;
	if (X509_sign(ca->cert, ca->key, EVP_sha256()) <= 0)
		goto out;
	ok = 1;
out:
	X509_NAME_free(name);
	if (!ok)
		ssl_err(err, errsz, "making the session CA");
	return ok;
}

/* Does the DNS name constraint C permit HOST (RFC 5280 §4.2.1.10: C itself
 * or any name with labels added to its left)? */
static int
dns_within(const char *host, const ASN1_IA5STRING *c)
{
	size_t hl = strlen(host), cl = (size_t)ASN1_STRING_length(c);
	const char *cs = (const char *)ASN1_STRING_get0_data(c);

	if (cl == 0 || memchr(cs, '\0', cl) != NULL)
		return 0;
	if (cs[0] == '.') {   /* ".example.com": strictly below it */
		return hl > cl && strncasecmp(host + hl - cl, cs, cl) == 0;
	}
	if (hl == cl)
		return strncasecmp(host, cs, cl) == 0;
	return hl > cl && host[hl - cl - 1] == '.' && strncasecmp(host + hl - cl, cs, cl) == 0;
}

/* Why the saved certificate X cannot serve CA's hosts, or NULL if it can:
 * signed by its key, a CA, long enough to live, and every host within its
 * permitted DNS subtrees with every address excluded. */
static const char *
saved_unfit(const struct px_ca *ca, X509 *x, EVP_PKEY *key)
{
	NAME_CONSTRAINTS *nc;
	const char *why = NULL;
	time_t soon = time(NULL) + (time_t)PX_CA_REUSE_DAYS * 86400;
	size_t i;
	int j, crit = -1;

	if (X509_check_private_key(x, key) != 1 || X509_verify(x, key) != 1)
		return "its certificate does not match its key";
	if (X509_check_ca(x) != 1)
		return "its certificate is not a CA";
	if (X509_cmp_time(X509_get0_notAfter(x), &soon) <= 0)
		return "it expires within " XSTR(PX_CA_REUSE_DAYS) " days";
	nc = X509_get_ext_d2i(x, NID_name_constraints, &crit, NULL);
	if (nc == NULL || crit != 1 || nc->excludedSubtrees == NULL ||
	    sk_GENERAL_SUBTREE_num(nc->excludedSubtrees) < 2) {
		why = "it has no name constraints of ours";
		goto out;
	}
	for (i = 0; i < ca->nhosts; i++) {
		int in = 0;

		for (j = 0; nc->permittedSubtrees != NULL &&
		    j < sk_GENERAL_SUBTREE_num(nc->permittedSubtrees); j++) {
			GENERAL_SUBTREE *st = sk_GENERAL_SUBTREE_value(nc->permittedSubtrees, j);

			if (st->base->type == GEN_DNS && dns_within(ca->hosts[i], st->base->d.dNSName))
				in = 1;
		}
		if (!in) {
			why = "a host is outside its name constraints";
			goto out;
		}
	}
out:
	NAME_CONSTRAINTS_free(nc);
	ERR_clear_error();
	return why;
}

/* Check that directory PATH is ours (or root's) and writable by no one
 * else.  FOLLOW: PATH may be a symbolic link (the state directory an
 * operator named), else not (STATE/ca, which we made). */
static int
dir_ok(const char *path, int follow, char *err, size_t errsz)
{
	struct stat st;

	if ((follow ? stat(path, &st) : lstat(path, &st)) < 0) {
		set_err(err, errsz, "%s: %s", path, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		set_err(err, errsz, "%s: not a directory", path);
		return -EPERM;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		set_err(err, errsz, "%s: owned by uid %u, not by us (uid %u) or root",
		    path, (unsigned)st.st_uid, (unsigned)geteuid());
		return -EPERM;
	}
	if (st.st_mode & 022) {
		set_err(err, errsz, "%s: mode %04o lets others write it", path,
		    (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

/*
 * Load the saved key and certificate of CA's session from DIR.  Returns 1
 * with CA's key and certificate set, 0 when there is nothing fit to reuse
 * (logged: the caller makes a new CA), or a negative errno with ERR set
 * when the key file must be refused.  The key file is opened without
 * following a symbolic link and checked on the open descriptor, so what is
 * checked is what is read.
 */
static int
load_saved(struct px_ca *ca, const char *dir, char *err, size_t errsz)
{
	char kpath[PATH_MAX], cpath[PATH_MAX];
	struct stat st;
	EVP_PKEY *key = NULL;
	X509 *x = NULL;
	FILE *f = NULL;
	const char *why;
	int fd = -1, rc = 0;

	snprintf(kpath, sizeof(kpath), "%s/%s.key", dir, ca->session);
	snprintf(cpath, sizeof(cpath), "%s/%s.pem", dir, ca->session);
	fd = open(kpath, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			goto out;
		rc = errno == ELOOP ? -EPERM : -errno;
		set_err(err, errsz, "%s: %s", kpath,
		    errno == ELOOP ? "is a symbolic link, refused" : strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		set_err(err, errsz, "%s: %s", kpath, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EPERM;
		set_err(err, errsz, "%s: not a regular file, refused", kpath);
		goto out;
	}
	if (st.st_uid != geteuid()) {
		rc = -EPERM;
		set_err(err, errsz, "%s: owned by uid %u, not by us (uid %u), refused",
		    kpath, (unsigned)st.st_uid, (unsigned)geteuid());
		goto out;
	}
	if ((st.st_mode & 07777) != 0600) {
		rc = -EPERM;
		set_err(err, errsz, "%s: mode %04o, must be 0600, refused", kpath,
		    (unsigned)(st.st_mode & 07777));
		goto out;
	}
	if ((f = fdopen(fd, "r")) == NULL) {
		rc = -errno;
		set_err(err, errsz, "%s: %s", kpath, strerror(errno));
		goto out;
	}
	fd = -1;
	key = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	f = NULL;
	if (key == NULL) {
		log_warnx("session %s: %s holds no key; making a new CA", ca->session, kpath);
		goto out;
	}
	if ((f = fopen(cpath, "re")) == NULL) {
		log_warnx("session %s: %s: %s; making a new CA", ca->session, cpath, strerror(errno));
		goto out;
	}
	x = PEM_read_X509(f, NULL, NULL, NULL);
	if (x == NULL) {
		log_warnx("session %s: %s holds no certificate; making a new CA", ca->session, cpath);
		goto out;
	}
	if ((why = saved_unfit(ca, x, key)) != NULL) {
		log_notice("session %s: not reusing the saved CA (%s): making a new one; "
		    "sandboxes that trust the old one must be restarted", ca->session, why);
		goto out;
	}
	ca->key = key;
	ca->cert = x;
	key = NULL;
	x = NULL;
	rc = 1;
out:
	ERR_clear_error();
	if (f != NULL)
		fclose(f);
	if (fd >= 0)
		close(fd);
	EVP_PKEY_free(key);
	X509_free(x);
	return rc;
}

/* Write LEN bytes of DATA to PATH with MODE, through PATH.tmp and a
 * rename, so that PATH is either the old file or the whole new one. */
static int
write_file(const char *path, const char *data, size_t len, mode_t mode, char *err, size_t errsz)
{
	char tmp[PATH_MAX];
	size_t off = 0;
	int fd, rc = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (unlink(tmp) < 0 && errno != ENOENT)
		goto fail;
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)) < 0)
		goto fail;
	/* The umask must not decide the key's mode, nor loosen it. */
	if (fchmod(fd, mode) < 0)
		goto fail_fd;
	while (off < len) {
		ssize_t w = write(fd, data + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			goto fail_fd;
		off += (size_t)w;
	}
	if (fsync(fd) < 0)
		goto fail_fd;
	if (close(fd) < 0) {
		fd = -1;
		goto fail;
	}
	if (rename(tmp, path) < 0)
		goto fail;
	return 0;
fail_fd:
	rc = -errno;
	close(fd);
	errno = -rc;
fail:
	rc = -errno;
	set_err(err, errsz, "%s: %s", tmp, strerror(errno));
	unlink(tmp);
	return rc;
}

/* Save CA's key and certificate in DIR (the key first: a certificate
 * without its key is useless, and a mismatched pair is not reused). */
static int
save(struct px_ca *ca, const char *dir, char *err, size_t errsz)
{
	char kpath[PATH_MAX], cpath[PATH_MAX];
	BIO *b = BIO_new(BIO_s_secmem());
	char *data;
	long len;
	int rc;

	snprintf(kpath, sizeof(kpath), "%s/%s.key", dir, ca->session);
	snprintf(cpath, sizeof(cpath), "%s/%s.pem", dir, ca->session);
	if (b == NULL || !PEM_write_bio_PrivateKey(b, ca->key, NULL, NULL, 0, NULL, NULL)) {
		BIO_free(b);
		ssl_err(err, errsz, "writing the CA key");
		return -EPROTO;
	}
	len = BIO_get_mem_data(b, &data);
	rc = write_file(kpath, data, (size_t)len, 0600, err, errsz);
	BIO_free(b);   /* a secure-memory BIO wipes the key's PEM */
	if (rc < 0)
		return rc;
	return write_file(cpath, ca->pem, strlen(ca->pem), 0644, err, errsz);
}

struct px_ca *
px_ca_new(const char *session, const char *const *hosts, size_t n,
    const char *state_dir, char *err, size_t errsz)
{
	struct px_ca *ca = NULL;
	char dir[PATH_MAX];
	size_t i;
	int rc = -EINVAL;

	set_err(err, errsz, "%s", "");
	if (session == NULL || !session_ok(session)) {
		set_err(err, errsz, "bad session name for a CA");
		goto fail;
	}
	if (n == 0) {
		set_err(err, errsz, "session %s: a CA needs at least one host", session);
		goto fail;
	}
	for (i = 0; i < n; i++)
		if (!host_ok(hosts[i])) {
			set_err(err, errsz, "session %s: a CA cannot be made for \"%.64s\": "
			    "host names only, no address", session, hosts[i]);
			goto fail;
		}
	rc = -ENOMEM;
	if ((ca = calloc(1, sizeof(*ca))) == NULL || (ca->session = strdup(session)) == NULL ||
	    (ca->hosts = calloc(n, sizeof(*ca->hosts))) == NULL) {
		set_err(err, errsz, "out of memory");
		goto fail;
	}
	for (ca->nhosts = 0; ca->nhosts < n; ca->nhosts++)
		if ((ca->hosts[ca->nhosts] = strdup(hosts[ca->nhosts])) == NULL) {
			set_err(err, errsz, "out of memory");
			goto fail;
		}
	if (state_dir != NULL) {
		if ((rc = dir_ok(state_dir, 1, err, errsz)) < 0)
			goto fail;
		if ((size_t)snprintf(dir, sizeof(dir), "%s/ca", state_dir) >= sizeof(dir) - 80) {
			rc = -ENAMETOOLONG;
			set_err(err, errsz, "%s: path too long", state_dir);
			goto fail;
		}
		if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
			rc = -errno;
			set_err(err, errsz, "%s: %s", dir, strerror(errno));
			goto fail;
		}
		if ((rc = dir_ok(dir, 0, err, errsz)) < 0)
			goto fail;
		if ((rc = load_saved(ca, dir, err, errsz)) < 0)
			goto fail;
		ca->reused = rc == 1;
	}
	rc = -EPROTO;
	if (!ca->reused && !make_ca(ca, err, errsz))
		goto fail;
	if ((ca->pem = cert_pem(ca->cert)) == NULL || (ca->leaf_key = p256_key()) == NULL) {
		ssl_err(err, errsz, "making the session CA");
		goto fail;
	}
	if (state_dir != NULL && !ca->reused) {
		if ((rc = save(ca, dir, err, errsz)) < 0)
			goto fail;
		log_info("session %s: new CA saved in %s", session, dir);
	}
	return ca;
fail:
	px_ca_free(ca);
	ERR_clear_error();
	errno = -rc;
	return NULL;
}

void
px_ca_free(struct px_ca *ca)
{
	size_t i;

	if (ca == NULL)
		return;
	for (i = 0; i < ca->ncached; i++) {
		free(ca->cache[i].host);
		SSL_CTX_free(ca->cache[i].ctx);
	}
	for (i = 0; ca->hosts != NULL && i < ca->nhosts; i++)
		free(ca->hosts[i]);
	free(ca->hosts);
	free(ca->session);
	free(ca->pem);
	X509_free(ca->cert);
	EVP_PKEY_free(ca->key);
	EVP_PKEY_free(ca->leaf_key);
	free(ca);
}

const char *
px_ca_pem(const struct px_ca *ca)
{
	return ca->pem;
}

X509 *
px_ca_cert(const struct px_ca *ca)
{
	return ca->cert;
}

int
px_ca_reused(const struct px_ca *ca)
{
	return ca->reused;
}

size_t
px_ca_cached(const struct px_ca *ca)
{
	return ca->ncached;
}

/* The leaf certificate for HOST, signed by CA; its end in *END. */
static X509 *
make_leaf(struct px_ca *ca, const char *host, time_t *end)
{
	X509 *x = X509_new();
	X509_NAME *name = X509_NAME_new();
	X509V3_CTX v3;
	char san[300];
	time_t ca_end = 0, want = time(NULL) + (time_t)PX_CA_LEAF_DAYS * 86400;
	struct tm tm;
	int ok = 0;

	/* Never outlive the CA: a verifier would refuse the chain then. */
	if (ASN1_TIME_to_tm(X509_get0_notAfter(ca->cert), &tm) == 1)
		ca_end = timegm(&tm);
	*end = ca_end != 0 && ca_end < want ? ca_end : want;
	snprintf(san, sizeof(san), "DNS:%s", host);
	if (x == NULL || name == NULL ||
	    !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)host,
	    strlen(host) <= 64 ? -1 : 64, -1, 0) ||
	    !X509_set_version(x, X509_VERSION_3) || !set_serial(x) ||
	    !X509_set_subject_name(x, name) ||
	    !X509_set_issuer_name(x, X509_get_subject_name(ca->cert)) ||
	    !set_validity(x, *end) || !X509_set_pubkey(x, ca->leaf_key))
		goto out;
	X509V3_set_ctx(&v3, ca->cert, x, NULL, NULL, 0);
	if (!add_ext(x, &v3, NID_basic_constraints, "critical,CA:FALSE") ||
	    !add_ext(x, &v3, NID_key_usage, "critical,digitalSignature") ||
	    !add_ext(x, &v3, NID_ext_key_usage, "serverAuth") ||
	    !add_ext(x, &v3, NID_subject_key_identifier, "hash") ||
	    !add_ext(x, &v3, NID_authority_key_identifier, "keyid:always") ||
	    !add_ext(x, &v3, NID_subject_alt_name, san))
		goto out;
	if (X509_sign(x, ca->key, EVP_sha256()) <= 0)
		goto out;
	ok = 1;
out:
	X509_NAME_free(name);
	if (!ok) {
		X509_free(x);
		x = NULL;
	}
	return x;
}

static SSL_CTX *
leaf_ctx(struct px_ca *ca, const char *host, time_t *end)
{
	SSL_CTX *ctx = NULL;
	X509 *x = make_leaf(ca, host, end);

	if (x == NULL || (ctx = SSL_CTX_new(TLS_server_method())) == NULL ||
	    !SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
	    SSL_CTX_use_certificate(ctx, x) != 1 ||
	    SSL_CTX_use_PrivateKey(ctx, ca->leaf_key) != 1 ||
	    SSL_CTX_check_private_key(ctx) != 1) {
		SSL_CTX_free(ctx);
		ctx = NULL;
	}
	X509_free(x);
	return ctx;
}

/* Nonzero when HOST is NAME or a name below it: what the name constraint
 * DNS:NAME admits (RFC 5280 4.2.1.10).  Only a secret whose hosts are
 * "*.DOMAIN" (kind = aws-sigv4) has names below its own terminated. */
static int
host_under(const char *name, const char *host)
{
	size_t nl = strlen(name), hl = strlen(host);

	if (strcasecmp(name, host) == 0)
		return 1;
	return hl > nl + 1 && host[hl - nl - 1] == '.' && strcasecmp(host + hl - nl, name) == 0;
}

int
px_ca_has_host(const struct px_ca *ca, const char *host)
{
	size_t i;

	for (i = 0; i < ca->nhosts; i++)
		if (host_under(ca->hosts[i], host))
			return 1;
	return 0;
}

SSL_CTX *
px_ca_leaf_ctx(struct px_ca *ca, const char *host)
{
	struct leaf *l = NULL;
	SSL_CTX *ctx;
	time_t end, now = time(NULL);
	size_t i;
	char err[300], *h;

	for (i = 0; i < ca->nhosts; i++)
		if (host_under(ca->hosts[i], host))
			break;
	if (i == ca->nhosts) {
		errno = EPERM;
		return NULL;
	}
	if (strcasecmp(ca->hosts[i], host) == 0)
		host = ca->hosts[i];
	for (i = 0; i < ca->ncached; i++)
		if (strcmp(ca->cache[i].host, host) == 0) {
			l = &ca->cache[i];
			break;
		}
	if (l != NULL && l->not_after - 86400 > now) {
		l->used = ++ca->clock;
		SSL_CTX_up_ref(l->ctx);
		return l->ctx;
	}
	if ((ctx = leaf_ctx(ca, host, &end)) == NULL) {
		ssl_err(err, sizeof(err), "making a leaf certificate");
		log_warnx("session %s: %s: %s", ca->session, host, err);
		errno = EPROTO;
		return NULL;
	}
	if (l == NULL) {
		if (ca->ncached < PX_CA_LEAF_CACHE) {
			l = &ca->cache[ca->ncached];
			if ((l->host = strdup(host)) == NULL) {
				SSL_CTX_free(ctx);
				errno = ENOMEM;
				return NULL;
			}
			ca->ncached++;
		} else {
			/* Full: the least recently used leaf makes room. */
			l = &ca->cache[0];
			for (i = 1; i < ca->ncached; i++)
				if (ca->cache[i].used < l->used)
					l = &ca->cache[i];
			if ((h = strdup(host)) == NULL) {
				SSL_CTX_free(ctx);
				errno = ENOMEM;
				return NULL;
			}
			free(l->host);
			l->host = h;
		}
	}
	SSL_CTX_free(l->ctx);
	l->ctx = ctx;
	l->not_after = end;
	l->used = ++ca->clock;
	SSL_CTX_up_ref(ctx);
	return ctx;
}
