/*
 * tests/unit/test-loopcall.c: proxy/core/loopcall.c, the admin thread's way into
 * the loop.  A call runs on the loop's thread and is waited for; one the
 * loop does not take in time is withdrawn and never runs; closing releases
 * a waiting call; and a loop kept busy by relay callbacks that never let it
 * poll still takes a call, because they check px_loopcall_check().
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "proxy/core/loopcall.h"
#include "proxy/core/prio.h"
#include "tests/unit/tap.h"

static struct event_base *base;
static struct px_loopcall *lc;
static pthread_t loop_thread;

struct call {
	int timeout_ms;
	int rc;
	int ran;
	int on_loop_thread;
	int stop_loop; /* the function also ends the loop */
};

static void
fn(void *arg)
{
	struct call *c = arg;

	c->ran++;
	c->on_loop_thread = pthread_equal(pthread_self(), loop_thread);
	if (c->stop_loop)
		event_base_loopbreak(base);
}

static int caller_done;

static void *
caller(void *arg)
{
	struct call *c = arg;

	c->rc = px_loopcall_run(lc, fn, c, c->timeout_ms);
	__atomic_store_n(&caller_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* A relay callback that never lets the loop poll: it makes itself active
 * again every time, as a connection with endless data would, until the
 * caller has its answer.  BUSY_CHECK says whether it looks at
 * px_loopcall_check() first, as the relay's do. */
static int busy_check, busy_runs;
static pthread_t busy_caller;
static struct call *busy_call;

static void
busy_cb(evutil_socket_t fd, short what, void *arg)
{
	struct event *self = arg;

	(void)fd;
	(void)what;
	if (busy_check)
		px_loopcall_check();
	/* The call is made once the loop is inside the busy queue, so that
	 * it cannot be taken before the loop got busy. */
	if (busy_runs++ == 0)
		pthread_create(&busy_caller, NULL, caller, busy_call);
	if (!__atomic_load_n(&caller_done, __ATOMIC_ACQUIRE))
		event_active(self, EV_TIMEOUT, 1);
}

int
main(void)
{
	struct call c;
	pthread_t t;
	struct event *busy;
	int check;

	loop_thread = pthread_self();
	base = event_base_new();
	event_base_priority_init(base, PX_PRI_N);
	lc = px_loopcall_new(base);
	tap_ok(lc != NULL, "the loop side is made");
	{
		/* One per loop (workers = N): a second loop gets its own side,
		 * and this thread's flag stays the first loop's. */
		int *mine = px_loopcall_waiting;
		struct event_base *b2 = event_base_new();
		struct px_loopcall *lc2 = NULL;

		if (b2 != NULL && event_base_priority_init(b2, PX_PRI_N) == 0)
			lc2 = px_loopcall_new(b2);

		tap_ok(lc2 != NULL && mine != NULL && px_loopcall_waiting == mine,
		    "each loop has its own side; the thread keeps the one it was bound to");
		px_loopcall_free(lc2);
		tap_ok(px_loopcall_waiting == mine, "freeing another loop's side leaves this one bound");
		if (b2 != NULL)
			event_base_free(b2);
	}

	/* An idle loop is woken and runs the call on its own thread. */
	memset(&c, 0, sizeof(c));
	c.timeout_ms = 5000;
	c.stop_loop = 1;
	pthread_create(&t, NULL, caller, &c);
	event_base_dispatch(base);
	pthread_join(t, NULL);
	tap_ok(c.rc == 0 && c.ran == 1, "a call returns 0 once the function ran once (rc %d)", c.rc);
	tap_ok(c.on_loop_thread, "the function ran on the loop's thread");

	/* Nobody runs the loop: the call is withdrawn and never runs. */
	memset(&c, 0, sizeof(c));
	c.timeout_ms = 100;
	pthread_create(&t, NULL, caller, &c);
	pthread_join(t, NULL);
	tap_ok(c.rc == -ETIMEDOUT, "a call the loop does not take in time is -ETIMEDOUT (rc %d)", c.rc);
	event_base_loop(base, EVLOOP_NONBLOCK);
	event_base_loop(base, EVLOOP_NONBLOCK);
	tap_ok(c.ran == 0, "and the withdrawn function never runs, not even later");

	/* A loop kept busy by relay callbacks: with the check the call gets
	 * through; without it, the busy queue never lets the loop see the
	 * eventfd and the call times out. */
	for (check = 1; check >= 0; check--) {
		busy_check = check;
		busy_runs = 0;
		busy = event_new(base, -1, 0, busy_cb, event_self_cbarg());
		event_priority_set(busy, PX_PRI_BULK);
		event_active(busy, EV_TIMEOUT, 1);
		memset(&c, 0, sizeof(c));
		c.timeout_ms = check ? 5000 : 300;
		c.stop_loop = 1;
		caller_done = 0;
		busy_call = &c;
		/* One turn of the loop: it stays in the busy queue until the
		 * call is taken (with the check) or has timed out. */
		event_base_loop(base, EVLOOP_ONCE);
		pthread_join(busy_caller, NULL);
		event_free(busy);
		if (check)
			tap_ok(c.rc == 0 && c.ran == 1,
			    "a loop busy with relay callbacks takes the call (rc %d, %d callbacks first)",
			    c.rc, busy_runs);
		else
			tap_ok(c.rc == -ETIMEDOUT && c.ran == 0,
			    "without the check, the busy loop never takes it (rc %d): the check is what works", c.rc);
	}

	/* Closing releases a waiting call with -ECANCELED. */
	memset(&c, 0, sizeof(c));
	c.timeout_ms = 5000;
	pthread_create(&t, NULL, caller, &c);
	usleep(50000);
	px_loopcall_close(lc);
	pthread_join(t, NULL);
	tap_ok(c.rc == -ECANCELED && c.ran == 0, "closing answers a waiting call -ECANCELED (rc %d)", c.rc);
	tap_ok(px_loopcall_run(lc, fn, &c, 100) == -ECANCELED, "and refuses new ones");

	px_loopcall_free(lc);
	event_base_free(base);
	return tap_done();
}
