/*
 * tests/unit/test-auditline.c: the audit log's chain and checkpoints
 * (proxy/proto/auditline.h): the hash is SHA-256 of the line as written
 * without its newline, the chain fields go before the closing braces, a
 * checkpoint's signature covers the line up to ,"sig":, the parser refuses
 * what the proxy never writes, and the verifier names each fault with its
 * verdict: an edit, a removal, a swap, a file that does not follow, an
 * unsigned tail before a new chain, another key, a bad signature.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "proxy/proto/auditline.h"
#include "tests/unit/tap.h"

#define T "2026-01-02T03:04:05.678Z"
/* A string literal and its length. */
#define S(x) x, sizeof(x) - 1

struct log {
	char lines[16][1024];
	size_t len[16];   /* without the newline */
	int n;
};

static void
add(struct log *g, size_t w)
{
	tap_ok(w > 0, "line %d is made", g->n + 1);
	g->len[g->n] = w > 0 ? w - 1 : 0;
	g->n++;
}

static EVP_PKEY *
key_from(unsigned char seed)
{
	unsigned char raw[32];

	memset(raw, seed, sizeof(raw));
	return EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, raw, sizeof(raw));
}

/* Verify lines FROM..TO-1 of G as one file, in the order of IDX (NULL:
 * as they are); the worst verdict and the 1-based line it came at. */
static enum ac_verdict
run(struct ac_verify *v, const struct log *g, const int *idx, int n, int *at, char *why, size_t wsz)
{
	enum ac_verdict worst = AC_OK, r;
	char w[512];
	int i;

	ac_verify_file(v);
	*at = 0;
	for (i = 0; i < n; i++) {
		int k = idx != NULL ? idx[i] : i;

		r = ac_verify_line(v, g->lines[k], g->len[k], w, sizeof(w));
		if (r > worst) {
			worst = r;
			*at = i + 1;
			snprintf(why, wsz, "%s", w);
		}
	}
	return worst;
}

int
main(void)
{
	EVP_PKEY *key = key_from(7), *other = key_from(9);
	struct ac_chain c;
	struct ac_verify v;
	struct ac_line l;
	struct log g, h;
	unsigned char hash[AC_HASH_LEN];
	char hex[AC_HEX_LEN + 1], kid[AC_KEYID_LEN + 1], why[512], expect[256];
	const char *perr;
	enum ac_verdict r;
	int at, i;

	/* The hash: SHA-256, in lowercase hex. */
	ac_hash("abc", 3, hash);
	ac_hex(hash, hex);
	tap_cmp_str(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
	    "ac_hash is SHA-256");
	tap_ok(ac_keyid(key, kid) == 0 && strlen(kid) == 16, "a key id is 16 hex digits (%s)", kid);

	/* A file: audit_open, two events (one ending in two braces), a checkpoint. */
	memset(&c, 0, sizeof(c));
	memset(&g, 0, sizeof(g));
	add(&g, ac_open_line(&c, T, 0, g.lines[0], sizeof(g.lines[0])));
	tap_cmp_str(g.lines[0], "{\"time\":\"" T "\",\"event\":\"audit_open\",\"chain\":\"new\",\"seq\":1,"
	    "\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\"}\n",
	    "a new chain's audit_open line, exactly");
	add(&g, ac_chain_line(&c, S("{\"event\":\"decision\",\"host\":\"a}\"}\n"), g.lines[1],
	    sizeof(g.lines[1])));
	ac_hash(g.lines[0], g.len[0], hash);
	ac_hex(hash, hex);
	snprintf(expect, sizeof(expect), "{\"event\":\"decision\",\"host\":\"a}\",\"seq\":2,\"prev\":\"%s\"}\n", hex);
	tap_cmp_str(g.lines[1], expect, "a line's prev is the hash of the line before, without its newline");
	add(&g, ac_chain_line(&c, S("{\"a\":1,\"unmapped\":{\"b\":2}}\n"), g.lines[2], sizeof(g.lines[2])));
	tap_ok(strstr(g.lines[2], "\"b\":2,\"seq\":3,\"prev\":\"") != NULL &&
	    strncmp(g.lines[2] + g.len[2] - 3, "\"}}", 3) == 0,
	    "the chain fields go inside the last object (OCSF's unmapped)");
	add(&g, ac_checkpoint(&c, T, key, kid, g.lines[3], sizeof(g.lines[3])));
	tap_ok(ac_parse(g.lines[3], g.len[3], &l, &perr) == 0 && l.kind == AC_CHECKPOINT &&
	    l.seq == 4 && strcmp(l.keyid, kid) == 0, "a checkpoint parses");
	tap_ok(ac_sig_ok(key, g.lines[3], l.signed_len, l.sig) &&
	    memcmp(g.lines[3] + l.signed_len, ",\"sig\":\"", 8) == 0,
	    "its signature covers the line up to ,\"sig\":");
	tap_ok(!ac_sig_ok(other, g.lines[3], l.signed_len, l.sig), "... and fails under another key");
	tap_ok(c.seq == 4, "the chain counts 4 lines");
	tap_ok(ac_chain_line(&c, S("no brace\n"), why, sizeof(why)) == 0 && c.seq == 4,
	    "a line that does not end in a brace is not chained, the chain unchanged");

	ac_verify_init(&v, key);
	tap_cmp_int(run(&v, &g, NULL, g.n, &at, why, sizeof(why)), "==", AC_OK, "the file verifies");
	tap_cmp_int((long long)v.unsigned_lines, "==", 0, "... ending signed");

	/* A second file continues from the first; one from elsewhere does not. */
	memset(&h, 0, sizeof(h));
	c.seq = 0;
	add(&h, ac_open_line(&c, T, 1, h.lines[0], sizeof(h.lines[0])));
	add(&h, ac_chain_line(&c, S("{\"event\":\"close\"}\n"), h.lines[1], sizeof(h.lines[1])));
	add(&h, ac_checkpoint(&c, T, key, kid, h.lines[2], sizeof(h.lines[2])));
	r = run(&v, &h, NULL, h.n, &at, why, sizeof(why));
	tap_cmp_int(r, "==", AC_OK, "the next file follows (seq back to 1, prev the last hash)");
	ac_verify_init(&v, key);
	r = run(&v, &h, NULL, h.n, &at, why, sizeof(why));
	tap_cmp_int(r, "==", AC_OK, "a continuing file given first is taken as it starts");
	ac_verify_init(&v, key);
	run(&v, &g, NULL, 2, &at, why, sizeof(why));
	r = run(&v, &h, NULL, h.n, &at, why, sizeof(why));
	tap_ok(r == AC_FILE_GAP && at == 1, "a file after a cut one: file gap at its line 1 (%s)", why);

	/* An edit, a removal, a swap. */
	ac_verify_init(&v, key);
	g.lines[1][30] ^= 1;
	r = run(&v, &g, NULL, g.n, &at, why, sizeof(why));
	g.lines[1][30] ^= 1;
	tap_ok(r == AC_BROKEN && at == 3 && strstr(why, "prev is not the hash") != NULL,
	    "a byte edited: broken at the next line (%s)", why);
	{
		static const int removed[] = { 0, 2, 3 }, swapped[] = { 0, 2, 1, 3 };

		ac_verify_init(&v, key);
		r = run(&v, &g, removed, 3, &at, why, sizeof(why));
		tap_ok(r == AC_BROKEN && at == 2 && strstr(why, "seq 3 where 2 was expected: 1 line(s) removed"),
		    "a line removed: a seq gap (%s)", why);
		ac_verify_init(&v, key);
		r = run(&v, &g, swapped, 4, &at, why, sizeof(why));
		tap_ok(r == AC_BROKEN && at == 2, "two lines swapped: broken (%s)", why);
	}
	/* Another key; a signature's byte changed. */
	ac_verify_init(&v, other);
	r = run(&v, &g, NULL, g.n, &at, why, sizeof(why));
	tap_ok(r == AC_BAD_SIG && at == 4 && strstr(why, "not by the key given"), "another key's checkpoint (%s)", why);
	ac_verify_init(&v, key);
	g.lines[3][g.len[3] - 10] = g.lines[3][g.len[3] - 10] == 'A' ? 'B' : 'A';
	r = run(&v, &g, NULL, g.n, &at, why, sizeof(why));
	tap_ok(r == AC_BAD_SIG || r == AC_BROKEN, "a signature's byte changed is caught (%s)", why);

	/* A new chain after unsigned lines: a warning there. */
	memset(&h, 0, sizeof(h));
	memset(&c, 0, sizeof(c));
	add(&h, ac_open_line(&c, T, 0, h.lines[0], sizeof(h.lines[0])));
	add(&h, ac_chain_line(&c, S("{\"event\":\"x\"}\n"), h.lines[1], sizeof(h.lines[1])));
	add(&h, ac_open_line(&c, T, 0, h.lines[2], sizeof(h.lines[2])));
	ac_verify_init(&v, key);
	r = run(&v, &h, NULL, h.n, &at, why, sizeof(why));
	tap_ok(r == AC_UNSIGNED && at == 3 && strstr(why, "2 line(s) before it"),
	    "a new chain after unsigned lines warns (%s)", why);
	tap_ok(h.lines[2][strlen(h.lines[2]) - 3] == '"' && strstr(h.lines[2], "\"seq\":1,") != NULL,
	    "a new chain's seq is 1 again");

	/* What the parser refuses. */
	{
		static const char *const bad[] = {
			"",
			"x{\"seq\":1}",
			"{\"a\":1}",
			"{\"seq\":01,\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\"}",
			"{,\"seq\":1,\"prev\":\"000000000000000000000000000000000000000000000000000000000000000\"}",
			"{,\"seq\":1,\"prev\":\"000000000000000000000000000000000000000000000000000000000000000A\"}",
			"{,\"seq\":1,\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\"}x",
			"{,\"seq\":1,\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\"",
			"{,\"seq\":99999999999999999999,\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\"}",
			"{,\"seq\":1,\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\",\"sig\":\"AAAA\"}",
			"{\"time\":\"t\",\"event\":\"audit_open\",\"chain\":\"maybe\",\"seq\":1,\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\"}",
			"{\"time\":\"t\",\"event\":\"checkpoint\",\"key\":\"0123456789abcdef\",\"seq\":1,\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\"}",
		};
		for (i = 0; i < (int)(sizeof(bad) / sizeof(bad[0])); i++)
			tap_ok(ac_parse(bad[i], strlen(bad[i]), &l, &perr) != 0, "refused: %.60s (%s)", bad[i],
			    ac_parse(bad[i], strlen(bad[i]), &l, &perr) != 0 ? perr : "taken");
		tap_ok(ac_parse("{\"x\":\"a\nb\",\"seq\":1,\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\"}",
		    strlen("{\"x\":\"a\nb\",\"seq\":1,\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\"}"), &l, &perr) != 0, "a newline inside refused");
	}
	EVP_PKEY_free(key);
	EVP_PKEY_free(other);
	return tap_done();
}
