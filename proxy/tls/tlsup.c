/*
 * proxy/tls/tlsup.c: the client side of TLS to an upstream, verified
 * (proxy/tls/tlsup.h has the contract).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include "proxy/tls/tlsup.h"

SSL_CTX *
px_tlsup_ctx_new(const char *ca_file, char *err, size_t errsz)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	unsigned long e;
	char buf[256] = "OpenSSL failed";
	int ok = 0;

	if (ctx == NULL || !SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION))
		goto out;
	if (ca_file != NULL ? SSL_CTX_load_verify_file(ctx, ca_file) != 1
	    : SSL_CTX_set_default_verify_paths(ctx) != 1)
		goto out;
	/* A failed verification fails the handshake: never "continue and
	 * look at the result later", which a caller could forget to do. */
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	ok = 1;
out:
	if (!ok) {
		if ((e = ERR_peek_error()) != 0)
			ERR_error_string_n(e, buf, sizeof(buf));
		ERR_clear_error();
		if (errsz > 0)
			snprintf(err, errsz, "upstream TLS: %s%s%s", ca_file ? ca_file : "",
			    ca_file ? ": " : "", buf);
		SSL_CTX_free(ctx);
		errno = EPROTO;
		return NULL;
	}
	return ctx;
}

int
px_tlsup_prepare(SSL *ssl, const char *host)
{
	unsigned char a[16];
	int literal = inet_pton(AF_INET, host, a) == 1 || inet_pton(AF_INET6, host, a) == 1;

	/* X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS: "f*.example.com" matches
	 * nothing (RFC 6125 §6.4.3 leaves it to policy; browsers refuse it). */
	SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	if (literal) {
		X509_VERIFY_PARAM *p = SSL_get0_param(ssl);

		if (X509_VERIFY_PARAM_set1_ip_asc(p, host) != 1)
			goto fail;
		return 0;
	}
	if (SSL_set_tlsext_host_name(ssl, host) != 1 || SSL_set1_host(ssl, host) != 1)
		goto fail;
	return 0;
fail:
	ERR_clear_error();
	return -EPROTO;
}

const char *
px_tlsup_reason(long v)
{
	switch (v) {
	case X509_V_OK:
		return "verified";
	case X509_V_ERR_CERT_HAS_EXPIRED:
		return "certificate has expired";
	case X509_V_ERR_CERT_NOT_YET_VALID:
		return "certificate is not yet valid";
	case X509_V_ERR_HOSTNAME_MISMATCH:
	case X509_V_ERR_IP_ADDRESS_MISMATCH:
		return "hostname mismatch";
	case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
	case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
		return "self-signed certificate";
	case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
	case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
	case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
	case X509_V_ERR_CERT_UNTRUSTED:
	case X509_V_ERR_CERT_REJECTED:
		return "untrusted issuer";
	case X509_V_ERR_CERT_REVOKED:
		return "certificate revoked";
	case X509_V_ERR_CERT_SIGNATURE_FAILURE:
		return "bad certificate signature";
	case X509_V_ERR_INVALID_PURPOSE:
		return "not a server certificate";
	case X509_V_ERR_INVALID_CA:
	case X509_V_ERR_PATH_LENGTH_EXCEEDED:
		return "invalid CA in chain";
	case X509_V_ERR_PERMITTED_VIOLATION:
	case X509_V_ERR_EXCLUDED_VIOLATION:
		return "name constraints violated";
	case X509_V_ERR_EE_KEY_TOO_SMALL:
	case X509_V_ERR_CA_KEY_TOO_SMALL:
	case X509_V_ERR_CA_MD_TOO_WEAK:
		return "weak key or signature";
	default:
		return "certificate verification failed";
	}
}
