/*
 * proxy/policy/ask.h: the pending questions of mode = ask.  A request the
 * allowlist refuses in a session in ask mode is held (proxy/flow/decide.c) and
 * waits on the question for its session, host, port, method and (plain
 * HTTP) path and query, byte for byte and in full; only requests alike in
 * all of them wait on the same question, so that what a question shows is
 * exactly what an answer to it releases.  An admin answers on the admin
 * socket (GET /pending, POST /decide; proxy/admin/admin.c), or the question
 * expires after ask_timeout.  Either way every waiter is told, through the
 * callback it was held with.  An answer for the session (a grant for the
 * host and port) settles every question of that session, host and port.
 *
 * This module knows nothing of connections: a waiter is an opaque pointer
 * and a callback, and a client socket it watches (without reading from
 * it) for the client going away.  Made and freed by the engine, reached
 * through the server (px_server_ask()); loop thread only.
 */
#ifndef POSTERN_PROXY_ASK_H
#define POSTERN_PROXY_ASK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct event_base;
struct evbuffer;
struct px_ask;
struct px_ask_wait;

enum px_ask_answer {
	PX_ASK_ALLOW_ONCE = 0,
	PX_ASK_ALLOW_SESSION,
	PX_ASK_DENY_ONCE,
	PX_ASK_DENY_SESSION,
	PX_ASK_TIMEOUT,
	PX_ASK_NANSWERS,   /* not an answer: how many are counted */
	PX_ASK_GONE = PX_ASK_NANSWERS, /* the waiter's client went away */
};

/* "allow_once", "allow_session", "deny_once", "deny_session", "timeout",
 * "gone". */
const char *px_ask_answer_word(enum px_ask_answer a);

/* Bytes of a path a question shows; the rest is counted (path_cut). */
#define PX_ASK_PATH_SHOWN 1024

/*
 * What a question is about; the bytes are copied.  SESSION, HOST, METHOD
 * and TARGET key the question.  What is shown of METHOD and PATH is
 * escaped: a byte outside 0x21-0x7e (0x20-0x7e in METHOD), and '\', is
 * \xNN, so that two different requests never look alike, and a path has
 * no space; PATH is shown up to
 * PX_ASK_PATH_SHOWN bytes, and how many more it has is counted.
 */
struct px_ask_req {
	const char *session;
	const char *host;      /* normal form (cf_host_format()) */
	uint16_t port;
	const char *method;    /* "CONNECT", "GET", ...: METHOD_LEN bytes, or a
				* string when METHOD_LEN is 0 */
	size_t method_len;
	const char *target;    /* plain HTTP: the path and query as sent,
				* TARGET_LEN bytes; NULL otherwise */
	size_t target_len;
	const char *path;      /* what is shown of TARGET (placeholders
				* redacted), PATH_LEN bytes; NULL: TARGET */
	size_t path_len;
	const char *peer;      /* as the audit names the client */
	long pid, uid;         /* a UNIX listener's client (SO_PEERCRED); -1 else */
};

/* What a waiter is told: the question's id and the answer (or timeout,
 * or PX_ASK_GONE when its own client closed). */
typedef void px_ask_fn(void *waiter, unsigned id, enum px_ask_answer answer);

/* A question set on BASE whose questions expire after TIMEOUT_MS (taken
 * again for every new question: px_ask_set_timeout()).  NULL (errno) when
 * out of memory; px_ask_free(NULL) is a no-op.  px_ask_free() tells no
 * waiter: the engine frees it once every connection is closed. */
struct px_ask *px_ask_new(struct event_base *base, unsigned timeout_ms);
void px_ask_free(struct px_ask *a);
void px_ask_set_timeout(struct px_ask *a, unsigned timeout_ms);

/*
 * Hold WAITER on the question for R (a new one is published when none is
 * open for R's session, host, port, method and target), watching the client socket FD
 * (>= 0) for its peer closing, without reading from it.  FN is called
 * once, from the loop, with the answer: the handle is freed before FN
 * runs, and FN may free the waiter.  *ID is set to the question's id.
 * Returns the handle (for px_ask_leave()), or NULL (errno) when out of
 * memory.
 */
struct px_ask_wait *px_ask_hold(struct px_ask *a, const struct px_ask_req *r, int fd,
    px_ask_fn *fn, void *waiter, unsigned *id);

/* WAITER goes away without an answer (its connection closes): W is freed,
 * FN not called; the question stays while others wait, and then shows
 * the peer of the oldest of them.  NULL is a no-op. */
void px_ask_leave(struct px_ask_wait *w);

/* One open question as GET /pending shows it; the strings are the
 * question's, valid until it is answered, expires or loses a waiter. */
struct px_ask_q {
	unsigned id;
	const char *session, *host;
	const char *method, *path; /* escaped (px_ask_req); path "" but in
				    * plain HTTP */
	size_t path_cut;       /* bytes of the path not shown */
	const char *peer;      /* of the oldest waiter */
	uint16_t port;
	long pid, uid;         /* of the oldest waiter; -1: not known */
	time_t asked;          /* wall clock */
	long expires_in_ms;
	size_t waiting;
};

/* The I-th open question, oldest first (px_ask_nth()), or question ID
 * (px_ask_find()), into *Q: 0, or -ENOENT. */
int px_ask_nth(const struct px_ask *a, size_t i, struct px_ask_q *q);
int px_ask_find(const struct px_ask *a, unsigned id, struct px_ask_q *q);

/* Answer question ID with ANSWER (not PX_ASK_TIMEOUT): every waiter is
 * told; an answer for the session (PX_ASK_ALLOW_SESSION,
 * PX_ASK_DENY_SESSION) settles every other question open for the same
 * session, host and port too, as its grant covers them.  *RELEASED says
 * how many waiters were told.  A question is answered once: 0, then
 * -ENOENT for a second answer, an expired or an unknown id. */
int px_ask_answer(struct px_ask *a, unsigned id, enum px_ask_answer answer, size_t *released);

/* How many questions are open, and how many answers of each kind were
 * given (PX_ASK_TIMEOUT: questions expired). */
size_t px_ask_open(const struct px_ask *a);
uint64_t px_ask_count(const struct px_ask *a, enum px_ask_answer answer);

#endif
