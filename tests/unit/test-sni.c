/*
 * tests/unit/test-sni.c: the ClientHello inspector, fed real ClientHellos
 * made here by OpenSSL client objects on memory BIOs (TLS 1.3 and 1.2-only,
 * with and without SNI, with big extensions), ClientHellos captured from
 * curl and openssl s_client (tests/unit/data/), and hostile variants: each
 * fed whole, one byte at a time, in 7-byte segments, and re-framed into
 * 50-byte TLS records.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "conf/host.h"
#include "proxy/proto/sni.h"
#include "tests/unit/tap.h"

#define MAX_DEFAULT (64 * 1024)
/* A private extension type the tests give a hand-made body to, and then
 * rename to server_name(0) in the finished ClientHello: OpenSSL refuses to
 * register a custom server_name extension itself. */
#define MARK_EXT 0xfade

struct buf {
	unsigned char *p;
	size_t len;
};

struct hello_opts {
	const char *sni;           /* NULL: no server_name */
	int max_version;           /* 0: OpenSSL's default, TLS 1.3 */
	const unsigned char *ext;  /* body of a MARK_EXT extension, or NULL */
	size_t ext_len;
	const char *alpn;          /* ALPN list in wire form, or NULL */
	size_t alpn_len;
};

static const char *
result_name(enum px_sni_result r)
{
	switch (r) {
	case PX_SNI_NEED_MORE: return "NEED_MORE";
	case PX_SNI_HELLO: return "HELLO";
	case PX_SNI_NOT_TLS: return "NOT_TLS";
	case PX_SNI_BAD: return "BAD";
	case PX_SNI_TOO_BIG: return "TOO_BIG";
	}
	return "?";
}

static void
buf_free(struct buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = 0;
}

static int
buf_append(struct buf *b, const void *data, size_t len)
{
	unsigned char *np = realloc(b->p, b->len + len + 1);

	if (np == NULL)
		return -1;
	b->p = np;
	memcpy(b->p + b->len, data, len);
	b->len += len;
	return 0;
}

static int
ext_add(SSL *s, unsigned int type, unsigned int context,
    const unsigned char **out, size_t *outlen, X509 *x, size_t chainidx,
    int *al, void *arg)
{
	const struct hello_opts *o = arg;

	*out = o->ext;
	*outlen = o->ext_len;
	return 1;
}

/* Run an OpenSSL client up to its first flight and take the bytes. */
static int
make_hello(const struct hello_opts *o, struct buf *out)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	SSL *ssl = NULL;
	BIO *rbio, *wbio;
	int rc = -1;
	size_t pending;

	memset(out, 0, sizeof(*out));
	if (ctx == NULL)
		goto out;
	if (o->max_version != 0 &&
	    !SSL_CTX_set_max_proto_version(ctx, o->max_version))
		goto out;
	if (o->ext != NULL &&
	    !SSL_CTX_add_custom_ext(ctx, MARK_EXT, SSL_EXT_CLIENT_HELLO, ext_add,
	    NULL, (void *)o, NULL, NULL))
		goto out;
	ssl = SSL_new(ctx);
	rbio = BIO_new(BIO_s_mem());
	wbio = BIO_new(BIO_s_mem());
	if (ssl == NULL || rbio == NULL || wbio == NULL) {
		BIO_free(rbio);
		BIO_free(wbio);
		goto out;
	}
	SSL_set_bio(ssl, rbio, wbio);
	SSL_set_connect_state(ssl);
	if (o->sni != NULL && !SSL_set_tlsext_host_name(ssl, o->sni))
		goto out;
	/* SSL_set_alpn_protos() returns 0 on success. */
	if (o->alpn != NULL &&
	    SSL_set_alpn_protos(ssl, (const unsigned char *)o->alpn, (unsigned)o->alpn_len) != 0)
		goto out;
	if (SSL_do_handshake(ssl) != -1 ||
	    SSL_get_error(ssl, -1) != SSL_ERROR_WANT_READ)
		goto out;
	pending = BIO_ctrl_pending(wbio);
	out->p = malloc(pending ? pending : 1);
	if (out->p == NULL)
		goto out;
	if (BIO_read(wbio, out->p, (int)pending) != (int)pending)
		goto out;
	out->len = pending;
	rc = 0;
out:
	if (rc != 0)
		buf_free(out);
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	ERR_clear_error();
	return rc;
}

/* Count the TLS records in B (all must be complete). */
static int
count_records(const struct buf *b)
{
	size_t off = 0;
	int n = 0;

	while (off + 5 <= b->len) {
		off += 5 + (((size_t)b->p[off + 3] << 8) | b->p[off + 4]);
		n++;
	}
	return off == b->len ? n : -1;
}

/*
 * Re-frame the handshake bytes of IN into records of at most RECSIZE bytes
 * of payload each, so the ClientHello message is split over many records
 * (RFC 8446 §5.1 allows a handshake message to span records).
 */
static int
reframe(const struct buf *in, size_t recsize, struct buf *out)
{
	struct buf payload = { NULL, 0 };
	size_t off = 0, n;
	unsigned char hdr[5];
	int rc = -1;

	memset(out, 0, sizeof(*out));
	while (off + 5 <= in->len) {
		n = ((size_t)in->p[off + 3] << 8) | in->p[off + 4];
		if (in->p[off] != 0x16 || off + 5 + n > in->len ||
		    buf_append(&payload, in->p + off + 5, n) != 0)
			goto out;
		off += 5 + n;
	}
	if (off != in->len || payload.len == 0)
		goto out;
	for (off = 0; off < payload.len; off += n) {
		n = payload.len - off < recsize ? payload.len - off : recsize;
		hdr[0] = 0x16;
		hdr[1] = in->p[1];
		hdr[2] = in->p[2];
		hdr[3] = (unsigned char)(n >> 8);
		hdr[4] = (unsigned char)n;
		if (buf_append(out, hdr, 5) != 0 ||
		    buf_append(out, payload.p + off, n) != 0)
			goto out;
	}
	rc = 0;
out:
	buf_free(&payload);
	if (rc != 0)
		buf_free(out);
	return rc;
}

/* Rename the MARK_EXT extension with body BODY in B to server_name(0). */
static int
rename_marker(struct buf *b, const unsigned char *body, size_t len)
{
	size_t i;

	for (i = 0; i + 4 + len <= b->len; i++) {
		if (b->p[i] == (MARK_EXT >> 8) && b->p[i + 1] == (MARK_EXT & 0xff) &&
		    b->p[i + 2] == (len >> 8) && b->p[i + 3] == (len & 0xff) &&
		    memcmp(b->p + i + 4, body, len) == 0) {
			b->p[i] = 0;
			b->p[i + 1] = 0;
			return 0;
		}
	}
	return -1;
}

static int
read_file(const char *name, struct buf *out)
{
	char path[1024];
	unsigned char chunk[4096];
	FILE *f;
	size_t got;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "%s/%s", SNI_DATA_DIR, name);
	f = fopen(path, "rb");
	if (f == NULL)
		return -1;
	while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (buf_append(out, chunk, got) != 0) {
			fclose(f);
			buf_free(out);
			return -1;
		}
	}
	fclose(f);
	return 0;
}

enum mode { WHOLE, BYTEWISE, CHUNK7, NMODES };
static const char *const mode_name[] = { "whole", "byte by byte", "7-byte segments" };

/*
 * Feed B to S in mode M.  Returns the result and sets *AT to the number of
 * bytes fed when the result became final (B->len + 1 if it never did).
 */
static enum px_sni_result
feed(struct px_sni *s, const struct buf *b, enum mode m, size_t *at)
{
	size_t step = m == WHOLE ? (b->len ? b->len : 1) : m == BYTEWISE ? 1 : 7;
	size_t off = 0, n;
	enum px_sni_result r = PX_SNI_NEED_MORE;

	*at = b->len + 1;
	while (off < b->len) {
		n = b->len - off < step ? b->len - off : step;
		r = px_sni_feed(s, b->p + off, n);
		off += n;
		if (r != PX_SNI_NEED_MORE) {
			*at = off;
			break;
		}
	}
	return r;
}

/*
 * Feed B to a fresh inspector of MAX bytes in every mode and check the
 * result, the name, that byte-by-byte feeding decides exactly at the last
 * byte of a ClientHello, at HELLO_LEN (a truncated one stays NEED_MORE),
 * that a final result is sticky, and that OpenSSL's error queue is left
 * empty.
 */
static void
check_at(const char *what, const struct buf *b, size_t max,
    enum px_sni_result want, const char *want_name, size_t hello_len)
{
	int m;

	for (m = 0; m < NMODES; m++) {
		struct px_sni *s = px_sni_new(max);
		struct cf_host h;
		enum px_sni_result r, again;
		size_t at = 0;
		int ok, named = -2;
		const char *why;

		if (s == NULL) {
			tap_ok(0, "%s: px_sni_new: %s", what, strerror(errno));
			continue;
		}
		r = feed(s, b, (enum mode)m, &at);
		ok = r == want;
		if (r == PX_SNI_HELLO) {
			memset(&h, 0, sizeof(h));
			named = px_sni_name(s, &h);
			if (want_name != NULL)
				ok = ok && named == 1 && h.kind == CF_HOST_NAME &&
				    strcmp(h.name, want_name) == 0;
			else
				ok = ok && named == 0;
		}
		why = px_sni_why(s);
		if (r == PX_SNI_HELLO || r == PX_SNI_NEED_MORE)
			ok = ok && why == NULL;
		else
			ok = ok && why != NULL && why[0] != '\0';
		if (m == BYTEWISE && want == PX_SNI_HELLO)
			ok = ok && at == hello_len;
		again = px_sni_feed(s, "\x16\x03\x01", 3);
		ok = ok && again == r && px_sni_feed(s, NULL, 0) == r;
		ok = ok && ERR_peek_error() == 0;
		tap_ok(ok, "%s, %s: %s%s%s%s%s (want %s%s%s)", what, mode_name[m],
		    result_name(r), named == 1 ? " " : "",
		    named == 1 ? h.name : "", why ? ": " : "", why ? why : "",
		    result_name(want), want_name ? " " : "", want_name ? want_name : "");
		px_sni_free(s);
	}
}

static void
check(const char *what, const struct buf *b, size_t max,
    enum px_sni_result want, const char *want_name)
{
	check_at(what, b, max, want, want_name, b->len);
}

/* check() on B and on B re-framed into 50-byte records. */
static void
check_all(const char *what, const struct buf *b, size_t max,
    enum px_sni_result want, const char *want_name)
{
	struct buf rf;
	char label[256];

	check(what, b, max, want, want_name);
	if (reframe(b, 50, &rf) != 0) {
		tap_ok(0, "%s: re-frame into 50-byte records", what);
		return;
	}
	snprintf(label, sizeof(label), "%s in %d 50-byte records", what,
	    count_records(&rf));
	check(label, &rf, max, want, want_name);
	buf_free(&rf);
}

static void
test_generated(void)
{
	static const struct {
		const char *what, *sni;
		int max_version;
		enum px_sni_result want;
		const char *name;
	} cases[] = {
		{ "TLS 1.3 with SNI", "api.anthropic.com", 0, PX_SNI_HELLO, "api.anthropic.com" },
		{ "TLS 1.2-only with SNI", "api.anthropic.com", TLS1_2_VERSION, PX_SNI_HELLO, "api.anthropic.com" },
		{ "TLS 1.3 without SNI", NULL, 0, PX_SNI_HELLO, NULL },
		{ "TLS 1.2-only without SNI", NULL, TLS1_2_VERSION, PX_SNI_HELLO, NULL },
		{ "upper case and trailing dot", "API.Anthropic.COM.", 0, PX_SNI_HELLO, "api.anthropic.com" },
		{ "punycode", "xn--bcher-kva.example", 0, PX_SNI_HELLO, "xn--bcher-kva.example" },
		{ "253-octet name", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa."
		    "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb."
		    "ccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc."
		    "ddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd",
		    0, PX_SNI_HELLO,
		    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa."
		    "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb."
		    "ccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc."
		    "ddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd" },
		{ "254-octet name", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa."
		    "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb."
		    "ccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc."
		    "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd",
		    0, PX_SNI_BAD, NULL },
		{ "64-octet label", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.example",
		    0, PX_SNI_BAD, NULL },
		{ "IPv4 literal", "127.0.0.1", 0, PX_SNI_BAD, NULL },
		{ "IPv4 literal, TLS 1.2", "10.200.0.1", TLS1_2_VERSION, PX_SNI_BAD, NULL },
		{ "non-canonical IPv4", "0x7f.1", 0, PX_SNI_BAD, NULL },
		{ "IPv6 literal", "::1", 0, PX_SNI_BAD, NULL },
		{ "bracketed IPv6 literal", "[::1]", 0, PX_SNI_BAD, NULL },
		{ "raw UTF-8", "b\xc3\xbc" "cher.example", 0, PX_SNI_BAD, NULL },
		{ "underscore", "under_score.example", 0, PX_SNI_BAD, NULL },
		{ "empty label", "a..example", 0, PX_SNI_BAD, NULL },
		{ "userinfo", "user@example.com", 0, PX_SNI_BAD, NULL },
		{ "port in name", "example.com:443", 0, PX_SNI_BAD, NULL },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hello_opts o = { cases[i].sni, cases[i].max_version, NULL, 0, NULL, 0 };
		struct buf b;

		if (make_hello(&o, &b) != 0) {
			tap_ok(0, "%s: make a ClientHello", cases[i].what);
			continue;
		}
		check_all(cases[i].what, &b, MAX_DEFAULT, cases[i].want, cases[i].name);
		buf_free(&b);
	}
}

/*
 * The version fields are not the inspector's business: version
 * negotiation happens after the ClientHello callback, upstream, so a
 * ClientHello saying SSL 3.0, TLS 1.0 or an unknown 3.x is still read.
 */
static void
test_versions(void)
{
	static const struct {
		const char *what;
		unsigned char rec_minor, hello_major, hello_minor;
	} cases[] = {
		{ "legacy_version TLS 1.0", 0x01, 0x03, 0x01 },
		{ "legacy_version SSL 3.0", 0x00, 0x03, 0x00 },
		{ "legacy_version 3.255", 0xff, 0x03, 0xff },
	};
	struct hello_opts o = { "old.example", TLS1_2_VERSION, NULL, 0, NULL, 0 };
	struct buf b;
	size_t i;

	if (make_hello(&o, &b) != 0 || b.len < 11) {
		tap_ok(0, "versions: make a ClientHello");
		buf_free(&b);
		return;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		b.p[2] = cases[i].rec_minor;     /* record legacy_record_version */
		b.p[9] = cases[i].hello_major;   /* ClientHello legacy_version */
		b.p[10] = cases[i].hello_minor;
		check(cases[i].what, &b, MAX_DEFAULT, PX_SNI_HELLO, "old.example");
	}
	buf_free(&b);
}

/* ClientHellos bigger than a segment, and bigger than a record. */
static void
test_big(void)
{
	static unsigned char ext[20000];
	struct hello_opts o = { "big.example", 0, ext, 3000, NULL, 0 };
	struct buf b;

	memset(ext, 0xa5, sizeof(ext));
	if (make_hello(&o, &b) != 0) {
		tap_ok(0, "make a 3000-byte-extension ClientHello");
	} else {
		tap_cmp_int(b.len, ">", 1500, "big ClientHello is %zu bytes, over 1500", b.len);
		check_all("ClientHello over 1500 bytes", &b, MAX_DEFAULT,
		    PX_SNI_HELLO, "big.example");
		/* The bound is exact: a ClientHello of exactly MAX bytes is
		 * read, one byte less is too big. */
		check("ClientHello of exactly max_bytes", &b, b.len, PX_SNI_HELLO,
		    "big.example");
		check("ClientHello one byte over max_bytes", &b, b.len - 1,
		    PX_SNI_TOO_BIG, NULL);
		buf_free(&b);
	}

	o.ext_len = sizeof(ext);
	o.max_version = TLS1_2_VERSION;
	if (make_hello(&o, &b) != 0) {
		tap_ok(0, "make a 20000-byte-extension ClientHello");
		return;
	}
	tap_cmp_int(count_records(&b), ">=", 2, "OpenSSL split the %zu-byte ClientHello "
	    "into %d records", b.len, count_records(&b));
	check("ClientHello over several records", &b, MAX_DEFAULT, PX_SNI_HELLO,
	    "big.example");
	check("ClientHello over several records, 16 KiB limit", &b, 16384,
	    PX_SNI_TOO_BIG, NULL);
	buf_free(&b);
}

/* Build the body of a server_name extension (RFC 6066 §3). */
static size_t
sni_body(unsigned char *out, size_t size, int list_len_delta, size_t n,
    const unsigned char *types, const char *const *names, const size_t *lens)
{
	size_t off = 2, i, list;

	for (i = 0; i < n; i++) {
		if (off + 3 + lens[i] > size)
			return 0;
		out[off] = types[i];
		out[off + 1] = (unsigned char)(lens[i] >> 8);
		out[off + 2] = (unsigned char)lens[i];
		memcpy(out + off + 3, names[i], lens[i]);
		off += 3 + lens[i];
	}
	list = (size_t)((long)(off - 2) + list_len_delta);
	out[0] = (unsigned char)(list >> 8);
	out[1] = (unsigned char)list;
	return off;
}

/*
 * server_name extensions OpenSSL's client would never send, made by giving
 * a private extension the body and renaming it.  The first case is the
 * positive control showing that the renaming works.
 */
static void
test_hand_made_server_name(void)
{
	static const struct {
		const char *what;
		int list_len_delta;
		size_t n;
		unsigned char types[2];
		const char *names[2];
		size_t lens[2];
		const char *real_sni;  /* also an ordinary server_name */
		enum px_sni_result want;
		const char *name;
	} cases[] = {
		{ "hand-made server_name", 0, 1, { 0 }, { "good.example" }, { 12 },
		    NULL, PX_SNI_HELLO, "good.example" },
		{ "server_name with a trailing NUL", 0, 1, { 0 }, { "good.example\0" },
		    { 13 }, NULL, PX_SNI_BAD, NULL },
		{ "server_name with an inner NUL", 0, 1, { 0 }, { "good\0.example" },
		    { 13 }, NULL, PX_SNI_BAD, NULL },
		{ "two host_name entries", 0, 2, { 0, 0 },
		    { "good.example", "evil.example" }, { 12, 12 }, NULL, PX_SNI_BAD, NULL },
		{ "entry of name_type 1", 0, 1, { 1 }, { "good.example" }, { 12 },
		    NULL, PX_SNI_BAD, NULL },
		{ "host_name then another type", 0, 2, { 0, 7 },
		    { "good.example", "evil.example" }, { 12, 12 }, NULL, PX_SNI_BAD, NULL },
		{ "empty host_name", 0, 1, { 0 }, { "" }, { 0 }, NULL, PX_SNI_BAD, NULL },
		{ "empty server_name list", 0, 0, { 0 }, { NULL }, { 0 }, NULL,
		    PX_SNI_BAD, NULL },
		{ "list length one short", -1, 1, { 0 }, { "good.example" }, { 12 },
		    NULL, PX_SNI_BAD, NULL },
		{ "list length one long", 1, 1, { 0 }, { "good.example" }, { 12 },
		    NULL, PX_SNI_BAD, NULL },
		{ "two server_name extensions", 0, 1, { 0 }, { "evil.example" }, { 12 },
		    "good.example", PX_SNI_BAD, NULL },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned char body[512];
		size_t len = sni_body(body, sizeof(body), cases[i].list_len_delta,
		    cases[i].n, cases[i].types, cases[i].names, cases[i].lens);
		struct hello_opts o = { cases[i].real_sni, 0, body, len, NULL, 0 };
		struct buf b;

		if (len == 0 || make_hello(&o, &b) != 0) {
			tap_ok(0, "%s: make a ClientHello", cases[i].what);
			continue;
		}
		if (rename_marker(&b, body, len) != 0) {
			tap_ok(0, "%s: find the marker extension", cases[i].what);
			buf_free(&b);
			continue;
		}
		check_all(cases[i].what, &b, MAX_DEFAULT, cases[i].want, cases[i].name);
		buf_free(&b);
	}

	/* The body of a server_name extension one byte short of its list. */
	{
		static const unsigned char trunc[] = { 0x00, 0x0f, 0x00, 0x00, 0x0c,
		    'g', 'o', 'o', 'd', '.', 'e', 'x', 'a', 'm', 'p', 'l' };
		struct hello_opts o = { NULL, 0, trunc, sizeof(trunc), NULL, 0 };
		struct buf b;

		if (make_hello(&o, &b) != 0 ||
		    rename_marker(&b, trunc, sizeof(trunc)) != 0) {
			tap_ok(0, "truncated host_name: make a ClientHello");
		} else {
			check_all("truncated host_name", &b, MAX_DEFAULT, PX_SNI_BAD, NULL);
		}
		buf_free(&b);
	}
}

static void
test_captured(void)
{
	static const struct {
		const char *file, *name;
	} files[] = {
		{ "curl-hello-name.test.bin", "name.test" },
		{ "s_client-hello-s-client.test.bin", "s-client.test" },
	};
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct buf b;
		char what[128];

		if (read_file(files[i].file, &b) != 0) {
			tap_ok(0, "read %s: %s", files[i].file, strerror(errno));
			continue;
		}
		snprintf(what, sizeof(what), "captured %s", files[i].file);
		check_all(what, &b, MAX_DEFAULT, PX_SNI_HELLO, files[i].name);
		buf_free(&b);
	}
}

/* Feed LEN bytes at P whole; also check how many bytes it took to decide. */
static void
check_raw(const char *what, const void *p, size_t len, size_t decide_at,
    enum px_sni_result want)
{
	struct buf b = { (unsigned char *)p, len };
	struct px_sni *s;
	enum px_sni_result r;
	size_t at;

	check(what, &b, MAX_DEFAULT, want, NULL);
	if (decide_at == 0)
		return;
	s = px_sni_new(MAX_DEFAULT);
	r = feed(s, &b, BYTEWISE, &at);
	tap_ok(r == want && at == decide_at, "%s: decided after %zu bytes (want %zu)",
	    what, at, decide_at);
	px_sni_free(s);
}

static void
test_not_tls(void)
{
	static const char http[] = "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n";
	static const char connect[] = "CONNECT example.com:443 HTTP/1.1\r\n\r\n";
	static const char ssh[] = "SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n";
	static const unsigned char syn_ish[] = { 0x16, 0x00, 0x01, 0x02, 0x03 };
	static const unsigned char v2_other[] = { 0x80, 0x2e, 0x02, 0x03, 0x01 };
	static const unsigned char v2_hello[] = {
		0x80, 0x1c,             /* SSLv2 header, 28 bytes */
		0x01, 0x03, 0x01,       /* CLIENT-HELLO, TLS 1.0 */
		0x00, 0x03, 0x00, 0x00, 0x00, 0x10, /* cipher, session, challenge lengths */
		0x00, 0x00, 0x2f,       /* TLS_RSA_WITH_AES_128_CBC_SHA */
		1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
	};
	static const unsigned char v2_hello_v2[] = { 0x80, 0x1c, 0x01, 0x00, 0x02, 0x00 };
	static const unsigned char alert[] = { 0x15, 0x03, 0x03, 0x00, 0x02, 0x01, 0x5a };
	static const unsigned char appdata[] = { 0x17, 0x03, 0x03, 0x00, 0x02, 0x41, 0x41 };
	static const unsigned char ccs[] = { 0x14, 0x03, 0x01, 0x00, 0x01, 0x01 };
	static const unsigned char heartbeat[] = { 0x18, 0x03, 0x03, 0x00, 0x01, 0x01 };
	static const unsigned char server_hello[] = { 0x16, 0x03, 0x03, 0x00, 0x04,
		0x02, 0x00, 0x00, 0x00 };
	static const unsigned char bad_version[] = { 0x16, 0x03, 0x03, 0x00, 0x04,
		0x01, 0x00, 0x00, 0x00 };
	static const unsigned char truncated_rec[] = { 0x16, 0x03, 0x01, 0x02, 0x00,
		0x01, 0x00, 0x01, 0xfc, 0x03, 0x03 };
	static const unsigned char huge_rec[] = { 0x16, 0x03, 0x01, 0xff, 0xff, 0x01 };

	check_raw("plain HTTP request", http, strlen(http), 1, PX_SNI_NOT_TLS);
	check_raw("plain HTTP CONNECT", connect, strlen(connect), 1, PX_SNI_NOT_TLS);
	check_raw("SSH banner", ssh, strlen(ssh), 1, PX_SNI_NOT_TLS);
	/* 0x16 opens a handshake record whatever follows: OpenSSL reads the
	 * five-byte header and refuses the record version. */
	check_raw("0x16 then a record version other than 3.x", syn_ish,
	    sizeof(syn_ish), 5, PX_SNI_BAD);
	check_raw("high bit, not an SSLv2 hello", v2_other, sizeof(v2_other), 3,
	    PX_SNI_NOT_TLS);
	check_raw("SSLv2-compatible ClientHello", v2_hello, sizeof(v2_hello), 4,
	    PX_SNI_BAD);
	check_raw("SSLv2 ClientHello of version 2", v2_hello_v2, sizeof(v2_hello_v2),
	    5, PX_SNI_BAD);
	check_raw("alert record first", alert, sizeof(alert), 2, PX_SNI_BAD);
	check_raw("application_data record first", appdata, sizeof(appdata), 2,
	    PX_SNI_BAD);
	check_raw("change_cipher_spec first", ccs, sizeof(ccs), 2, PX_SNI_BAD);
	check_raw("heartbeat record first", heartbeat, sizeof(heartbeat), 2,
	    PX_SNI_BAD);
	check_raw("ServerHello from a client", server_hello, sizeof(server_hello),
	    sizeof(server_hello), PX_SNI_BAD);
	check_raw("ClientHello too short for its version", bad_version,
	    sizeof(bad_version), sizeof(bad_version), PX_SNI_BAD);
	check_raw("truncated ClientHello record", truncated_rec,
	    sizeof(truncated_rec), 0, PX_SNI_NEED_MORE);
	check_raw("record longer than TLS allows", huge_rec, sizeof(huge_rec),
	    5, PX_SNI_BAD);
	check_raw("nothing yet", "", 0, 0, PX_SNI_NEED_MORE);
}

/*
 * Random bytes: never a ClientHello; NOT_TLS at once unless the first
 * byte could open a TLS or SSLv2 record.
 */
static void
test_random(void)
{
	uint32_t x = 0x9e3779b9u;
	int i, j, wrong = 0, at_once = 0, tried = 0;

	for (i = 0; i < 4000; i++) {
		unsigned char b[80];
		struct px_sni *s = px_sni_new(MAX_DEFAULT);
		enum px_sni_result r;
		int tls_like;

		for (j = 0; j < (int)sizeof(b); j++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			b[j] = (unsigned char)x;
		}
		/* Make every fourth buffer start like a TLS handshake record,
		 * so OpenSSL sees random records too. */
		if (i % 4 == 0) {
			b[0] = 0x16;
			b[1] = 0x03;
		}
		tls_like = (b[0] >= 0x14 && b[0] <= 0x18) || (b[0] & 0x80);
		r = px_sni_feed(s, b, 1);
		if (!tls_like) {
			tried++;
			at_once += r == PX_SNI_NOT_TLS;
		}
		r = px_sni_feed(s, b + 1, sizeof(b) - 1);
		if (r == PX_SNI_HELLO || (!tls_like && r != PX_SNI_NOT_TLS))
			wrong++;
		px_sni_free(s);
	}
	tap_cmp_int(wrong, "==", 0, "4000 random buffers: none a ClientHello (%d wrong)", wrong);
	tap_ok(tried > 1000 && at_once == tried,
	    "random buffers not opening a record: NOT_TLS on the first byte (%d of %d)",
	    at_once, tried);
	tap_cmp_int(ERR_peek_error(), "==", 0, "OpenSSL error queue empty after random input");
}

/*
 * A real ClientHello for other.test whose record header
 * says a version other than 3.x ("16 02 01", "16 00 00", ...).  Go's
 * crypto/tls accepts any record version below 0x1000 in the first record,
 * so such a stream must be judged as TLS, never "not TLS": OpenSSL refuses
 * the record version and the result is BAD.  Also in 50-byte records whose
 * later records say 3.x, and with only a later record rewritten (OpenSSL
 * refuses that one too).
 */
static void
test_record_version(void)
{
	static const unsigned char vers[][2] = {
		{ 0x02, 0x01 }, { 0x00, 0x00 }, { 0x01, 0x00 }, { 0x0f, 0xff },
		{ 0x04, 0x03 }, { 0xfe, 0xfd },
	};
	struct hello_opts o = { "other.test", 0, NULL, 0, NULL, 0 };
	struct buf b, rf;
	size_t i;
	char label[128];

	if (make_hello(&o, &b) != 0) {
		tap_ok(0, "record version: make a ClientHello");
		return;
	}
	for (i = 0; i < sizeof(vers) / sizeof(vers[0]); i++) {
		unsigned char v1 = b.p[1], v2 = b.p[2];

		b.p[1] = vers[i][0];
		b.p[2] = vers[i][1];
		snprintf(label, sizeof(label), "ClientHello for other.test in a record of version %02x %02x",
		    vers[i][0], vers[i][1]);
		check(label, &b, MAX_DEFAULT, PX_SNI_BAD, NULL);
		b.p[1] = v1;
		b.p[2] = v2;
	}
	if (reframe(&b, 50, &rf) == 0) {
		rf.p[1] = 0x02;
		rf.p[2] = 0x01;
		check("version 02 01 in the first of 50-byte records", &rf, MAX_DEFAULT,
		    PX_SNI_BAD, NULL);
		rf.p[1] = b.p[1];
		rf.p[2] = b.p[2];
		rf.p[55 + 1] = 0x02;
		rf.p[55 + 2] = 0x01;
		check("version 02 01 in the second of 50-byte records", &rf, MAX_DEFAULT,
		    PX_SNI_BAD, NULL);
		buf_free(&rf);
	} else {
		tap_ok(0, "record version: re-frame into 50-byte records");
	}
	buf_free(&b);
}

/* Other record types inside a fragmented ClientHello (RFC 8446 §5.1). */
static void
test_interleaved(void)
{
	static const unsigned char alert[] = { 0x15, 0x03, 0x03, 0x00, 0x02, 0x01, 0x5a };
	static const unsigned char ccs[] = { 0x14, 0x03, 0x03, 0x00, 0x01, 0x01 };
	static const unsigned char appdata[] = { 0x17, 0x03, 0x03, 0x00, 0x02, 0x41, 0x41 };
	static const unsigned char empty_hs[] = { 0x16, 0x03, 0x03, 0x00, 0x00 };
	/*
	 * OpenSSL skips an empty handshake record (up to 32 in a row) although
	 * RFC 8446 §5.1 says not to send one: the reassembled ClientHello, and
	 * so the name read, are the same as without it, so it is accepted.
	 */
	static const struct {
		const char *what;
		const unsigned char *rec;
		size_t len;
		enum px_sni_result want;
		const char *name;
	} cases[] = {
		{ "alert", alert, sizeof(alert), PX_SNI_BAD, NULL },
		{ "change_cipher_spec", ccs, sizeof(ccs), PX_SNI_BAD, NULL },
		{ "application_data", appdata, sizeof(appdata), PX_SNI_BAD, NULL },
		{ "empty handshake", empty_hs, sizeof(empty_hs), PX_SNI_HELLO,
		    "good.example" },
	};
	struct hello_opts o = { "good.example", 0, NULL, 0, NULL, 0 };
	struct buf hello, rf;
	size_t i;

	if (make_hello(&o, &hello) != 0 || reframe(&hello, 50, &rf) != 0) {
		tap_ok(0, "interleaved: make a ClientHello");
		buf_free(&hello);
		return;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct buf b = { NULL, 0 };
		char what[128];

		/* After the first 50-byte record (55 bytes on the wire). */
		if (buf_append(&b, rf.p, 55) != 0 ||
		    buf_append(&b, cases[i].rec, cases[i].len) != 0 ||
		    buf_append(&b, rf.p + 55, rf.len - 55) != 0) {
			tap_ok(0, "interleaved: out of memory");
			buf_free(&b);
			continue;
		}
		snprintf(what, sizeof(what), "%s record inside the ClientHello",
		    cases[i].what);
		check(what, &b, MAX_DEFAULT, cases[i].want, cases[i].name);
		buf_free(&b);
	}

	/* Bytes after a complete ClientHello (early data, the next record)
	 * in the same feed do not change the verdict. */
	{
		struct buf b = { NULL, 0 };

		if (buf_append(&b, hello.p, hello.len) == 0 &&
		    buf_append(&b, appdata, sizeof(appdata)) == 0)
			check_at("ClientHello followed by application_data", &b,
			    MAX_DEFAULT, PX_SNI_HELLO, "good.example", hello.len);
		else
			tap_ok(0, "trailing: out of memory");
		buf_free(&b);
	}
	buf_free(&hello);
	buf_free(&rf);
}

static void
test_api(void)
{
	struct px_sni *s;
	struct cf_host h;

	errno = 0;
	tap_ok(px_sni_new(0) == NULL && errno == EINVAL, "px_sni_new(0) is EINVAL");
	errno = 0;
	tap_ok(px_sni_new(PX_SNI_MIN_BYTES - 1) == NULL && errno == EINVAL,
	    "px_sni_new below the minimum is EINVAL");
	errno = 0;
	tap_ok(px_sni_new(PX_SNI_MAX_BYTES + 1) == NULL && errno == EINVAL,
	    "px_sni_new above the maximum is EINVAL");
	px_sni_free(NULL);
	tap_ok(1, "px_sni_free(NULL) is a no-op");

	s = px_sni_new(MAX_DEFAULT);
	tap_ok(s != NULL && px_sni_name(s, &h) == -EINVAL && px_sni_why(s) == NULL,
	    "undecided inspector: no name, no why");
	tap_ok(s != NULL && px_sni_feed(s, "\x16", 1) == PX_SNI_NEED_MORE &&
	    px_sni_name(s, &h) == -EINVAL, "one TLS byte: NEED_MORE, no name");
	/* Released undecided, with bytes buffered in OpenSSL: no leak. */
	px_sni_free(s);

	/* The shared context may go while an inspector lives. */
	s = px_sni_new(MAX_DEFAULT);
	px_sni_cleanup();
	{
		struct hello_opts o = { "after.cleanup", 0, NULL, 0, NULL, 0 };
		struct buf b;
		struct cf_host h2;

		if (s == NULL || make_hello(&o, &b) != 0) {
			tap_ok(0, "after cleanup: setup");
		} else {
			tap_ok(px_sni_feed(s, b.p, b.len) == PX_SNI_HELLO &&
			    px_sni_name(s, &h2) == 1 &&
			    strcmp(h2.name, "after.cleanup") == 0,
			    "inspector outlives px_sni_cleanup()");
			buf_free(&b);
		}
	}
	px_sni_free(s);
}

/* The ALPN offer is read in the same pass (a terminating proxy offers the
 * upstream h2 only when the client did), whole and a byte at a time. */
static void
test_alpn(void)
{
	static const struct {
		const char *list;
		size_t len;
		int want;
		const char *what;
	} cases[] = {
		{ NULL, 0, 0, "no ALPN extension: 0" },
		{ "\x02h2\x08http/1.1", 12, PX_SNI_ALPN_H2 | PX_SNI_ALPN_HTTP11, "h2 and http/1.1" },
		{ "\x08http/1.1", 9, PX_SNI_ALPN_HTTP11, "http/1.1 only (curl --http1.1)" },
		{ "\x02h2", 3, PX_SNI_ALPN_H2, "h2 only (nghttp)" },
		{ "\x02h3\x03h2c\x06spdy/3", 14, 0, "neither: h3, h2c, spdy/3 are not h2" },
		{ "\x03h2x\x01h\x08http/1.1", 15, PX_SNI_ALPN_HTTP11, "look-alikes of h2 do not count" },
	};
	size_t i, k;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hello_opts o = { "alpn.test", 0, NULL, 0, cases[i].list, cases[i].len };
		struct buf b;
		struct px_sni *s;
		enum px_sni_result r = PX_SNI_NEED_MORE;
		struct cf_host h;

		if (make_hello(&o, &b) != 0) {
			tap_ok(0, "alpn %s: setup", cases[i].what);
			continue;
		}
		s = px_sni_new(MAX_DEFAULT);
		tap_ok(s != NULL && px_sni_feed(s, b.p, b.len) == PX_SNI_HELLO &&
		    px_sni_alpn(s) == cases[i].want && px_sni_name(s, &h) == 1 &&
		    strcmp(h.name, "alpn.test") == 0, "alpn whole: %s", cases[i].what);
		px_sni_free(s);
		s = px_sni_new(MAX_DEFAULT);
		for (k = 0; s != NULL && k < b.len && r == PX_SNI_NEED_MORE; k++) {
			r = px_sni_feed(s, b.p + k, 1);
			if (r == PX_SNI_NEED_MORE && px_sni_alpn(s) != -EINVAL)
				break;
		}
		tap_ok(s != NULL && r == PX_SNI_HELLO && px_sni_alpn(s) == cases[i].want,
		    "alpn byte by byte: %s (undecided: -EINVAL)", cases[i].what);
		px_sni_free(s);
		buf_free(&b);
	}
}

int
main(void)
{
	test_api();
	test_alpn();
	test_generated();
	test_versions();
	test_big();
	test_hand_made_server_name();
	test_captured();
	test_not_tls();
	test_record_version();
	test_random();
	test_interleaved();
	px_sni_cleanup();
	return tap_done();
}
