/*
 * tests/unit/test-ask.c: the pending questions of mode = ask (proxy/policy/ask.h)
 * and the runtime grants (proxy/policy/grants.h), on a real event loop: waiters
 * for one session, host, port, method and target share a question, and
 * only they (another method, path, query, or bytes past what is shown
 * make another); what is shown is escaped, a cut path says so, and the
 * peer shown is a waiting one's; allow once releases that question alone,
 * an answer for the session every question of its host; an answer tells each
 * once and settles the question once; a waiter that leaves takes the
 * question with it when it was the last; a question expires after its
 * timeout; a client socket closing tells its waiter alone.  Grants: the
 * last answer for a key wins, an expired one is dropped, file grants are
 * replaced as a set.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#include <event2/event.h>

#include "conf/grantfile.h"
#include "proxy/policy/ask.h"
#include "proxy/policy/grants.h"
#include "tests/unit/tap.h"

struct waiter {
	int told;
	unsigned id;
	enum px_ask_answer answer;
};

static void
told(void *arg, unsigned id, enum px_ask_answer answer)
{
	struct waiter *w = arg;

	w->told++;
	w->id = id;
	w->answer = answer;
}

static const struct px_ask_req req_a = {
	.session = "default", .host = "a.test", .port = 443, .method = "CONNECT", .peer = "peer",
	.pid = -1, .uid = -1,
};
static const struct px_ask_req req_b = {
	.session = "default", .host = "b.test", .port = 80, .method = "GET", .target = "/p",
	.target_len = 2, .peer = "peer", .pid = 7, .uid = 1000,
};

/* A plain-HTTP request for b.test:80 from PEER. */
static struct px_ask_req
http(const char *method, const char *target, size_t len, const char *peer)
{
	struct px_ask_req r = req_b;

	r.method = method;
	r.target = target;
	r.target_len = len;
	r.peer = peer;
	r.pid = r.uid = -1;
	return r;
}

/* The part about questions keyed by method and target. */
static void
keyed(struct event_base *base)
{
	struct px_ask *a = px_ask_new(base, 5000);
	struct waiter wg = { 0 }, wp = { 0 }, wg2 = { 0 }, wx[8];
	struct px_ask_wait *hg, *hg2;
	struct px_ask_req r;
	struct px_ask_q q;
	unsigned idg = 0, idp = 0, idg2 = 0, idx[8];
	size_t released = 0;
	char long1[2000], long2[2000];

	memset(wx, 0, sizeof(wx));
	/* The attack: a GET asks, a POST for the same host and port comes
	 * on another connection, the GET goes; allow once is given to what
	 * was shown. */
	r = http("GET", "/simple/requests/", 17, "10.0.0.1:1000");
	hg = px_ask_hold(a, &r, -1, told, &wg, &idg);
	r = http("POST", "/upload/exfil", 13, "10.0.0.1:2000");
	tap_ok(hg != NULL && px_ask_hold(a, &r, -1, told, &wp, &idp) != NULL && idp != idg &&
	    px_ask_open(a) == 2, "a POST to another path of the host asks its own question");
	tap_ok(px_ask_find(a, idp, &q) == 0 && strcmp(q.method, "POST") == 0 &&
	    strcmp(q.path, "/upload/exfil") == 0 && strcmp(q.peer, "10.0.0.1:2000") == 0 &&
	    q.waiting == 1 && q.path_cut == 0, "which shows its method, path and peer");
	px_ask_leave(hg);
	tap_ok(px_ask_answer(a, idg, PX_ASK_ALLOW_ONCE, &released) == -ENOENT && released == 0 &&
	    wp.told == 0 && px_ask_open(a) == 1,
	    "the GET gone, allow once to the GET's question releases nothing");
	tap_ok(px_ask_answer(a, idp, PX_ASK_DENY_ONCE, &released) == 0 && released == 1 &&
	    wp.told == 1 && wp.answer == PX_ASK_DENY_ONCE, "the POST waits until its own is answered");

	/* Alike requests share a question; the oldest waiter is shown. */
	r = http("GET", "/same", 5, "10.0.0.1:3000");
	hg = px_ask_hold(a, &r, -1, told, &wg, &idg);
	r = http("GET", "/same", 5, "10.0.0.1:4000");
	hg2 = px_ask_hold(a, &r, -1, told, &wg2, &idg2);
	tap_ok(hg && hg2 && idg == idg2 && px_ask_find(a, idg, &q) == 0 && q.waiting == 2 &&
	    strcmp(q.peer, "10.0.0.1:3000") == 0, "the same method and path share a question");
	px_ask_leave(hg);
	tap_ok(px_ask_find(a, idg, &q) == 0 && q.waiting == 1 && strcmp(q.peer, "10.0.0.1:4000") == 0,
	    "the first gone, the question shows the peer still waiting");
	r = http("GET", "/same?x=1", 9, "p");
	tap_ok(px_ask_hold(a, &r, -1, told, &wx[0], &idx[0]) != NULL && idx[0] != idg,
	    "a path that differs in its query alone asks another question");
	r = http("HEAD", "/same", 5, "p");
	tap_ok(px_ask_hold(a, &r, -1, told, &wx[1], &idx[1]) != NULL && idx[1] != idg &&
	    idx[1] != idx[0], "and so does another method");
	r = http("GET", "/same", 5, "p");
	r.session = "other";
	tap_ok(px_ask_hold(a, &r, -1, told, &wx[2], &idx[2]) != NULL && idx[2] != idg,
	    "and another session");
	tap_ok(px_ask_answer(a, idg, PX_ASK_ALLOW_ONCE, &released) == 0 && released == 1 &&
	    wg2.told == 1 && wx[0].told == 0 && wx[1].told == 0 && wx[2].told == 0,
	    "allow once releases its question's waiters alone");

	/* Bytes past what is shown, and bytes that would look alike. */
	memset(long1, 'a', sizeof(long1));
	memcpy(long2, long1, sizeof(long2));
	long1[0] = long2[0] = '/';
	long2[sizeof(long2) - 1] = 'b';
	r = http("GET", long1, sizeof(long1), "p");
	px_ask_hold(a, &r, -1, told, &wx[3], &idx[3]);
	r = http("GET", long2, sizeof(long2), "p");
	px_ask_hold(a, &r, -1, told, &wx[4], &idx[4]);
	tap_ok(idx[3] != idx[4] && px_ask_find(a, idx[4], &q) == 0 &&
	    strlen(q.path) == PX_ASK_PATH_SHOWN && q.path_cut == sizeof(long2) - PX_ASK_PATH_SHOWN,
	    "paths alike in what is shown are two questions, each saying how much is cut");
	r = http("GET", "/\x1b[2J\x01 \\", 8, "p");
	px_ask_hold(a, &r, -1, told, &wx[5], &idx[5]);
	tap_ok(px_ask_find(a, idx[5], &q) == 0 &&
	    strcmp(q.path, "/\\x1b[2J\\x01\\x20\\x5c") == 0,
	    "control bytes, space and backslash are shown escaped");
	r = http("GET", "/\\x1b[2J\\x01\\x20\\x5c", 20, "p");
	px_ask_hold(a, &r, -1, told, &wx[6], &idx[6]);
	tap_ok(idx[6] != idx[5] && px_ask_find(a, idx[6], &q) == 0 &&
	    strcmp(q.path, "/\\x5cx1b[2J\\x5cx01\\x5cx20\\x5cx5c") == 0,
	    "and the escapes written out look otherwise");
	r = http("GET", "/k", 2, "p");
	r.path = "/[placeholder]";
	r.path_len = 14;
	px_ask_hold(a, &r, -1, told, &wx[7], &idx[7]);
	tap_ok(px_ask_find(a, idx[7], &q) == 0 && strcmp(q.path, "/[placeholder]") == 0,
	    "a question shows the path it is given, and is keyed by the target");

	/* An answer for the session settles every question of its host. */
	tap_ok(px_ask_answer(a, idx[3], PX_ASK_ALLOW_SESSION, &released) == 0 && released == 7 &&
	    wx[0].told && wx[1].told && wx[3].told && wx[4].told && wx[5].told && wx[6].told &&
	    wx[7].told && wx[0].answer == PX_ASK_ALLOW_SESSION && wx[0].id == idx[0] &&
	    px_ask_count(a, PX_ASK_ALLOW_SESSION) == 7,
	    "allow for the session releases every question of its session, host and port");
	tap_ok(wx[2].told == 0 && px_ask_open(a) == 1 &&
	    px_ask_answer(a, idx[2], PX_ASK_DENY_SESSION, &released) == 0 && released == 1 &&
	    wx[2].answer == PX_ASK_DENY_SESSION, "but no other session's");
	px_ask_free(a);
}

int
main(void)
{
	struct event_base *base = event_base_new();
	struct px_ask *a = px_ask_new(base, 200);
	struct waiter w1 = { 0 }, w2 = { 0 }, w3 = { 0 }, w4 = { 0 }, w5 = { 0 };
	struct px_ask_wait *h1, *h2, *h3, *h5;
	struct px_ask_q q;
	unsigned id1 = 0, id2 = 0, id3 = 0, id4 = 0, id5 = 0;
	size_t released = 0;
	int sv[2];

	tap_ok(base != NULL && a != NULL, "an event loop and a question set");
	h1 = px_ask_hold(a, &req_a, -1, told, &w1, &id1);
	h2 = px_ask_hold(a, &req_a, -1, told, &w2, &id2);
	h3 = px_ask_hold(a, &req_b, -1, told, &w3, &id3);
	tap_ok(h1 && h2 && h3 && id1 == id2 && id3 != id1, "one question per session, host, port, method and target (%u %u %u)",
	    id1, id2, id3);
	tap_ok(px_ask_open(a) == 2 && px_ask_nth(a, 0, &q) == 0 && q.id == id1 && q.waiting == 2 &&
	    strcmp(q.host, "a.test") == 0 && q.port == 443, "two open, the first with two waiting");
	tap_ok(px_ask_find(a, id3, &q) == 0 && strcmp(q.path, "/p") == 0 && q.expires_in_ms > 0 &&
	    q.expires_in_ms <= 200 && q.pid == 7 && q.uid == 1000,
	    "a question carries its path, the client's pid and uid, and when it expires");
	tap_ok(px_ask_answer(a, id1, PX_ASK_ALLOW_ONCE, &released) == 0 && released == 2 &&
	    w1.told == 1 && w2.told == 1 && w1.answer == PX_ASK_ALLOW_ONCE && w1.id == id1,
	    "one answer tells both waiters once");
	tap_ok(px_ask_answer(a, id1, PX_ASK_DENY_ONCE, &released) == -ENOENT && released == 0 &&
	    w1.told == 1, "a second answer is refused, and tells nobody");
	tap_ok(px_ask_answer(a, id3, PX_ASK_TIMEOUT, &released) == -ENOENT,
	    "an admin cannot answer \"timeout\"");
	px_ask_leave(h3);
	tap_ok(px_ask_open(a) == 0 && w3.told == 0 && px_ask_find(a, id3, &q) == -ENOENT,
	    "the last waiter leaving takes its question, untold");
	tap_ok(px_ask_hold(a, &req_a, -1, told, &w4, &id4) != NULL && id4 > id3,
	    "a new question for an answered host gets a new id");
	event_base_loop(base, EVLOOP_ONCE);
	tap_ok(w4.told == 1 && w4.answer == PX_ASK_TIMEOUT && px_ask_open(a) == 0 &&
	    px_ask_count(a, PX_ASK_TIMEOUT) == 1 && px_ask_count(a, PX_ASK_ALLOW_ONCE) == 1,
	    "unanswered, it expires; answers and timeouts are counted");
	tap_ok(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "a client socket");
	h5 = px_ask_hold(a, &req_b, sv[0], told, &w5, &id5);
	close(sv[1]);
	event_base_loop(base, EVLOOP_ONCE);
	tap_ok(h5 != NULL && w5.told == 1 && w5.answer == PX_ASK_GONE && px_ask_open(a) == 0,
	    "a client that closes is told it is gone, and its question goes");
	close(sv[0]);
	px_ask_free(a);
	keyed(base);
	event_base_free(base);

	{
		struct px_grants *g = px_grants_new();
		const struct px_grant *e;
		struct cf_grant_entry fe[2];
		time_t now = time(NULL);

		tap_ok(g != NULL && px_grants_add(g, "s", "a.test", 443, PX_GRANT_ALLOW, 0, now, 0) == 0 &&
		    px_grants_add(g, "s", "a.test", 443, PX_GRANT_DENY, 5, now, 0) == 0 &&
		    px_grants_expire(g, now) == 1, "the last answer for a key replaces the grant");
		e = px_grants_find(g, "s", "a.test", 443, now);
		tap_ok(e != NULL && e->kind == PX_GRANT_DENY && e->uid == 5, "and is the one in force");
		tap_ok(px_grants_find(g, "t", "a.test", 443, now) == NULL &&
		    px_grants_find(g, "s", "a.test", 80, now) == NULL, "a grant is its session's and port's");
		px_grants_add(g, "s", "b.test", 80, PX_GRANT_ALLOW, 0, now, now + 10);
		tap_ok(px_grants_find(g, "s", "b.test", 80, now + 9) != NULL &&
		    px_grants_find(g, "s", "b.test", 80, now + 10) == NULL &&
		    px_grants_expire(g, now) == 2 && px_grants_expire(g, now + 10) == 1,
		    "a timed grant ends, and expiring drops it (finding it never changes the table)");
		memset(fe, 0, sizeof(fe));
		snprintf(fe[0].session, sizeof(fe[0].session), "s");
		snprintf(fe[0].host, sizeof(fe[0].host), "c.test");
		fe[0].port = 443;
		fe[1] = fe[0];
		snprintf(fe[1].host, sizeof(fe[1].host), "a.test");
		fe[1].deny = 0;
		tap_ok(px_grants_set_file(g, fe, 2, now) == 0 && px_grants_expire(g, now) == 2 &&
		    px_grants_find(g, "s", "a.test", 443, now)->kind == PX_GRANT_ALLOW &&
		    px_grants_find(g, "s", "a.test", 443, now)->from_file,
		    "the file's grants are added, replacing an admin's for the same key");
		tap_ok(px_grants_set_file(g, fe, 1, now) == 0 && px_grants_expire(g, now) == 1 &&
		    px_grants_find(g, "s", "a.test", 443, now) == NULL,
		    "read again, the file's grants replace those read before");
		px_grants_free(g);
	}
	return tap_done();
}
