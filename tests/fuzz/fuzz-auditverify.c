/*
 * tests/fuzz/fuzz-auditverify.c: the audit verifier (proxy/proto/auditline.h)
 * over arbitrary log files.  The input is lines; a form feed byte starts a
 * new file.  Each line goes through ac_parse() and ac_verify_line() under a
 * fixed key.  Invariants: a verdict is one of the five, a fault is said; a
 * parsed checkpoint's signed part ends where its ,"sig": starts; and each
 * line the proxy could write (a JSON object ending in a brace, with no
 * NUL and not one of the chain's own lines), chained in order after an
 * audit_open line and signed under one checkpoint, verifies with no fault.  Each line
 * also goes through the OCSF mapping (proxy/proto/ocsf.h): a record it
 * makes is an object ending in "}}\n", within its buffer, and chains.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "proxy/proto/auditline.h"
#include "proxy/proto/ocsf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static EVP_PKEY *
fixed_key(void)
{
	static EVP_PKEY *key;
	unsigned char raw[32];

	if (key == NULL) {
		memset(raw, 0x5a, sizeof(raw));
		key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, raw, sizeof(raw));
		if (key == NULL)
			abort();
	}
	return key;
}

/* The lines the proxy could write, chained into one file as they come
 * and verified at once; one checkpoint at the end. */
struct rechain {
	struct ac_chain c;
	struct ac_verify v;
	char kid[AC_KEYID_LEN + 1];
	int open;
};

static void
rechain_line(struct rechain *rc, EVP_PKEY *key, const char *line, size_t len)
{
	static char in[8192], out[8192 + AC_TRAILER_MAX], op[512];
	char why[512];
	size_t n, on;

	if (len < 2 || len + 1 > sizeof(in) || line[0] != '{' || line[len - 1] != '}' ||
	    memchr(line, '\0', len) != NULL || memchr(line, '\n', len) != NULL ||
	    (len >= 9 && memcmp(line, "{\"time\":\"", 9) == 0))
		return;
	if (!rc->open) {
		memset(&rc->c, 0, sizeof(rc->c));
		if (ac_keyid(key, rc->kid) != 0 || (on = ac_open_line(&rc->c, "t", 0, op, sizeof(op))) == 0)
			abort();
		ac_verify_init(&rc->v, key);
		ac_verify_file(&rc->v);
		if (ac_verify_line(&rc->v, op, on - 1, why, sizeof(why)) != AC_OK)
			abort();
		rc->open = 1;
	}
	memcpy(in, line, len);
	in[len] = '\n';
	if ((n = ac_chain_line(&rc->c, in, len + 1, out, sizeof(out))) == 0 ||
	    ac_verify_line(&rc->v, out, n - 1, why, sizeof(why)) != AC_OK)
		abort();
}

static void
rechain_end(struct rechain *rc, EVP_PKEY *key)
{
	static char cp[512];
	char why[512];
	size_t cn;

	if (!rc->open)
		return;
	if ((cn = ac_checkpoint(&rc->c, "t", key, rc->kid, cp, sizeof(cp))) == 0 ||
	    ac_verify_line(&rc->v, cp, cn - 1, why, sizeof(why)) != AC_OK || rc->v.unsigned_lines != 0)
		abort();
}

static void
ocsf_one(const char *line, size_t len)
{
	static char in[8192], out[2 * 8192 + 1024], ch[2 * 8192 + 1024 + AC_TRAILER_MAX];
	struct ac_chain c;
	size_t n;

	if (len + 1 > sizeof(in))
		return;
	memcpy(in, line, len);
	in[len] = '\n';
	n = px_ocsf_line(in, len + 1, out, sizeof(out), "v");
	if (n == 0)
		return;
	if (n > sizeof(out) || n < 4 || out[0] != '{' || memcmp(out + n - 3, "}}\n", 3) != 0)
		abort();
	memset(&c, 0, sizeof(c));
	if (ac_chain_line(&c, out, n, ch, sizeof(ch)) == 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	EVP_PKEY *key = fixed_key();
	const char *p = (const char *)data, *end = p + size, *nl;
	struct rechain rc = { .open = 0 };
	struct ac_verify v;
	struct ac_line l;
	const char *perr;
	char why[512];

	ac_verify_init(&v, key);
	ac_verify_file(&v);
	while (p < end) {
		enum ac_verdict r;
		size_t len;

		if (*p == '\f') {
			ac_verify_file(&v);
			p++;
			continue;
		}
		nl = memchr(p, '\n', (size_t)(end - p));
		len = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		if (ac_parse(p, len, &l, &perr) == 0 && l.kind == AC_CHECKPOINT &&
		    (l.signed_len + 8 > len || memcmp(p + l.signed_len, ",\"sig\":\"", 8) != 0))
			abort();
		why[0] = '\0';
		r = ac_verify_line(&v, p, len, why, sizeof(why));
		if (r > AC_BAD_SIG || (r != AC_OK && why[0] == '\0'))
			abort();
		rechain_line(&rc, key, p, len);
		ocsf_one(p, len);
		p += len + (nl != NULL);
	}
	rechain_end(&rc, key);
	return 0;
}
