/*
 * proxy/tls/ca.h: the certificate authority of one session, for TLS
 * termination.
 *
 * Each session that terminates TLS gets its own CA, made by the proxy.  Its
 * certificate carries X.509 name constraints (RFC 5280 §4.2.1.10, critical)
 * that permit only the session's terminated host names and exclude every
 * IPv4 and IPv6 address, so that even a stolen CA key can sign nothing a
 * verifier would accept for any other host of the session's sandbox, nor
 * for an address.  Note that a DNS name constraint "api.example.com" also
 * permits every name below it ("x.api.example.com", RFC 5280 §4.2.1.10:
 * "any DNS name that can be constructed by simply adding zero or more
 * labels to the left-hand side"); the CA itself only ever issues leaves for
 * the exact names it was given.
 *
 * The CA:
 *   key        EC P-256, never written anywhere except STATE/ca/ (0600)
 *   subject    CN=postern NAME (truncated to 64 bytes), O=postern
 *   serial     128 random bits
 *   validity   one hour ago .. PX_CA_DAYS days from now
 *   extensions basicConstraints critical CA:TRUE, pathlen:0;
 *              keyUsage critical keyCertSign, cRLSign;
 *              subjectKeyIdentifier;
 *              nameConstraints critical: permitted DNS:HOST for each host,
 *              excluded IP:0.0.0.0/0 and IP:::/0
 * A leaf (made on demand for one of the CA's hosts, then cached):
 *   key        EC P-256, one per CA (in memory only), shared by its leaves
 *   subject    CN=HOST
 *   validity   one hour ago .. min(CA's end, PX_CA_LEAF_DAYS from now)
 *   extensions basicConstraints critical CA:FALSE; keyUsage critical
 *              digitalSignature; extendedKeyUsage serverAuth;
 *              subjectAltName DNS:HOST only; authority and subject key ids
 *
 * Persistence (only when a state directory is given): STATE/ca/NAME.key
 * (the CA key, PEM, mode 0600) and STATE/ca/NAME.pem (its certificate,
 * 0644), written to temporary files and renamed into place.  A restart
 * with the same session reuses the saved CA when every host of the new set
 * lies within its name constraints and it has at least PX_CA_REUSE_DAYS
 * left, so that running sandboxes that trust it keep working; otherwise a
 * new CA replaces it, and the log says why.  A key file that is not a
 * regular file owned by the effective uid with mode 0600 (or a directory
 * that others may write) is refused: px_ca_new() fails with a clear error
 * and nothing is overwritten.
 *
 * Not thread-safe: one CA is used on the loop's thread only.
 */
#ifndef POSTERN_PROXY_CA_H
#define POSTERN_PROXY_CA_H

#include <stddef.h>

#include <openssl/ssl.h>
#include <openssl/x509.h>

/* Lifetimes and bounds, in days and entries. */
#define PX_CA_DAYS 365
#define PX_CA_REUSE_DAYS 30
#define PX_CA_LEAF_DAYS 90
#define PX_CA_LEAF_CACHE 64

struct px_ca;

/*
 * The CA of session SESSION for the N host names HOSTS (normalised by
 * conf/host: lower case, no trailing dot; 1 <= N).  STATE_DIR is the state
 * directory, or NULL to keep the CA in memory only; STATE_DIR must exist
 * and STATE_DIR/ca is made (0700) if missing.  The strings are copied.
 * Returns the CA, or NULL with errno set and a one-line reason in ERR
 * (ERRSZ bytes, always terminated): EINVAL for a bad session name, no
 * hosts, or a host that is an IP address; EPERM for a key file or
 * directory of the wrong type, owner or mode; another errno for a file
 * that cannot be read or written; EPROTO when OpenSSL fails.  Free with
 * px_ca_free().
 */
struct px_ca *px_ca_new(const char *session, const char *const *hosts, size_t n,
    const char *state_dir, char *err, size_t errsz);

/* Free CA and its cached leaves.  px_ca_free(NULL) is a no-op.  SSL_CTXs
 * handed out by px_ca_leaf_ctx() stay valid: each holds its own reference. */
void px_ca_free(struct px_ca *ca);

/* The CA certificate in PEM (what the sandbox trusts), owned by CA. */
const char *px_ca_pem(const struct px_ca *ca);

/* The CA certificate, owned by CA (take a reference with X509_up_ref() to
 * keep it beyond px_ca_free()). */
X509 *px_ca_cert(const struct px_ca *ca);

/* 1 if CA was loaded from the state directory, 0 if it was made now. */
int px_ca_reused(const struct px_ca *ca);

/*
 * A server-side SSL_CTX presenting the leaf for HOST (one of the CA's
 * hosts, compared exactly, case-insensitively) with the CA's certificate as
 * its chain, TLS 1.2 or newer.  Made on first use and cached; the cache
 * holds at most PX_CA_LEAF_CACHE leaves, dropping the least recently used,
 * and a leaf within a day of its end is made anew.  Returns a new reference
 * the caller releases with SSL_CTX_free(), or NULL with errno: EPERM when
 * HOST is not one of the CA's hosts, EPROTO (the OpenSSL error queue
 * logged) or ENOMEM.  The context is shared by every caller asking for
 * HOST (use it with SSL_new(), or SSL_set_SSL_CTX() from a servername
 * callback); settings made on it (ALPN) apply to all of them.
 */
SSL_CTX *px_ca_leaf_ctx(struct px_ca *ca, const char *host);

/* 1 when HOST is one of the hosts CA was made for (compared as
 * px_ca_leaf_ctx() does), else 0. */
int px_ca_has_host(const struct px_ca *ca, const char *host);

/* How many leaves the cache holds now (for tests and /status). */
size_t px_ca_cached(const struct px_ca *ca);

#endif
