/*
 * proxy/tls/tlsup.h: the client side of TLS to an upstream, verified
 * (a terminated tunnel is re-encrypted to the real host, and that host must
 * prove who it is).
 *
 * The upstream's chain is verified against the system store or a
 * configured CA file (for tests and private CAs), the name the client asked
 * for is checked against the certificate (RFC 6125 through OpenSSL's
 * X509_check_host, no partial wildcards), and nothing older than TLS 1.2
 * is spoken (RFC 8996 deprecates 1.0 and 1.1).
 */
#ifndef POSTERN_PROXY_TLSUP_H
#define POSTERN_PROXY_TLSUP_H

#include <stddef.h>

#include <openssl/ssl.h>

/*
 * A client SSL_CTX for upstreams: peer verification on (SSL_VERIFY_PEER,
 * so a failed verification fails the handshake), TLS 1.2 minimum, trust
 * from CA_FILE (PEM, one or more certificates) or, when CA_FILE is NULL,
 * from OpenSSL's default store (Debian: /etc/ssl/certs).  Returns the
 * context (free with SSL_CTX_free()), or NULL with errno (EPROTO) and a
 * one-line reason in ERR (ERRSZ bytes).
 */
SSL_CTX *px_tlsup_ctx_new(const char *ca_file, char *err, size_t errsz);

/*
 * Prepare SSL (made from a px_tlsup_ctx_new() context) to connect to HOST:
 * SNI set to HOST (unless it is an IP literal, RFC 6066 §3) and the
 * certificate required to be valid for HOST (a name, or an IP address).
 * Returns 0, or -EPROTO.  HOST is copied.
 */
int px_tlsup_prepare(SSL *ssl, const char *host);

/*
 * A short, fixed text for the verification result V (SSL_get_verify_result()
 * after a failed handshake), for a refusal's detail and the audit log:
 * "certificate has expired", "hostname mismatch", "untrusted issuer", ...
 * X509_V_OK gives "verified".  Never NULL; a static string.
 */
const char *px_tlsup_reason(long v);

#endif
