/*
 * proxy/core/server.h: the proxy engine's shared state, internal to proxy/, and
 * its owner, proxy/core/server.c.
 *
 * struct px_server is opaque: it is defined in server.c, and every other
 * module reads and changes it through the functions below, so that who
 * changes what is written in one file.  Each part has one owner, the only
 * module that changes it (the server is touched on the loop's thread only;
 * with workers = N there is one server per worker, see worker.h):
 *
 *   engine.c   the event loop, DNS resolver, audit log, counters (stats.c),
 *              refusal tally, human, config path, overrides, load_once:
 *              made by the engine, given once to px_server_new(), freed by
 *              the engine after px_server_free(); never changed between.
 *              The same for the pending questions (ask.h) and the runtime
 *              grants (grants.h), whose contents change as admins answer.
 *              stopping: px_server_stop().  The sessions' CAs (tls): the
 *              engine makes the registry, reload.c keeps it in line with
 *              each snapshot it takes (registry.h).  The sessions made at
 *              run time (rtsess.h): made by the engine, changed only by
 *              reload.c (px_reload_session()) on the first worker's loop.
 *   server.c   the snapshot in force and its generation
 *              (px_server_set_config()), the last reload
 *              (px_server_reloaded()), both called by reload.c; started_at;
 *              the budgets' use (budget.h), changed by decide.c, tunnel.c
 *              and forward.c through budget.c, pruned by reload.c.  The
 *              connections to the deciders and their cache (decider.h),
 *              one set a server, made and freed with it.
 *   conns.c    the open connections (struct px_conns, conns.h): the list,
 *              how many count against max_connections, the refusals
 *              lingering, the sessions' and uids' shares, the idle-trim
 *              timer.  accept.c adds (px_conns_add()), conn.c removes
 *              (px_conns_remove()), others walk and count.
 *   listen.c   the listeners (struct px_listeners, below): the list,
 *              whether they are paused (px_listeners_pause(): conns.c at
 *              max_connections, reload.c for those a reload binds), the
 *              accept back-off count.
 *
 * The server holds the connection and listener sets only as opaque
 * pointers (px_server_conns(), px_server_listeners()) that their own
 * module alone looks into.
 */
#ifndef POSTERN_PROXY_SERVER_H
#define POSTERN_PROXY_SERVER_H

#include <stdint.h>
#include <time.h>
#include <sys/types.h>

#include "conf/config.h"

struct event_base;
struct px_dns;
struct px_audit;
struct px_budgets;
struct px_conns;
struct px_listeners;
struct px_tlsreg;
struct px_server;
struct px_stats;
struct px_summary;
struct px_learn;
struct px_ask;
struct px_grants;
struct px_deciders;
struct px_rtsess;
struct px_workers;

struct sockaddr;
struct px_listener;
/* What a listener hands each accepted client socket to (px_conn_accept()
 * for the proxy, given by the engine, as evconnlistener_new() is given
 * its callback): the listener knows nothing of what happens next.  FD is
 * non-blocking and close-on-exec (evconnlistener's accept4()). */
typedef void px_accept_fn(struct px_listener *l, int fd, const struct sockaddr *sa, int salen);

/* What the engine builds a server from (px_server_new()). */
struct px_server_init {
	struct event_base *base;
	struct cf_config *cfg;    /* the first snapshot: taken by the server */
	struct px_dns *dns;
	struct px_audit *audit;
	struct px_stats *metrics; /* counters for /metrics (stats.c) */
	struct px_summary *tally;   /* human: the refusals so far; may be NULL */
	struct px_summary *would;   /* human: report mode's would-refusals; may be NULL */
	struct px_learn *learn;   /* what a rule would allow (learn.h); may be NULL */
	struct px_conns *conns;   /* empty (px_conns_new()) */
	struct px_listeners *listeners; /* empty (px_listeners_new()) */
	struct px_tlsreg *tls;   /* the sessions' CAs, in line with CFG (registry.h) */
	struct px_ask *ask;       /* mode = ask's pending questions (ask.h) */
	struct px_grants *grants; /* runtime grants (grants.h): outlive snapshots */
	struct px_rtsess *rtsess; /* runtime sessions (rtsess.h): in every snapshot */
	const char *config_path;  /* NULL: built-in */
	const struct cf_overrides *ov;
	int load_once;            /* the config is never reloaded */
	int human;                /* one plain stderr line per refusal */
	/* workers = N (worker.h): the set this server is worker WORKER of
	 * (the engine then calls px_workers_set()); a worker after the first
	 * shares the first's budgets (FIRST), everything else above is its
	 * own or shared as worker.h says. */
	struct px_workers *workers;
	unsigned worker;
	struct px_server *first;  /* NULL for the first */
};

/* ---- the server itself (server.c) ---------------------------------------- */

/* A server at generation 1 from IN: it takes IN->cfg (freed with it); the
 * rest stays the engine's, to free after px_server_free().  NULL (errno)
 * when out of memory, IN->cfg then still the caller's. */
struct px_server *px_server_new(const struct px_server_init *in);
/* Free SRV, its snapshot and its last reload's errors; NULL is a no-op. */
void px_server_free(struct px_server *srv);

/* The sessions' CAs and the upstream TLS context (registry.h): made and
 * freed by the engine, kept in line with each snapshot by reload.c. */
struct px_tlsreg *px_server_tls(const struct px_server *srv);

/* SRV's event loop (the one thread that touches SRV). */
struct event_base *px_server_base(const struct px_server *srv);
/* The snapshot new decisions use; owned by SRV, valid until the next
 * px_server_set_config(). */
const struct cf_config *px_server_config(const struct px_server *srv);
/* The snapshot's generation: 1 at start, + 1 per reload taken. */
unsigned long px_server_generation(const struct px_server *srv);
/* Take NC (owned by SRV from now on) as the snapshot in force, free the
 * old one, and count a generation. */
void px_server_set_config(struct px_server *srv, struct cf_config *nc);
/* The same on a worker after the first, which takes the first's
 * generation GEN with its snapshot NC (reload.c). */
void px_server_adopt_config(struct px_server *srv, struct cf_config *nc, unsigned long gen);
/* The config file (NULL: the built-in default), and the overrides every
 * load of it applies; both owned by the engine. */
const char *px_server_config_path(const struct px_server *srv);
const struct cf_overrides *px_server_overrides(const struct px_server *srv);
/* Nonzero when the config is read once and never reloaded. */
int px_server_load_once(const struct px_server *srv);
/* A new reference on the snapshot in force, for a connection to keep
 * (the caller frees it with cf_config_free()). */
struct cf_config *px_server_config_ref(const struct px_server *srv);
/* Nonzero once SRV is shutting down; px_server_stop() (the engine: a
 * signal, or the end of the loop) says so, for good. */
int px_server_stopping(const struct px_server *srv);
void px_server_stop(struct px_server *srv);
/* Nonzero when each refusal gets one plain stderr line, and the tally
 * those refusals are summed in (NULL: none, every one is told). */
int px_server_human(const struct px_server *srv);
struct px_summary *px_server_tally(const struct px_server *srv);
/* The same for the requests report mode allowed that the allowlist would
 * have refused (mode = report). */
struct px_summary *px_server_would_tally(const struct px_server *srv);
/* The learn summary of every session (learn.h; NULL: none), for
 * postern-sidecar run --learn and GET /learn. */
struct px_learn *px_server_learn(const struct px_server *srv);
/* SRV's open connections (conns.c) and listeners (listen.c): opaque, for
 * those modules' own functions to look into. */
struct px_conns *px_server_conns(const struct px_server *srv);
struct px_listeners *px_server_listeners(const struct px_server *srv);
/* SRV's counters (stats.h), DNS resolver (dns.h) and audit log (audit.h);
 * the engine's, valid as long as SRV. */
struct px_stats *px_server_stats(const struct px_server *srv);
/* SRV's pending questions (ask.h) and runtime grants (grants.h): the
 * engine's, valid as long as SRV; every module may change them, on the
 * loop (admin.c answers, decide.c holds and consults). */
struct px_ask *px_server_ask(const struct px_server *srv);
struct px_grants *px_server_grants(const struct px_server *srv);
/* SRV's connections to the deciders and their cache (decider.h), its own
 * (one a worker), made and freed with it. */
struct px_deciders *px_server_deciders(const struct px_server *srv);
/* The sessions made at run time (rtsess.h): the engine's, changed by
 * reload.c on the first worker's loop; may be NULL. */
struct px_rtsess *px_server_rtsess(const struct px_server *srv);
struct px_dns *px_server_dns(const struct px_server *srv);
struct px_audit *px_server_audit(const struct px_server *srv);
/* The use of the rules' budgets (budget.h): made and freed with SRV,
 * outside every snapshot, so that a reload keeps it. */
struct px_budgets *px_server_budgets(const struct px_server *srv);
/* The workers SRV is one of (worker.h), and SRV's index among them (0:
 * the first, on the engine's thread). */
struct px_workers *px_server_workers(const struct px_server *srv);
unsigned px_server_worker(const struct px_server *srv);
/* When SRV started serving (wall clock). */
time_t px_server_started_at(const struct px_server *srv);
/* Record the outcome of a reload made now: OK nonzero when it was taken;
 * ERRORS (taken by SRV, NULL when OK) its errors joined by newlines. */
void px_server_reloaded(struct px_server *srv, int ok, char *errors);
/* The last reload: sets *WHEN (0: none yet) and *OK, and returns its
 * errors joined by newlines (NULL when it was taken; owned by SRV). */
const char *px_server_last_reload(const struct px_server *srv, time_t *when, int *ok);

/* ---- the connection code (accept.c, conn.c; revoke.h for revoke = yes) --- */

/* Accept a new client socket FD from listener L (accept.c). */
void px_conn_accept(struct px_listener *l, int fd, const struct sockaddr *sa, int salen);

/* Close every connection (shutdown; conn.c). */
void px_conn_close_all(struct px_server *srv);

/* Free the calling thread's scratch buffer of the plain-HTTP path, at the
 * end of its loop (forward.c). */
void px_forward_cleanup(void);

/* ---- the listeners (listen.c) -------------------------------------------- */

/* An empty set of listeners for px_server_new(); NULL (errno) when out of
 * memory.  px_listeners_free() frees it once px_listeners_close() has
 * closed every one; NULL is a no-op. */
struct px_listeners *px_listeners_new(void);
void px_listeners_free(struct px_listeners *ls);
/* Bind every listener CFG names, each handing its clients to ACCEPT;
 * 0, or a negative errno (logged). */
int px_listeners_open(struct px_server *srv, const struct cf_config *cfg, px_accept_fn *accept);
void px_listeners_close(struct px_server *srv);
/* Bind one listener for SESSION, handing its clients to ACCEPT, and add it
 * to SRV's list; 0 or a negative errno (logged). */
int px_listener_open(struct px_server *srv, const struct cf_listen *w, const char *session,
    px_accept_fn *accept);
/* SRV's listeners in the order they were bound: the first (NULL: none),
 * and the one after L (NULL: L was the last).  Owned by SRV; closing one
 * (px_listener_close()) ends it, so take the next one first. */
struct px_listener *px_listeners_first(const struct px_server *srv);
struct px_listener *px_listener_next(const struct px_listener *l);
/* L's session name and its address as the config wrote it (owned by L),
 * and the server L belongs to. */
const char *px_listener_session(const struct px_listener *l);
struct px_server *px_listener_server(const struct px_listener *l);
const char *px_listener_text(const struct px_listener *l);
/* 1 when L's client sockets come with TCP_NODELAY (a TCP listener's). */
int px_listener_nodelay(const struct px_listener *l);
/* Nonzero when L is an auth=token listener: its clients' session is
 * chosen by the token each presents (proxy/flow/auth.h), not by L. */
int px_listener_auth_token(const struct px_listener *l);
/* Close one listener, remove its socket file, unlink it from the list. */
void px_listener_close(struct px_server *srv, struct px_listener *l);
/*
 * Whether this process can give the UNIX socket file of W the owner, group
 * and mode W asks for: at a new bind when CUR is NULL, else on CUR, the
 * listener bound there now.  Root always can; after the privilege drop,
 * only for a file the proxy's uid owns and keeps, and a group it has.
 * Returns 0 (also for TCP), or -EPERM with one sentence in WHY (SIZE).
 */
int px_listener_perms_check(const struct px_listener *cur, const struct cf_listen *w, char *why,
    size_t size);
/* Give L's socket file the owner, group and mode of W (a reload kept L);
 * 0, or a negative errno (logged). */
int px_listener_set_perms(struct px_listener *l, const struct cf_listen *w);
/* Nonzero when L is bound where W says, for SESSION. */
int px_listener_is(const struct px_listener *l, const struct cf_listen *w, const char *session);
/* Stop/restart accepting on every listener (max_connections reached,
 * conns.c), and whether they are stopped so now: an accept back-off ends
 * without restarting a paused listener. */
void px_listeners_pause(struct px_server *srv, int pause);
int px_listeners_paused(const struct px_server *srv);
/* workers = N: it may be SRV's turn on a UNIX socket every worker watches
 * (px_workers_turn() woke it): accept there again if so. */
void px_listeners_take_turn(struct px_server *srv);
/*
 * Bind a new non-blocking, close-on-exec stream socket at the UNIX socket
 * PATH, not yet listening: its directory made if missing (one level, 0755;
 * *MADE_DIR then set to 1), a stale socket file there replaced (a live one,
 * or anything that is not a socket, is an error, logged), the file born
 * 0600 so that the caller can set its owner, group and mode before
 * listen(2).  Returns the descriptor, or a negative errno.
 */
int px_unix_bind(const char *path, int *made_dir);
/* Give socket files, and directories made for them, to UID:GID. */
void px_listeners_chown(struct px_server *srv, uid_t uid, gid_t gid);

#endif
