/*
 * proxy/proto/auditline.c: the audit log's hash chain and checkpoints (see
 * auditline.h).
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "proxy/proto/auditline.h"

static EVP_MD *sha256;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;
/* One digest context a thread, so that a line's hash makes no
 * allocation; freed when the thread ends. */
static pthread_key_t hash_key;
static int hash_key_ok;

static void
ctx_free(void *p)
{
	EVP_MD_CTX_free(p);
}

static void
sha256_fetch(void)
{
	sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
	hash_key_ok = pthread_key_create(&hash_key, ctx_free) == 0;
}

int
ac_hash(const void *p, size_t len, unsigned char out[AC_HASH_LEN])
{
	EVP_MD_CTX *hash_ctx;
	unsigned int n = 0;

	pthread_once(&sha256_once, sha256_fetch);
	if (sha256 == NULL || !hash_key_ok)
		return -1;
	if ((hash_ctx = pthread_getspecific(hash_key)) == NULL) {
		if ((hash_ctx = EVP_MD_CTX_new()) == NULL)
			return -1;
		if (pthread_setspecific(hash_key, hash_ctx) != 0) {
			EVP_MD_CTX_free(hash_ctx);
			return -1;
		}
	}
	if (EVP_DigestInit_ex2(hash_ctx, sha256, NULL) != 1 ||
	    EVP_DigestUpdate(hash_ctx, p, len) != 1 ||
	    EVP_DigestFinal_ex(hash_ctx, out, &n) != 1 || n != AC_HASH_LEN)
		return -1;
	return 0;
}

void
ac_hex(const unsigned char hash[AC_HASH_LEN], char out[AC_HEX_LEN + 1])
{
	static const char hx[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < AC_HASH_LEN; i++) {
		out[2 * i] = hx[hash[i] >> 4];
		out[2 * i + 1] = hx[hash[i] & 15];
	}
	out[AC_HEX_LEN] = '\0';
}

/* ,"seq":N,"prev":"HEX" into OUT (AC_TRAILER_MAX bytes); its length. */
static size_t
trailer(uint64_t seq, const unsigned char prev[AC_HASH_LEN], char *out)
{
	char hex[AC_HEX_LEN + 1];
	int n;

	ac_hex(prev, hex);
	n = snprintf(out, AC_TRAILER_MAX, ",\"seq\":%llu,\"prev\":\"%s\"",
	    (unsigned long long)seq, hex);
	return n > 0 && n < AC_TRAILER_MAX ? (size_t)n : 0;
}

size_t
ac_chain_line(struct ac_chain *c, const char *line, size_t len, char *out, size_t outsz)
{
	char tr[AC_TRAILER_MAX];
	size_t k, tn, total;

	if (len < 3 || line[len - 1] != '\n' || line[len - 2] != '}')
		return 0;
	k = len - 2;
	while (k > 1 && line[k - 1] == '}')
		k--;
	if ((tn = trailer(c->seq + 1, c->head, tr)) == 0)
		return 0;
	total = len + tn;
	if (total > outsz)
		return 0;
	memcpy(out, line, k);
	memcpy(out + k, tr, tn);
	memcpy(out + k + tn, line + k, len - k);
	if (ac_hash(out, total - 1, c->head) != 0)
		return 0;
	c->seq++;
	c->started = 1;
	return total;
}

size_t
ac_open_line(struct ac_chain *c, const char *time, int cont, char *out, size_t outsz)
{
	struct ac_chain save = *c;
	char line[256];
	size_t w;
	int n;

	if (!cont) {
		memset(c->head, 0, sizeof(c->head));
		c->seq = 0;
	}
	n = snprintf(line, sizeof(line), "{\"time\":\"%s\",\"event\":\"audit_open\",\"chain\":\"%s\"}\n",
	    time, cont ? "continue" : "new");
	if (n <= 0 || (size_t)n >= sizeof(line) ||
	    (w = ac_chain_line(c, line, (size_t)n, out, outsz)) == 0) {
		*c = save;
		return 0;
	}
	return w;
}

size_t
ac_checkpoint(struct ac_chain *c, const char *time, EVP_PKEY *key, const char *keyid,
    char *out, size_t outsz)
{
	unsigned char sig[AC_SIG_LEN];
	char tr[AC_TRAILER_MAX];
	size_t n, tn, siglen = sizeof(sig);
	EVP_MD_CTX *ctx;
	int m, ok;

	m = snprintf(out, outsz, "{\"time\":\"%s\",\"event\":\"checkpoint\",\"key\":\"%s\"", time, keyid);
	if (m <= 0 || (size_t)m >= outsz || (tn = trailer(c->seq + 1, c->head, tr)) == 0)
		return 0;
	n = (size_t)m;
	/* The signature (base64, 88 bytes) and its field, the brace, the newline. */
	if (n + tn + 8 + 88 + 3 > outsz)
		return 0;
	memcpy(out + n, tr, tn);
	n += tn;
	if ((ctx = EVP_MD_CTX_new()) == NULL)
		return 0;
	ok = EVP_DigestSignInit(ctx, NULL, NULL, NULL, key) == 1 &&
	    EVP_DigestSign(ctx, sig, &siglen, (const unsigned char *)out, n) == 1 &&
	    siglen == AC_SIG_LEN;
	EVP_MD_CTX_free(ctx);
	if (!ok)
		return 0;
	memcpy(out + n, ",\"sig\":\"", 8);
	n += 8;
	n += (size_t)EVP_EncodeBlock((unsigned char *)out + n, sig, AC_SIG_LEN);
	out[n++] = '"';
	out[n++] = '}';
	if (ac_hash(out, n, c->head) != 0)
		return 0;
	out[n++] = '\n';
	c->seq++;
	c->started = 1;
	return n;
}

/* ---- reading ---------------------------------------------------------------- */

static int
unhex(const char *s, unsigned char out[AC_HASH_LEN])
{
	size_t i;

	for (i = 0; i < AC_HEX_LEN; i++) {
		int v = s[i] >= '0' && s[i] <= '9' ? s[i] - '0' :
		    s[i] >= 'a' && s[i] <= 'f' ? s[i] - 'a' + 10 : -1;
		if (v < 0)
			return -1;
		if (i % 2 == 0)
			out[i / 2] = (unsigned char)(v << 4);
		else
			out[i / 2] |= (unsigned char)v;
	}
	return 0;
}

/* Whether S (LEN bytes) at P starts with the literal LIT; moves P past it. */
static int
lit(const char **p, const char *end, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(end - *p) < n || memcmp(*p, s, n) != 0)
		return 0;
	*p += n;
	return 1;
}

/* The last occurrence of NEEDLE in [P, END), or NULL. */
static const char *
find_last(const char *p, const char *end, const char *needle)
{
	size_t n = strlen(needle);
	const char *q;

	if ((size_t)(end - p) < n)
		return NULL;
	for (q = end - n; q >= p; q--) {
		if (memcmp(q, needle, n) == 0)
			return q;
		if (q == p)
			break;
	}
	return NULL;
}

int
ac_parse(const char *line, size_t len, struct ac_line *l, const char **why)
{
	const char *end = line + len, *p, *t, *tr;
	uint64_t seq = 0;
	size_t nd = 0;

	memset(l, 0, sizeof(*l));
	if (len == 0 || line[0] != '{') {
		*why = "not a JSON object";
		return -1;
	}
	if (memchr(line, '\n', len) != NULL || memchr(line, '\0', len) != NULL) {
		*why = "a newline or NUL byte inside the line";
		return -1;
	}
	if ((tr = find_last(line, end, ",\"seq\":")) == NULL) {
		*why = "no chain fields (seq, prev)";
		return -1;
	}
	p = tr + 7;
	while (p < end && *p >= '0' && *p <= '9') {
		if (nd == 0 && *p == '0') {
			*why = "seq has a leading zero";
			return -1;
		}
		if (seq > (UINT64_MAX - 9) / 10) {
			*why = "seq is too large";
			return -1;
		}
		seq = seq * 10 + (uint64_t)(*p - '0');
		nd++;
		p++;
	}
	if (nd == 0) {
		*why = "seq is not a number";
		return -1;
	}
	if (!lit(&p, end, ",\"prev\":\"") || end - p < AC_HEX_LEN + 1 || unhex(p, l->prev) != 0 ||
	    p[AC_HEX_LEN] != '"') {
		*why = "prev is not 64 lowercase hex digits";
		return -1;
	}
	p += AC_HEX_LEN + 1;
	l->seq = seq;
	if (lit(&p, end, ",\"sig\":\"")) {
		unsigned char raw[AC_SIG_LEN + 3];
		char back[92];

		/* Exactly the 88 bytes EVP_EncodeBlock() writes for 64. */
		if (end - p < 89 || p[88] != '"' || p[86] != '=' || p[87] != '=' ||
		    EVP_DecodeBlock(raw, (const unsigned char *)p, 88) != AC_SIG_LEN + 2) {
			*why = "sig is not a base64 Ed25519 signature";
			return -1;
		}
		EVP_EncodeBlock((unsigned char *)back, raw, AC_SIG_LEN);
		if (memcmp(back, p, 88) != 0) {
			*why = "sig is not a base64 Ed25519 signature";
			return -1;
		}
		memcpy(l->sig, raw, AC_SIG_LEN);
		l->signed_len = (size_t)(p - 8 - line);
		p += 89;
		l->kind = AC_CHECKPOINT;
	}
	if (p == end || *p != '}') {
		*why = "bytes after the chain fields";
		return -1;
	}
	while (p < end && *p == '}')
		p++;
	if (p != end) {
		*why = "bytes after the chain fields";
		return -1;
	}

	/* The chain's own lines: exactly as ac_open_line() and
	 * ac_checkpoint() write them. */
	p = line;
	if (!lit(&p, end, "{\"time\":\""))
		goto plain;
	t = p;
	while (p < end && p - t <= 40 && *p != '"' && *p != '\\')
		p++;
	if (p == end || *p != '"')
		goto plain;
	p++;
	if (lit(&p, end, ",\"event\":\"checkpoint\"")) {
		size_t i;

		if (l->kind != AC_CHECKPOINT || !lit(&p, end, ",\"key\":\"") ||
		    end - p < AC_KEYID_LEN + 1 || p[AC_KEYID_LEN] != '"' ||
		    p + AC_KEYID_LEN + 1 != tr) {
			*why = "a checkpoint line not as the proxy writes it";
			return -1;
		}
		for (i = 0; i < AC_KEYID_LEN; i++) {
			if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f'))) {
				*why = "a checkpoint's key is not 16 hex digits";
				return -1;
			}
			l->keyid[i] = p[i];
		}
		l->keyid[AC_KEYID_LEN] = '\0';
		return 0;
	}
	if (lit(&p, end, ",\"event\":\"audit_open\"")) {
		if (l->kind == AC_CHECKPOINT)
			goto sig_elsewhere;
		if (lit(&p, end, ",\"chain\":\"new\"") && p == tr)
			l->kind = AC_OPEN_NEW;
		else if (lit(&p, end, ",\"chain\":\"continue\"") && p == tr)
			l->kind = AC_OPEN_CONTINUE;
		else {
			*why = "an audit_open line not as the proxy writes it";
			return -1;
		}
		return 0;
	}
plain:
	if (l->kind == AC_CHECKPOINT)
		goto sig_elsewhere;
	l->kind = AC_LINE;
	return 0;
sig_elsewhere:
	*why = "a sig on a line that is not a checkpoint";
	return -1;
}

int
ac_keyid(EVP_PKEY *key, char out[AC_KEYID_LEN + 1])
{
	unsigned char raw[64], h[AC_HASH_LEN];
	size_t n = sizeof(raw);
	char hex[AC_HEX_LEN + 1];

	if (EVP_PKEY_get_raw_public_key(key, raw, &n) != 1 || ac_hash(raw, n, h) != 0)
		return -1;
	ac_hex(h, hex);
	memcpy(out, hex, AC_KEYID_LEN);
	out[AC_KEYID_LEN] = '\0';
	return 0;
}

int
ac_sig_ok(EVP_PKEY *pub, const void *msg, size_t len, const unsigned char sig[AC_SIG_LEN])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int ok;

	if (ctx == NULL)
		return 0;
	ok = EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, pub) == 1 &&
	    EVP_DigestVerify(ctx, sig, AC_SIG_LEN, msg, len) == 1;
	EVP_MD_CTX_free(ctx);
	return ok;
}

/* ---- the verifier -------------------------------------------------------------- */

void
ac_verify_init(struct ac_verify *v, EVP_PKEY *pub)
{
	memset(v, 0, sizeof(*v));
	v->pub = pub;
	if (pub != NULL && ac_keyid(pub, v->keyid) != 0)
		v->keyid[0] = '\0';
}

void
ac_verify_file(struct ac_verify *v)
{
	v->first_in_file = 1;
}

static int
is_zero(const unsigned char *h)
{
	static const unsigned char z[AC_HASH_LEN];

	return memcmp(h, z, AC_HASH_LEN) == 0;
}

enum ac_verdict
ac_verify_line(struct ac_verify *v, const char *line, size_t len, char *why, size_t whysz)
{
	enum ac_verdict r = AC_OK;
	struct ac_line l;
	const char *perr;
	uint64_t want;
	int first = v->first_in_file, signed_ok = 0;

	v->first_in_file = 0;
	v->lines++;
	if (ac_parse(line, len, &l, &perr) != 0) {
		snprintf(why, whysz, "not a chained audit line: %s", perr);
		r = AC_BROKEN;
		l.seq = v->seq + 1;
		goto step;
	}
	want = l.kind == AC_OPEN_NEW || first ? 1 : v->seq + 1;
	if (first && l.kind != AC_OPEN_NEW && l.kind != AC_OPEN_CONTINUE) {
		snprintf(why, whysz, "the file does not begin with its audit_open line "
		    "(its first lines were removed)");
		r = AC_BROKEN;
	} else if (l.seq != want) {
		if (l.seq > want)
			snprintf(why, whysz, "seq %llu where %llu was expected: %llu line(s) removed, "
			    "or lines reordered", (unsigned long long)l.seq, (unsigned long long)want,
			    (unsigned long long)(l.seq - want));
		else
			snprintf(why, whysz, "seq %llu where %llu was expected: lines reordered or repeated",
			    (unsigned long long)l.seq, (unsigned long long)want);
		r = AC_BROKEN;
	} else if (l.kind == AC_OPEN_NEW) {
		if (!is_zero(l.prev)) {
			snprintf(why, whysz, "a new chain whose prev is not zeros");
			r = AC_BROKEN;
		} else if (v->have && v->unsigned_lines > 0) {
			snprintf(why, whysz, "a new chain starts here: the %llu line(s) before it come "
			    "after the last checkpoint (unsigned; the proxy stopped without one)",
			    (unsigned long long)v->unsigned_lines);
			r = AC_UNSIGNED;
			v->unsigned_lines = 0;
		}
	} else if (first && !v->have) {
		/* The first file given continues a chain from an earlier
		 * file: where it starts is taken as it is. */
	} else if (memcmp(l.prev, v->head, AC_HASH_LEN) != 0) {
		if (first) {
			snprintf(why, whysz, "the file does not follow the file before it (its prev is "
			    "not the hash of that file's last line): a file is missing, cut, or out of order");
			r = AC_FILE_GAP;
		} else {
			snprintf(why, whysz, "prev is not the hash of the line before: that line was "
			    "changed, or this one does not follow it");
			r = AC_BROKEN;
		}
	}
	if (r == AC_OK && l.kind == AC_CHECKPOINT) {
		v->checkpoints++;
		if (v->pub == NULL) {
			signed_ok = 1;
		} else if (strcmp(l.keyid, v->keyid) != 0) {
			snprintf(why, whysz, "checkpoint signed by key %s, not by the key given (%s)",
			    l.keyid, v->keyid);
			r = AC_BAD_SIG;
		} else if (!ac_sig_ok(v->pub, line, l.signed_len, l.sig)) {
			snprintf(why, whysz, "checkpoint signature does not verify (key %s)", l.keyid);
			r = AC_BAD_SIG;
		} else {
			signed_ok = 1;
		}
	}
step:
	if (ac_hash(line, len, v->head) != 0)
		memset(v->head, 0xff, sizeof(v->head));
	v->seq = l.seq;
	v->have = 1;
	if (signed_ok)
		v->unsigned_lines = 0;
	else
		v->unsigned_lines++;
	return r;
}
