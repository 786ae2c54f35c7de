/*
 * proxy/core/prio.h: the event priorities of the proxy's loop.
 *
 * The loop has PX_PRI_N priority queues (event_base_priority_init).  Every
 * event belonging to one client connection (its bufferevents, timer,
 * connection attempts and splice relay) runs at PX_PRI_BULK; everything
 * else keeps libevent's default, PX_PRI_N / 2 = PX_PRI_CONTROL: DNS,
 * signals, the config watch, the listeners, and the calls the admin
 * socket's thread makes into the loop (loopcall.h).  libevent runs a ready
 * control event before any pending bulk one, and leaves the bulk queue
 * after the current callback when a control event becomes active.
 */
#ifndef POSTERN_PROXY_PRIO_H
#define POSTERN_PROXY_PRIO_H

enum {
	PX_PRI_CONTROL = 1,
	PX_PRI_BULK = 2,
	PX_PRI_N = 3,
};

#endif
