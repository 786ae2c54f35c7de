/*
 * proxy/proto/sni.c: the TLS ClientHello inspector (see proxy/proto/sni.h).
 *
 * The TLS record and handshake layers are OpenSSL's: a server-side SSL
 * object reads the client's bytes from a memory BIO, reassembles the
 * ClientHello across records and segments, and calls hello_cb() once the
 * whole message is there.  The callback reads the server_name extension and
 * fails the handshake, so OpenSSL never gets further than parsing.  Its
 * output (the alert) goes to a null BIO: nothing is ever sent.  Only the
 * small server_name structure of RFC 6066 §3 is walked here, with the
 * base cursor (base/cursor.h), because OpenSSL 3.0 fills in
 * SSL_get_servername() only after the ClientHello callback has returned.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "base/cursor.h"
#include "conf/host.h"
#include "proxy/proto/sni.h"

/* Bytes kept for classifying the start of the stream (an SSLv2 header plus
 * message type and version is the longest case). */
#define SNI_HEAD 5

struct px_sni {
	SSL *ssl;               /* NULL once a final result is reached */
	size_t max_bytes;
	size_t fed;             /* bytes handed to OpenSSL, <= max_bytes */
	unsigned char head[SNI_HEAD];
	size_t head_len;
	int is_tls;             /* the start looked like a TLS handshake record */
	enum px_sni_result result;
	const char *why;
	int has_name;
	struct cf_host host;    /* valid when has_name */
	int alpn;               /* PX_SNI_ALPN_* offered, when PX_SNI_HELLO */
};

/*
 * One context for all inspectors, made on first use.  The lock makes the
 * lazy creation safe should two threads ever run proxy engines; each SSL
 * object holds its own reference to the context, so px_sni_cleanup() may
 * drop the shared one while inspectors are alive.
 */
static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static SSL_CTX *shared_ctx;

enum sniff { SNIFF_MORE, SNIFF_TLS, SNIFF_NOT_TLS, SNIFF_BAD };

/*
 * Look at the first N bytes of the stream and say whether they open a TLS
 * handshake record, something TLS-like that is refused, or not TLS.  This
 * reads at most five fixed header bytes and is no TLS parser: everything
 * past the first two bytes of a TLS record is left to OpenSSL.
 */
static enum sniff
sniff(const unsigned char *h, size_t n, const char **why)
{
	if (n < 1)
		return SNIFF_MORE;
	switch (h[0]) {
	case 0x16:
		/* ContentType handshake(22): judged as TLS whatever the record
		 * version bytes say.  Every TLS version writes 0x03 0x0x there
		 * (RFC 8446 §5.1, legacy_record_version), but servers do not all
		 * check: Go's crypto/tls takes any version below 0x1000 in the
		 * first record.  Classing "16 02 01" as "not TLS" would wave a
		 * ClientHello for another name through unchecked, so OpenSSL
		 * parses it (and refuses the version, giving PX_SNI_BAD). */
		return SNIFF_TLS;
	case 0x14: /* change_cipher_spec */
	case 0x15: /* alert */
	case 0x17: /* application_data */
	case 0x18: /* heartbeat (RFC 6520) */
		if (n < 2)
			return SNIFF_MORE;
		if (h[1] != 0x03)
			return SNIFF_NOT_TLS;
		/* A TLS connection opens with the client's ClientHello
		 * (RFC 8446 §4.1.2; a change_cipher_spec is only allowed after
		 * it, §D.4).  A stream that opens with another record type would
		 * pass this check as "not TLS" while a lenient server skips the
		 * record and reads the ClientHello after it, unchecked. */
		*why = "TLS record other than a handshake before the ClientHello";
		return SNIFF_BAD;
	default:
		break;
	}
	if (h[0] & 0x80) {
		/* SSLv2 record header: two bytes of length with the high bit
		 * set, then msg_type CLIENT-HELLO(1) and a version, 0x0002 or
		 * SSLv3/TLS 0x03xx (RFC 5246 Appendix E.2).  Such a hello has no
		 * extensions and so no server_name, and RFC 6176 §3 says TLS
		 * clients MUST NOT send it: refuse rather than wave it through
		 * as "no SNI". */
		if (n < 3)
			return SNIFF_MORE;
		if (h[2] != 0x01)
			return SNIFF_NOT_TLS;
		if (n < 4)
			return SNIFF_MORE;
		if (h[3] == 0x03) {
			*why = "SSLv2-compatible ClientHello (RFC 6176)";
			return SNIFF_BAD;
		}
		if (h[3] != 0x00)
			return SNIFF_NOT_TLS;
		if (n < 5)
			return SNIFF_MORE;
		if (h[4] == 0x02) {
			*why = "SSLv2-compatible ClientHello (RFC 6176)";
			return SNIFF_BAD;
		}
		return SNIFF_NOT_TLS;
	}
	return SNIFF_NOT_TLS;
}

/*
 * Parse the body of a ClientHello server_name extension (RFC 6066 §3):
 *
 *     struct { NameType name_type; HostName host_name; } ServerName;
 *     struct { ServerName server_name_list<1..2^16-1>; } ServerNameList;
 *
 * Exactly one entry of type host_name(0) is accepted, with no bytes after
 * it.  RFC 6066 allows one name per type and no other type was ever
 * defined; OpenSSL, for one, reads the first entry and ignores the rest.
 * Accepting a second entry or trailing bytes would let this check read one
 * name while the upstream server reads another, so they are refused.
 */
static void
parse_server_name(struct px_sni *s, const unsigned char *ext, size_t len)
{
	struct bs_cursor c;
	const unsigned char *name;
	uint16_t list_len, name_len;
	uint8_t type;
	const char *why = NULL;

	bs_cur_init(&c, ext, len);
	s->result = PX_SNI_BAD;
	if (bs_cur_fetch_be16(&c, &list_len) != 0 || list_len != bs_cur_left(&c)) {
		s->why = "server_name list length does not match the extension";
		return;
	}
	if (list_len == 0) {
		s->why = "empty server_name list";
		return;
	}
	if (bs_cur_fetch_u8(&c, &type) != 0 || type != 0) {
		s->why = "server_name of a type other than host_name";
		return;
	}
	if (bs_cur_fetch_be16(&c, &name_len) != 0 ||
	    bs_cur_fetch_bytes(&c, name_len, &name) != 0) {
		s->why = "truncated server_name";
		return;
	}
	if (bs_cur_left(&c) != 0) {
		s->why = "more than one entry in the server_name list";
		return;
	}
	/* The one normaliser: refuses IP literals (RFC 6066 §3: "Literal IPv4
	 * and IPv6 addresses are not permitted"), raw UTF-8, NUL and other
	 * control bytes, an empty name, over-long names and labels. */
	if (cf_host_parse((const char *)name, name_len, CF_HOST_NO_IP, &s->host,
	    &why) != 0) {
		s->why = why != NULL ? why : "invalid server_name";
		return;
	}
	s->has_name = 1;
	s->result = PX_SNI_HELLO;
	s->why = NULL;
}

/*
 * Read the protocols a ClientHello's ALPN extension offers (RFC 7301 §3.1):
 *
 *     opaque ProtocolName<1..2^8-1>;
 *     struct { ProtocolName protocol_name_list<2..2^16-1> } ProtocolNameList;
 *
 * Only "h2" and "http/1.1" mean anything here (PX_SNI_ALPN_*).  A list that
 * does not parse offers nothing: it decides no refusal here, since the
 * check's verdict is the server_name's, and a terminating proxy's own
 * handshake (OpenSSL's parser) refuses such a ClientHello anyway.
 */
static int
parse_alpn(const unsigned char *ext, size_t len)
{
	struct bs_cursor c;
	const unsigned char *name;
	uint16_t list_len;
	uint8_t nlen;
	int got = 0;

	bs_cur_init(&c, ext, len);
	if (bs_cur_fetch_be16(&c, &list_len) != 0 || list_len != bs_cur_left(&c) ||
	    list_len < 2)
		return 0;
	while (bs_cur_left(&c) > 0) {
		if (bs_cur_fetch_u8(&c, &nlen) != 0 || nlen == 0 ||
		    bs_cur_fetch_bytes(&c, nlen, &name) != 0)
			return 0;
		if (nlen == 2 && memcmp(name, "h2", 2) == 0)
			got |= PX_SNI_ALPN_H2;
		else if (nlen == 8 && memcmp(name, "http/1.1", 8) == 0)
			got |= PX_SNI_ALPN_HTTP11;
	}
	return got;
}

/*
 * OpenSSL calls this once the whole ClientHello has been read and its
 * extensions collected (duplicates already refused), before any version or
 * cipher negotiation.  It records the verdict and always stops the
 * handshake: the SSL object has done its job.
 */
static int
hello_cb(SSL *ssl, int *al, void *arg)
{
	struct px_sni *s = SSL_get_app_data(ssl);
	const unsigned char *ext;
	size_t len;

	(void)arg;
	*al = SSL_AD_INTERNAL_ERROR; /* the alert goes to a null BIO anyway */
	if (s == NULL)
		return SSL_CLIENT_HELLO_ERROR;
	if (SSL_client_hello_isv2(ssl)) {
		/* sniff() turns these away before OpenSSL sees them. */
		s->result = PX_SNI_BAD;
		s->why = "SSLv2-compatible ClientHello (RFC 6176)";
		return SSL_CLIENT_HELLO_ERROR;
	}
	if (SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_application_layer_protocol_negotiation,
	    &ext, &len) == 1)
		s->alpn = parse_alpn(ext, len);
	if (SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_server_name, &ext, &len) != 1) {
		s->result = PX_SNI_HELLO;
		s->has_name = 0;
		return SSL_CLIENT_HELLO_ERROR;
	}
	parse_server_name(s, ext, len);
	return SSL_CLIENT_HELLO_ERROR;
}

static SSL_CTX *
ctx_make(void)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());

	if (ctx == NULL)
		return NULL;
	/* No session is ever created; keep OpenSSL from caching anything. */
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_client_hello_cb(ctx, hello_cb, NULL);
	return ctx;
}

/*
 * The throwaway server-side SSL object on memory BIOs, made only once the
 * stream looks like TLS: most tunnels that are not TLS never pay for it.
 * Returns 0 or -1.
 */
static int
make_ssl(struct px_sni *s)
{
	BIO *rbio = NULL, *wbio = NULL;
	int rc = -1;

	pthread_mutex_lock(&ctx_lock);
	if (shared_ctx == NULL)
		shared_ctx = ctx_make();
	if (shared_ctx != NULL)
		s->ssl = SSL_new(shared_ctx);
	pthread_mutex_unlock(&ctx_lock);
	if (s->ssl == NULL)
		goto out;
	rbio = BIO_new(BIO_s_mem());
	wbio = BIO_new(BIO_s_null());
	if (rbio == NULL || wbio == NULL)
		goto out;
	/* SSL_set_bio() takes ownership of both. */
	SSL_set_bio(s->ssl, rbio, wbio);
	rbio = wbio = NULL;
	SSL_set_accept_state(s->ssl);
	SSL_set_app_data(s->ssl, s);
	rc = 0;
out:
	BIO_free(rbio);
	BIO_free(wbio);
	ERR_clear_error();
	return rc;
}

struct px_sni *
px_sni_new(size_t max_bytes)
{
	struct px_sni *s;

	if (max_bytes < PX_SNI_MIN_BYTES || max_bytes > PX_SNI_MAX_BYTES) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	s->max_bytes = max_bytes;
	s->result = PX_SNI_NEED_MORE;
	return s;
}

void
px_sni_free(struct px_sni *s)
{
	if (s == NULL)
		return;
	SSL_free(s->ssl);
	free(s);
}

/* Reach a final result: release OpenSSL's objects, keep the verdict. */
static enum px_sni_result
finish(struct px_sni *s, enum px_sni_result r, const char *why)
{
	s->result = r;
	if (why != NULL)
		s->why = why;
	if (r != PX_SNI_HELLO)
		s->has_name = 0;
	SSL_free(s->ssl);
	s->ssl = NULL;
	return r;
}

enum px_sni_result
px_sni_feed(struct px_sni *s, const void *data, size_t len)
{
	const unsigned char *p = data;
	const char *why = NULL;
	size_t take, i;
	int rc;

	if (s->result != PX_SNI_NEED_MORE)
		return s->result;
	/* Never look past MAX_BYTES: the bound on what OpenSSL buffers. */
	take = s->max_bytes - s->fed;
	if (take > len)
		take = len;
	for (i = 0; i < take && s->head_len < SNI_HEAD; i++)
		s->head[s->head_len++] = p[i];
	s->fed += take;

	if (!s->is_tls) {
		/* Until the stream looks like TLS, every byte seen is in head
		 * (sniff() decides within SNI_HEAD bytes). */
		switch (sniff(s->head, s->head_len, &why)) {
		case SNIFF_MORE:
			return PX_SNI_NEED_MORE;
		case SNIFF_NOT_TLS:
			return finish(s, PX_SNI_NOT_TLS, "the stream does not start with a TLS handshake record");
		case SNIFF_BAD:
			return finish(s, PX_SNI_BAD, why);
		case SNIFF_TLS:
			s->is_tls = 1;
			break;
		}
		if (make_ssl(s) != 0)
			return finish(s, PX_SNI_BAD, "out of memory inspecting the ClientHello");
		/* Hand OpenSSL the bytes seen so far: the head, then the rest of
		 * this chunk past what went into the head. */
		if (BIO_write(SSL_get_rbio(s->ssl), s->head, (int)s->head_len) != (int)s->head_len ||
		    (take > i && BIO_write(SSL_get_rbio(s->ssl), p + i, (int)(take - i)) != (int)(take - i))) {
			ERR_clear_error();
			return finish(s, PX_SNI_BAD, "out of memory inspecting the ClientHello");
		}
	} else if (take > 0 && BIO_write(SSL_get_rbio(s->ssl), p, (int)take) != (int)take) {
		ERR_clear_error();
		return finish(s, PX_SNI_BAD, "out of memory inspecting the ClientHello");
	}
	if (take == 0)
		return PX_SNI_NEED_MORE;

	ERR_clear_error();
	rc = SSL_do_handshake(s->ssl);
	if (s->result != PX_SNI_NEED_MORE) {
		/* hello_cb() decided. */
		ERR_clear_error();
		return finish(s, s->result, NULL);
	}
	rc = SSL_get_error(s->ssl, rc);
	ERR_clear_error();
	if (rc == SSL_ERROR_WANT_READ) {
		if (s->fed >= s->max_bytes)
			return finish(s, PX_SNI_TOO_BIG, "no complete ClientHello within the byte limit");
		return PX_SNI_NEED_MORE;
	}
	/* OpenSSL refused the records or the ClientHello before the callback:
	 * a bad record header or version, a message other than ClientHello,
	 * interleaved records of another type, malformed or duplicate
	 * extensions. */
	if (s->head_len >= 2 && s->head[1] != 0x03)
		return finish(s, PX_SNI_BAD, "TLS handshake record with a record version other than 3.x");
	return finish(s, PX_SNI_BAD, "malformed TLS ClientHello");
}

int
px_sni_name(const struct px_sni *s, struct cf_host *host)
{
	if (s->result != PX_SNI_HELLO)
		return -EINVAL;
	if (!s->has_name)
		return 0;
	*host = s->host;
	return 1;
}

int
px_sni_alpn(const struct px_sni *s)
{
	if (s->result != PX_SNI_HELLO)
		return -EINVAL;
	return s->alpn;
}

const char *
px_sni_why(const struct px_sni *s)
{
	switch (s->result) {
	case PX_SNI_BAD:
	case PX_SNI_NOT_TLS:
	case PX_SNI_TOO_BIG:
		return s->why;
	default:
		return NULL;
	}
}

void
px_sni_cleanup(void)
{
	pthread_mutex_lock(&ctx_lock);
	SSL_CTX_free(shared_ctx);
	shared_ctx = NULL;
	pthread_mutex_unlock(&ctx_lock);
}
