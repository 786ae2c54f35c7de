/*
 * tests/unit/test-bodyph.c: placeholders replaced in paths, bodies and
 * WebSocket client frames (proxy/proto/bodyph.h).  A stream cut into random
 * pieces must come out exactly as the whole rewritten at once; a value is
 * written as its place needs it (percent-encoded, JSON-escaped); masked
 * frames of every length form come out masked again, with their new
 * length, fragments joined for the search.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/inject.h"
#include "proxy/proto/bodyph.h"
#include "tests/unit/tap.h"

#define PH1 "tg-PH-Zq8xY2wVb7N1kLm0PqRsTuVwXy"
#define PH2 "sk-ph-abcabcabcabcabcabcab"
#define VAL1 "123456:AB\"C/d e\\f&g=h"
#define VAL2 "sk-real-VALUE-2"

static unsigned
rnd(unsigned n)
{
	return (unsigned)random() % n;
}

static void
key_fixed(unsigned char key[4])
{
	static unsigned k;

	k++;
	key[0] = (unsigned char)(0x11 * k);
	key[1] = 0x5a;
	key[2] = (unsigned char)(k >> 3);
	key[3] = 0xc3;
}

static void
make(struct px_bph *b, enum px_bph_enc enc)
{
	memset(b, 0, sizeof(*b));
	px_bph_add(b, PH1, strlen(PH1), VAL1, strlen(VAL1), enc);
	px_bph_add(b, PH2, strlen(PH2), VAL2, strlen(VAL2), enc);
}

/* The whole of IN rewritten in one piece, NUL-terminated in a static buffer. */
static const char *
whole(const struct px_bph *b, const char *in)
{
	static char res[8192];
	struct px_bph_stream st;
	struct px_bph_buf out;

	memset(&st, 0, sizeof(st));
	memset(&out, 0, sizeof(out));
	px_bph_stream(b, &st, (const unsigned char *)in, strlen(in), 1, &out);
	snprintf(res, sizeof(res), "%.*s", (int)out.len, out.p ? (char *)out.p : "");
	px_bph_buf_wipe(&out);
	return res;
}

static void
test_encode(void)
{
	char out[256];

	px_bph_encode(PX_BPH_FORM, VAL1, strlen(VAL1), out, sizeof(out));
	tap_cmp_str(out, "123456%3AAB%22C%2Fd%20e%5Cf%26g%3Dh", "form: all but unreserved %%XX");
	px_bph_encode(PX_BPH_PATH, VAL1, strlen(VAL1), out, sizeof(out));
	tap_cmp_str(out, "123456:AB%22C%2Fd%20e%5Cf&g=h", "path: pchar kept, '/' and the rest %%XX");
	px_bph_encode(PX_BPH_JSON, VAL1, strlen(VAL1), out, sizeof(out));
	tap_cmp_str(out, "123456:AB\\\"C/d e\\\\f&g=h", "json: quote and backslash escaped");
	px_bph_encode(PX_BPH_JSON, "a\tb\x01", 4, out, sizeof(out));
	tap_cmp_str(out, "a\\u0009b\\u0001", "json: controls as \\u00XX");
	tap_cmp_int(px_bph_encode(PX_BPH_FORM, VAL1, strlen(VAL1), out, 10), "==", -ENOSPC,
	    "too small: -ENOSPC");
	tap_ok(out[0] == 0 && out[9] == 0, "and wiped");
}

static void
test_whole(void)
{
	struct px_bph b;

	make(&b, PX_BPH_JSON);
	tap_cmp_str(whole(&b, "{\"token\":\"" PH1 "\",\"k\":\"" PH2 "\"}"),
	    "{\"token\":\"123456:AB\\\"C/d e\\\\f&g=h\",\"k\":\"" VAL2 "\"}",
	    "json: both placeholders replaced, escaped");
	tap_cmp_str(whole(&b, "{\"x\":\"tg-PH-Zq8xY2wVb7N1kLm0PqRsTuVwX\"}"),
	    "{\"x\":\"tg-PH-Zq8xY2wVb7N1kLm0PqRsTuVwX\"}", "a placeholder less its last byte stays");
	tap_cmp_str(whole(&b, "sk-ph-abcabcsk-ph-abcabcabcabcabcabcabcab"),
	    "sk-ph-abcabc" VAL2 "cab", "overlapping start: the whole one found");
	px_bph_clear(&b);
	make(&b, PX_BPH_FORM);
	tap_cmp_str(whole(&b, "a=1&token=" PH1 "&b=2"), "a=1&token=123456%3AAB%22C%2Fd%20e%5Cf%26g%3Dh&b=2",
	    "form: the value percent-encoded");
	tap_cmp_str(whole(&b, "a=1&b=2"), "a=1&b=2", "no placeholder: unchanged");
	px_bph_clear(&b);
}

static void
test_stream(void)
{
	static const char *const bodies[] = {
		"{\"a\":\"" PH1 "\",\"b\":[\"" PH2 PH2 "\",\"" PH1 "x\"]}",
		PH1,
		"tg-PH-Zq8x" PH1 "tg-PH-Zq8xY2wVb7N1kLm0PqRsTuVw",
		"sk-ph-abcabcabcabcabcab" PH2 "sk-ph-abcab",
	};
	struct px_bph b;
	size_t k, t;
	int same = 1, bounded = 1;

	make(&b, PX_BPH_JSON);
	for (k = 0; k < sizeof(bodies) / sizeof(bodies[0]); k++) {
		char want[8192];
		snprintf(want, sizeof(want), "%s", whole(&b, bodies[k]));
		for (t = 0; t < 300; t++) {
			struct px_bph_stream st;
			struct px_bph_buf out;
			size_t len = strlen(bodies[k]), at = 0;

			memset(&st, 0, sizeof(st));
			memset(&out, 0, sizeof(out));
			while (at < len) {
				size_t n = 1 + rnd(t % 3 == 0 ? 3 : 40);
				if (n > len - at)
					n = len - at;
				px_bph_stream(&b, &st, (const unsigned char *)bodies[k] + at, n, 0, &out);
				if (st.nheld > b.hold)
					bounded = 0;
				at += n;
			}
			px_bph_stream(&b, &st, NULL, 0, 1, &out);
			if (out.len != strlen(want) || memcmp(out.p, want, out.len) != 0)
				same = 0;
			if (st.nheld != 0)
				same = 0;
			px_bph_buf_wipe(&out);
		}
	}
	tap_ok(same, "a placeholder split across pieces (chunks) is found: the same as one rewrite");
	tap_ok(bounded, "never more held than the longest placeholder less one byte");
	px_bph_clear(&b);
}

static void
test_path(void)
{
	struct px_bph b;
	struct px_bph_buf out;
	long r;

	make(&b, PX_BPH_PATH);
	memset(&out, 0, sizeof(out));
	r = px_bph_path(&b, "/bot" PH1 "/getMe?x=" PH1, strlen("/bot" PH1 "/getMe?x=" PH1), &out);
	tap_cmp_int(r, "==", 1, "one placeholder in the path");
	tap_ok(out.len == strlen("/bot123456:AB%22C%2Fd%20e%5Cf&g=h/getMe?x=" PH1) &&
	    memcmp(out.p, "/bot123456:AB%22C%2Fd%20e%5Cf&g=h/getMe?x=" PH1, out.len) == 0,
	    "the path's replaced, the query's left");
	px_bph_buf_wipe(&out);
	px_bph_clear(&b);
}

static void
test_media(void)
{
	tap_cmp_int(px_bph_media("application/x-www-form-urlencoded", 33), "==", PX_BPH_MEDIA_FORM, "form");
	tap_cmp_int(px_bph_media(" Application/JSON; charset=utf-8", 32), "==", PX_BPH_MEDIA_JSON, "json, params");
	tap_cmp_int(px_bph_media("application/vnd.api+json", 24), "==", PX_BPH_MEDIA_JSON, "+json");
	tap_cmp_int(px_bph_media("text/plain", 10), "==", PX_BPH_MEDIA_NONE, "text/plain: none");
	tap_cmp_int(px_bph_media("multipart/form-data; boundary=x", 31), "==", PX_BPH_MEDIA_NONE,
	    "multipart: none");
	tap_cmp_int(px_bph_media("application/jsonx", 17), "==", PX_BPH_MEDIA_NONE, "jsonx: none");
}

static void
test_length(void)
{
	static const char h[] = "POST /x HTTP/1.1\r\nHost: a\r\ncontent-LENGTH: 12\r\nX: y\r\n\r\n";
	struct px_bph_buf out;

	memset(&out, 0, sizeof(out));
	tap_cmp_int(px_bph_set_length(h, strlen(h), 345, &out), "==", 0, "a head's length set");
	tap_ok(out.len == strlen(h) + 1 &&
	    memcmp(out.p, "POST /x HTTP/1.1\r\nHost: a\r\ncontent-LENGTH: 345\r\nX: y\r\n\r\n", out.len) == 0,
	    "to the new value, the rest as it was");
	px_bph_buf_wipe(&out);
	tap_cmp_int(px_bph_set_length("GET / HTTP/1.1\r\n\r\n", 18, 1, &out), "==", -EINVAL,
	    "no Content-Length: -EINVAL");
	px_bph_buf_wipe(&out);
}

/* A client frame: FIN, OPCODE, PAYLOAD (N bytes) masked with KEY. */
static size_t
frame(unsigned char *f, int fin, unsigned op, const void *payload, size_t n, int rsv)
{
	static const unsigned char key[4] = { 0x37, 0xfa, 0x21, 0x3d };
	size_t hl, i;

	f[0] = (unsigned char)((fin ? 0x80 : 0) | op | (rsv ? 0x40 : 0));
	if (n < 126) {
		f[1] = (unsigned char)(0x80 | n);
		hl = 2;
	} else if (n <= 0xffff) {
		f[1] = 0x80 | 126;
		f[2] = (unsigned char)(n >> 8);
		f[3] = (unsigned char)n;
		hl = 4;
	} else {
		f[1] = 0x80 | 127;
		for (i = 0; i < 8; i++)
			f[2 + i] = (unsigned char)((uint64_t)n >> (56 - 8 * i));
		hl = 10;
	}
	memcpy(f + hl, key, 4);
	hl += 4;
	for (i = 0; i < n; i++)
		f[hl + i] = ((const unsigned char *)payload)[i] ^ key[i & 3];
	return hl + n;
}

/* Walk the frames at P (N bytes): every one masked; append each data
 * frame's unmasked payload to MSG, count frames, note opcodes. */
static int
unframe(const unsigned char *p, size_t n, struct px_bph_buf *msg, int *nframes, char *ops)
{
	size_t i = 0;

	*nframes = 0;
	while (i < n) {
		uint64_t len;
		size_t hl = 2, k;
		const unsigned char *key;

		if (n - i < 2 || !(p[i + 1] & 0x80))
			return -1;
		len = p[i + 1] & 0x7f;
		if (len == 126) {
			len = (uint64_t)p[i + 2] << 8 | p[i + 3];
			hl = 4;
		} else if (len == 127) {
			for (len = 0, k = 0; k < 8; k++)
				len = len << 8 | p[i + 2 + k];
			hl = 10;
		}
		key = p + i + hl;
		hl += 4;
		if (n - i - hl < len)
			return -1;
		ops[(*nframes)++] = (char)('0' + (p[i] & 0x0f)) ;
		ops[*nframes] = 0;
		if ((p[i] & 0x0f) < 8)
			for (k = 0; k < len; k++) {
				unsigned char c = p[i + hl + k] ^ key[k & 3];
				px_bph_buf_add(msg, &c, 1);
			}
		i += hl + (size_t)len;
	}
	return 0;
}

/* Feed F (N bytes) to a fresh rewriter in random pieces. */
static int
feed(const struct px_bph *b, const unsigned char *f, size_t n, struct px_bph_buf *out,
    const char **why)
{
	struct px_bph_ws ws;
	size_t at = 0;
	int rc = 0;

	memset(&ws, 0, sizeof(ws));
	ws.max = 1 << 20;
	while (at < n && rc == 0) {
		size_t k = 1 + rnd(n < 64 ? 7 : 9000);
		if (k > n - at)
			k = n - at;
		rc = px_bph_ws(b, &ws, f + at, k, key_fixed, out, why);
		at += k;
	}
	px_bph_ws_clear(&ws);
	return rc;
}

static void
test_ws_lengths(void)
{
	static const size_t sizes[] = { 40, 200, 70000 };
	struct px_bph b;
	size_t s;

	make(&b, PX_BPH_RAW);
	for (s = 0; s < 3; s++) {
		size_t n = sizes[s], fl, i;
		unsigned char *pl = malloc(n), *f = malloc(n + 14);
		struct px_bph_buf out, msg;
		const char *why = NULL;
		char ops[16];
		int nf, ok;

		for (i = 0; i < n; i++)
			pl[i] = (unsigned char)('a' + i % 26);
		memcpy(pl + n / 2 - 16, PH1, strlen(PH1));
		fl = frame(f, 1, 1, pl, n, 0);
		memset(&out, 0, sizeof(out));
		memset(&msg, 0, sizeof(msg));
		ok = feed(&b, f, fl, &out, &why) == 0 && unframe(out.p, out.len, &msg, &nf, ops) == 0;
		ok = ok && nf == 1 && msg.len == n - strlen(PH1) + strlen(VAL1) &&
		    memcmp(msg.p + n / 2 - 16, VAL1, strlen(VAL1)) == 0 &&
		    memcmp(msg.p, pl, n / 2 - 16) == 0;
		/* a fresh key, not the client's */
		ok = ok && memcmp(out.p + (out.len - msg.len) - 4, f + (fl - n) - 4, 4) != 0;
		tap_ok(ok, "a masked text frame of %zu bytes (%s length): value in, re-masked, new length",
		    n, s == 0 ? "7-bit" : s == 1 ? "16-bit" : "64-bit");
		px_bph_buf_wipe(&out);
		px_bph_buf_wipe(&msg);
		free(pl);
		free(f);
	}
	px_bph_clear(&b);
}

static void
test_ws_fragments(void)
{
	struct px_bph b;
	unsigned char f[1024];
	size_t fl = 0;
	struct px_bph_buf out, msg;
	const char *why = NULL;
	char ops[16];
	int nf, ok, t, all = 1;
	static const char want[] = "hello " VAL1 " world";

	make(&b, PX_BPH_RAW);
	/* "hello tg-PH-Zq8x" | ping | "Y2wVb7N1kLm0PqRsTuVwXy wor" | "ld" */
	fl += frame(f + fl, 0, 1, "hello tg-PH-Zq8x", 16, 0);
	fl += frame(f + fl, 1, 9, "ping", 4, 0);
	fl += frame(f + fl, 0, 0, "Y2wVb7N1kLm0PqRsTuVwXy wor", 26, 0);
	fl += frame(f + fl, 1, 0, "ld", 2, 0);
	fl += frame(f + fl, 1, 2, PH1, strlen(PH1), 0);
	for (t = 0; t < 50; t++) {
		memset(&out, 0, sizeof(out));
		memset(&msg, 0, sizeof(msg));
		ok = feed(&b, f, fl, &out, &why) == 0 && unframe(out.p, out.len, &msg, &nf, ops) == 0;
		ok = ok && nf == 5 && strcmp(ops, "19002") == 0 && msg.len == strlen(want) + strlen(PH1) &&
		    memcmp(msg.p, want, strlen(want)) == 0 &&
		    memcmp(msg.p + strlen(want), PH1, strlen(PH1)) == 0;
		if (!ok)
			all = 0;
		px_bph_buf_wipe(&out);
		px_bph_buf_wipe(&msg);
	}
	tap_ok(all, "a placeholder split across fragments, a ping between: found; binary passes as it is");
	px_bph_clear(&b);
}

static void
test_ws_refused(void)
{
	struct px_bph b;
	unsigned char f[256];
	struct px_bph_buf out;
	struct px_bph_ws ws;
	const char *why = NULL;
	size_t fl;

	make(&b, PX_BPH_RAW);
	memset(&out, 0, sizeof(out));
	fl = frame(f, 1, 1, PH1, strlen(PH1), 1);
	tap_cmp_int(feed(&b, f, fl, &out, &why), "==", -EPROTO, "RSV1 (compressed): refused");
	f[0] = 0x81;
	f[1] = 5;
	tap_cmp_int(feed(&b, f, 7, &out, &why), "==", -EPROTO, "unmasked: refused");
	fl = frame(f, 1, 0, "x", 1, 0);
	tap_cmp_int(feed(&b, f, fl, &out, &why), "==", -EPROTO, "continuation first: refused");
	fl = frame(f, 0, 9, "x", 1, 0);
	tap_cmp_int(feed(&b, f, fl, &out, &why), "==", -EPROTO, "fragmented ping: refused");
	fl = frame(f, 0, 1, "x", 1, 0);
	fl += frame(f + fl, 1, 1, "x", 1, 0);
	tap_cmp_int(feed(&b, f, fl, &out, &why), "==", -EPROTO, "text inside a text message: refused");
	memset(&ws, 0, sizeof(ws));
	ws.max = 100;
	fl = frame(f, 1, 1, f, 200, 0);
	tap_cmp_int(px_bph_ws(&b, &ws, f, 8, key_fixed, &out, &why), "==", -EMSGSIZE,
	    "a text frame over the bound: -EMSGSIZE");
	px_bph_ws_clear(&ws);
	px_bph_buf_wipe(&out);
	px_bph_clear(&b);
}

/* The inject method that asks for all this (conf/inject.h). */
static void
test_parse(void)
{
	static const struct {
		const char *line, *why;
	} bad[] = {
		{ "a.test replace", "replace takes where" },
		{ "a.test replace path,path", "replace takes where" },
		{ "a.test replace path,", "replace takes where" },
		{ "a.test replace headers", "replace takes where" },
		{ "a.test replace path body", "replace takes one word" },
		{ "a.test cookie k", "the method is header, basic or query (or replace" },
	};
	struct cf_inject inj;
	const char *why = NULL;
	size_t i;
	char out[64];

	tap_cmp_int(cf_inject_parse("api.telegram.org replace path", &inj, &why), "==", 0, "replace path");
	tap_ok(inj.kind == CF_INJECT_REPLACE && inj.where == CF_REPLACE_PATH && inj.port == 443 &&
	    inj.name != NULL && strcmp(inj.name, "replace") == 0, "its kind, where, port and name");
	tap_ok(cf_inject_carries(&inj, "/botPH-x/getMe", 14, "PH-x", 4) &&
	    !cf_inject_carries(&inj, "/bot/getMe", 10, "PH-x", 4), "the target carries the placeholder or not");
	tap_cmp_int(cf_inject_render(&inj, "a b", 3, out, sizeof(out)), "==", 3, "renders the value as it is");
	cf_inject_clear(&inj);
	tap_cmp_int(cf_inject_parse("a.test:8443/v1 replace websocket,body,path", &inj, &why), "==", 0,
	    "a list, a port and a path prefix");
	tap_ok(inj.where == (CF_REPLACE_PATH | CF_REPLACE_BODY | CF_REPLACE_WEBSOCKET) && inj.port == 8443,
	    "all three places");
	cf_inject_clear(&inj);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc;

		why = NULL;
		rc = cf_inject_parse(bad[i].line, &inj, &why);
		tap_ok(rc == -EINVAL && why != NULL && strncmp(why, bad[i].why, strlen(bad[i].why)) == 0,
		    "refused: %s (%s)", bad[i].line, why ? why : "-");
	}
}

int
main(void)
{
	srandom(4243);
	test_encode();
	test_whole();
	test_stream();
	test_path();
	test_media();
	test_length();
	test_ws_lengths();
	test_ws_fragments();
	test_ws_refused();
	test_parse();
	return tap_done();
}
