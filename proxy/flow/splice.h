/*
 * proxy/flow/splice.h: relay an established tunnel, copying while the
 * destination keeps up and splicing through a pipe while it does not.
 */
#ifndef POSTERN_PROXY_SPLICE_H
#define POSTERN_PROXY_SPLICE_H

#include <stdint.h>
#include <sys/time.h>

struct event_base;
struct px_splice;

/*
 * Called once when the relay is over: ERR is 0 when both directions ended
 * (EOF passed on as a half-close each way; the second one by the close in
 * px_splice_free()), or an errno value.  The relay must then be freed with
 * px_splice_free(), from inside the call or right after it.
 */
typedef void (*px_splice_done_cb)(int err, void *arg);

/*
 * Take over two connected non-blocking sockets A (the client) and B
 * (upstream) and relay both ways through a pipe per direction, taken from a
 * small pool only while bytes are in flight (an idle tunnel holds no pipe):
 * what the destination takes at once goes through one copy buffer per
 * thread, the rest waits in the pipe.
 * Each pipe bounds the bytes in flight in its direction: reading a side
 * stops while its pipe is full (back-pressure).  After EOF from one side
 * and once its pipe is empty, the other side's write half is shut
 * (half-close is propagated).  A_TO_B and B_TO_A count the bytes relayed;
 * ACTIVITY is set to the loop's cached time whenever bytes move.  Returns
 * the relay, which owns both sockets from then on, or NULL with errno (the
 * sockets are then untouched).
 */
struct px_splice *px_splice_new(struct event_base *base, int a, int b, uint64_t *a_to_b,
    uint64_t *b_to_a, struct timeval *activity, px_splice_done_cb cb, void *arg);

/*
 * A byte budget on the A -> B direction: QUOTA(ARG, TOOK) counts TOOK
 * bytes just read from A (0 before a read) and returns how many more may
 * be read now.  Each read from A is bounded by it; once it is 0 and A has
 * more to send, A is read no more, and once the bytes already read are out
 * to B the relay ends with EDQUOT.  Set it right after px_splice_new().
 */
typedef uint64_t (*px_splice_quota_fn)(void *arg, uint64_t took);
void px_splice_set_quota(struct px_splice *s, px_splice_quota_fn quota, void *arg);

/* Stop relaying, close both sockets, return the pipes; NULL is a no-op. */
void px_splice_free(struct px_splice *s);

/* Close the pooled pipes (at exit). */
void px_splice_cleanup(void);

#endif
