/*
 * tests/unit/test-ask.c: the pending questions of mode = ask (proxy/ask.h)
 * and the runtime grants (proxy/grants.h), on a real event loop: waiters
 * for one session, host and port share a question; an answer tells each
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
#include "proxy/ask.h"
#include "proxy/grants.h"
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

static const struct px_ask_req req_a = { "default", "a.test", 443, "CONNECT", "", "peer", -1, -1 };
static const struct px_ask_req req_b = { "default", "b.test", 80, "GET", "/p", "peer", 7, 1000 };

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
	tap_ok(h1 && h2 && h3 && id1 == id2 && id3 != id1, "one question per session, host and port (%u %u %u)",
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
