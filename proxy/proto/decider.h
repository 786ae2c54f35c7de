/*
 * proxy/proto/decider.h: the decider protocol's bytes, with no connection
 * (proxy/core/decider.h carries them).  A question is one JSON object
 * about one request; an answer is one JSON object naming the question by
 * its id.  Over a UNIX socket each is one line; over HTTP a question is the
 * body of one POST and its answer the body of the 200.
 *
 * Everything here is pure: no allocation survives a call but the
 * question's text, no state, so the answer parser can be fuzzed alone.
 */
#ifndef POSTERN_PROXY_PROTO_DECIDER_H
#define POSTERN_PROXY_PROTO_DECIDER_H

#include <stddef.h>
#include <stdint.h>

/* The longest answer line or HTTP answer taken; longer is a bad answer. */
#define PX_DECIDER_LINE_MAX 16384
/* A deny's reason is cut to this many bytes. */
#define PX_DECIDER_REASON_MAX 200
/* The longest ttl an answer may set, in seconds; more is taken as this. */
#define PX_DECIDER_TTL_MAX 86400

/* One request, as the decider is asked about it.  Strings are
 * NUL-terminated; NULL (or -1 for UID and PID, 0 for RULE_LINE) leaves
 * the field out. */
struct px_decider_question {
	uint64_t id;
	const char *session;
	long uid, pid;              /* the peer of a UNIX listener (SO_PEERCRED) */
	const char *kind;           /* "connect", "http" or "socks5" */
	const char *method;
	const char *host;
	unsigned port;
	const char *path;           /* plain HTTP only */
	const char *sni;
	const char *rule_text;      /* the rule that matched, if any */
	const char *rule_file;
	int rule_line;
	int allowed;                /* the allowlist's own verdict */
	const char *reason;         /* and its reason code */
};

/*
 * Q as one JSON object followed by '\n', NUL-terminated, in a buffer the
 * caller frees; its length (with the '\n') in *LEN.  Every byte outside
 * printable ASCII in a string is written as %XX, so the text is valid
 * JSON and UTF-8 whatever the request held.  NULL when out of memory.
 */
char *px_decider_question_json(const struct px_decider_question *q, size_t *len);

struct px_decider_answer {
	uint64_t id;
	int allow;                  /* "decision": "allow" (1) or "deny" (0) */
	unsigned ttl;               /* seconds to keep it; 0: not kept */
	/* "reason", printable ASCII only (any other byte becomes '?') and cut
	 * to PX_DECIDER_REASON_MAX bytes: safe in a header and a log line. */
	char reason[PX_DECIDER_REASON_MAX + 1];
};

/*
 * Parse the LEN bytes at BUF (one answer, without its line end) into A.
 * An answer is a JSON object with "id" (an integer from 1), "decision"
 * ("allow" or "deny"), and optionally "reason" (a string) and "ttl" (an
 * integer from 0); other members are ignored.  Returns 0, or -1 with *WHY
 * (a static string) for anything else: more than PX_DECIDER_LINE_MAX
 * bytes, not JSON, a member twice, a bad or missing id or decision.
 */
int px_decider_answer_parse(const char *buf, size_t len, struct px_decider_answer *a,
    const char **why);

/*
 * The body of an HTTP/1.1 response to one POST, from the LEN bytes read so
 * far (EOF: the connection ended after them).  Returns 1 with *BODY and
 * *BODY_LEN (pointing into BUF) when the response is whole, 0 when more is
 * needed, -1 with *WHY when it is not a 200 with a body: a bad status
 * line, another status, a bad Content-Length, more than
 * PX_DECIDER_LINE_MAX bytes, or an EOF before the end.  Without
 * Content-Length the body ends at EOF.
 */
int px_decider_http_body(const char *buf, size_t len, int eof, const char **body,
    size_t *body_len, const char **why);

#endif
