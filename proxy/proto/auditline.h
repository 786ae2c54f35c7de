/*
 * proxy/proto/auditline.h: the audit log's hash chain and its signed
 * checkpoints, with no I/O: the step that chains a line as it is written,
 * the parser of a chained line (untrusted bytes when verifying), the
 * signature, and the verifier's state machine.
 *
 * A chained line is a JSON object ending in the chain fields, put before
 * the line's closing braces: ,"seq":N,"prev":"HEX"} where N counts the
 * lines of the file from 1 (back to 1 at a new chain) and HEX is the
 * SHA-256 of the line before it, as written, without its newline (64
 * zeros before the first line of a new chain).  Two lines mark the chain:
 *
 *   {"time":T,"event":"audit_open","chain":"new"|"continue",...,"seq":N,"prev":H}
 *   {"time":T,"event":"checkpoint","key":K,"seq":N,"prev":H,"sig":S}
 *
 * audit_open starts each file and each run of the proxy: "new" starts a
 * chain (prev is zeros), "continue" goes on from the line before it, which
 * is the last line of the previous file when it is the first of its file.
 * A checkpoint's S is the Ed25519 signature (base64) of the line's bytes
 * before ,"sig": and K the signing key's id (ac_keyid()).
 */
#ifndef POSTERN_PROXY_AUDITLINE_H
#define POSTERN_PROXY_AUDITLINE_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#define AC_HASH_LEN 32
#define AC_HEX_LEN 64
#define AC_KEYID_LEN 16   /* hex of the first 8 bytes of SHA-256(public key) */
#define AC_SIG_LEN 64
/* Bytes the chain fields add to a line, at most (a checkpoint's sig aside). */
#define AC_TRAILER_MAX 112

/* The chain as the writer holds it. */
struct ac_chain {
	uint64_t seq;                     /* of the last line written, 0: none */
	unsigned char head[AC_HASH_LEN];  /* its hash; zeros before a new chain */
	int started;                      /* a line of this chain was written */
};

enum ac_kind {
	AC_LINE,          /* an event */
	AC_OPEN_NEW,      /* audit_open, chain "new" */
	AC_OPEN_CONTINUE, /* audit_open, chain "continue" */
	AC_CHECKPOINT,
};

/* One parsed line: pointers into the line given to ac_parse(). */
struct ac_line {
	enum ac_kind kind;
	uint64_t seq;
	unsigned char prev[AC_HASH_LEN];
	char keyid[AC_KEYID_LEN + 1];     /* checkpoint */
	unsigned char sig[AC_SIG_LEN];    /* checkpoint */
	size_t signed_len;                /* checkpoint: bytes the signature covers */
};

/* SHA-256 of LEN bytes at P into OUT; 0 or -1 (OpenSSL failed). */
int ac_hash(const void *p, size_t len, unsigned char out[AC_HASH_LEN]);
/* HASH as 64 lowercase hex digits and a NUL. */
void ac_hex(const unsigned char hash[AC_HASH_LEN], char out[AC_HEX_LEN + 1]);

/*
 * Chain the finished line LINE (LEN bytes, ending in "}\n"): write it to
 * OUT with the chain fields put before its last run of closing braces,
 * and step C.  Returns the bytes written, or 0 (C unchanged) when the line
 * does not end so or OUTSZ is short (LEN + AC_TRAILER_MAX is enough).
 */
size_t ac_chain_line(struct ac_chain *c, const char *line, size_t len, char *out, size_t outsz);

/*
 * A checkpoint line into OUT, chained (C steps): TIME is its "time" value
 * (an ISO 8601 string), KEY signs it, KEYID names KEY.  Returns its length
 * with the newline, or 0 (C unchanged) on a short OUTSZ (512 is enough) or
 * a failed signature.
 */
size_t ac_checkpoint(struct ac_chain *c, const char *time, EVP_PKEY *key, const char *keyid,
    char *out, size_t outsz);
/* An audit_open line: as ac_checkpoint(); CONTINUE 0 starts a new chain
 * (C's head is zeroed and its seq restarts). */
size_t ac_open_line(struct ac_chain *c, const char *time, int cont, char *out, size_t outsz);

/*
 * Parse LINE (LEN bytes, no newline; untrusted): its kind and chain
 * fields.  Returns 0, or -1 with *WHY saying what is wrong.
 */
int ac_parse(const char *line, size_t len, struct ac_line *l, const char **why);

/* KEY's id: hex of the first 8 bytes of the SHA-256 of its raw public
 * key.  0 or -1. */
int ac_keyid(EVP_PKEY *key, char out[AC_KEYID_LEN + 1]);
/* Whether SIG is PUB's Ed25519 signature of MSG: 1 yes, 0 no. */
int ac_sig_ok(EVP_PKEY *pub, const void *msg, size_t len, const unsigned char sig[AC_SIG_LEN]);

/* What ac_verify_line() found, in rising order of weight. */
enum ac_verdict {
	AC_OK = 0,
	AC_UNSIGNED = 1,   /* lines after the last checkpoint (ac_verify_end) */
	AC_BROKEN = 2,     /* a line edited, removed, reordered, cut, unreadable */
	AC_FILE_GAP = 3,   /* a file's first line does not follow the file before */
	AC_BAD_SIG = 4,    /* a checkpoint's signature fails, or another key's */
};

/* The verifier: the chain as read, across the files given in order. */
struct ac_verify {
	EVP_PKEY *pub;                 /* NULL: signatures are not checked */
	char keyid[AC_KEYID_LEN + 1];
	int have;                      /* a line was read */
	int first_in_file;
	unsigned char head[AC_HASH_LEN];
	uint64_t seq;
	uint64_t unsigned_lines;       /* since the last good checkpoint */
	uint64_t lines, checkpoints;
};

/* Start V with PUB (kept, not owned; NULL: no signature checks). */
void ac_verify_init(struct ac_verify *v, EVP_PKEY *pub);
/* A new file begins. */
void ac_verify_file(struct ac_verify *v);
/*
 * The next line LINE (LEN bytes, no newline).  Returns AC_OK, or a
 * verdict with WHY (WHYSZ bytes) saying what is wrong; V then goes on
 * from this line, so that each fault is told once.
 */
enum ac_verdict ac_verify_line(struct ac_verify *v, const char *line, size_t len,
    char *why, size_t whysz);

#endif
