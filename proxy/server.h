/*
 * proxy/server.h: the proxy engine's shared state, internal to proxy/, and
 * its owner, proxy/server.c.
 *
 * The engine (engine.c) builds one struct px_server per process; every
 * other module reads and changes it through the accessors below, so that
 * who changes what is written in one file.  Left (issue 14): the
 * connection code (conn.c) still reads and writes the fields directly
 * until its split gives it accessors of its own, so the struct stays
 * visible; listen.c keeps its list in srv->listeners and lends it out with
 * px_listeners_first() / px_listener_next().  Nothing else names a field.
 */
#ifndef POSTERN_PROXY_SERVER_H
#define POSTERN_PROXY_SERVER_H

#include <stdint.h>
#include <time.h>
#include <sys/types.h>
#include <sys/queue.h>

#include "conf/config.h"
#include "proxy/share.h"

struct event_base;
struct evconnlistener;
struct event;
struct px_dns;
struct px_audit;
struct px_conn;
struct px_server;
struct px_tally;

struct sockaddr;
struct px_listener;
/* What a listener hands each accepted client socket to (px_conn_accept()
 * for the proxy, given by the engine, as evconnlistener_new() is given
 * its callback): the listener knows nothing of what happens next. */
typedef void px_accept_fn(struct px_listener *l, int fd, const struct sockaddr *sa, int salen);

/* One bound listener; it serves the session named SESSION. */
struct px_listener {
	struct px_server *srv;
	struct evconnlistener *lev;
	px_accept_fn *accept;     /* given each accepted client socket */
	struct event *backoff;    /* re-enables accepting after EMFILE */
	char *session;            /* session name, looked up per connection */
	struct cf_listen where;   /* a copy; text owned here */
	int unlink_on_close;      /* we created the UNIX socket file */
	int made_dir;             /* and its directory */
	uid_t uid;                /* the UNIX socket file's owner, group and */
	gid_t gid;                /* mode, as last set (bind or reload) */
	mode_t mode;
	TAILQ_ENTRY(px_listener) entry;
};
TAILQ_HEAD(px_listener_list, px_listener);
TAILQ_HEAD(px_conn_list, px_conn);

struct px_counters {
	uint64_t accept_backoffs; /* the rest is counted in stats.c */
};

struct px_stats;   /* counters for /metrics and /status (stats.c) */
struct px_admin;   /* the admin socket (admin.c) */
struct px_watch;   /* the inotify watch on the config (watch.c) */

struct px_server {
	struct event_base *base;
	struct cf_config *cfg;    /* the snapshot new decisions use */
	unsigned long generation;
	struct px_dns *dns;
	struct px_audit *audit;
	struct px_listener_list listeners;
	struct px_conn_list conns;
	unsigned nconns;          /* counted against [proxy] max_connections */
	int paused;               /* so the listeners do not accept */
	struct px_share_list shares; /* per session and peer uid (share.c) */
	unsigned nrefusing;       /* refused over a share, answer in flight */
	struct px_counters stats;
	const char *config_path;  /* NULL: built-in */
	const struct cf_overrides *ov;
	int stopping;
	int human;                /* one plain stderr line per refusal */
	struct px_tally *tally;   /* human: the refusals so far (tally.h) */
	int load_once;            /* the config is never reloaded */
	struct event *idle_trim;  /* armed when the last connection closes */
	struct px_stats *metrics; /* counters for /metrics (stats.c) */
	struct px_admin *admin;
	struct px_watch *watch;
	/* Last reload: wall-clock time, result, and its errors joined by
	 * newlines (NULL when it succeeded). */
	time_t started_at;
	time_t last_reload;
	int last_reload_ok;
	char *last_reload_errors;
};

/* ---- accessors (server.c) ------------------------------------------------ */

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
/* The config file (NULL: the built-in default), and the overrides every
 * load of it applies; both owned by the engine. */
const char *px_server_config_path(const struct px_server *srv);
const struct cf_overrides *px_server_overrides(const struct px_server *srv);
/* Nonzero when the config is read once and never reloaded. */
int px_server_load_once(const struct px_server *srv);
/* Nonzero once SRV is shutting down. */
int px_server_stopping(const struct px_server *srv);
/* Nonzero while max_connections holds every listener (conn.c sets it). */
int px_server_paused(const struct px_server *srv);
/* How many client connections are open. */
unsigned px_server_nconns(const struct px_server *srv);
/* SRV's counters (stats.h), DNS resolver (dns.h) and audit log (audit.h);
 * owned by SRV. */
struct px_stats *px_server_stats(const struct px_server *srv);
struct px_dns *px_server_dns(const struct px_server *srv);
struct px_audit *px_server_audit(const struct px_server *srv);
/* When SRV started serving (wall clock). */
time_t px_server_started_at(const struct px_server *srv);
/* Record the outcome of a reload made now: OK nonzero when it was taken;
 * ERRORS (taken by SRV, NULL when OK) its errors joined by newlines. */
void px_server_reloaded(struct px_server *srv, int ok, char *errors);
/* The last reload: sets *WHEN (0: none yet) and *OK, and returns its
 * errors joined by newlines (NULL when it was taken; owned by SRV). */
const char *px_server_last_reload(const struct px_server *srv, time_t *when, int *ok);
/* Count one accept back-off (listen.c); returns how many came before, so
 * that only one in a hundred is logged. */
uint64_t px_server_count_backoff(struct px_server *srv);

/* ---- the connection code (conn.c) ---------------------------------------- */

/* The open connections of session NAME (NULL: of every session): returns
 * how many, and sets *UP and *DOWN to the bytes they have relayed so far
 * (closed ones are counted in stats.c). */
unsigned px_server_open_conns(const struct px_server *srv, const char *name, uint64_t *up,
    uint64_t *down);

/* Accept a new client socket FD from listener L (conn.c). */
void px_conn_accept(struct px_listener *l, int fd, const struct sockaddr *sa, int salen);

/* Stop accepting when SRV->nconns is at the current [proxy]
 * max_connections, start again when it is below (after an accept, a close
 * or a reload that moved the limit). */
void px_conn_limit_check(struct px_server *srv);

/* Close every connection (shutdown). */
void px_conn_close_all(struct px_server *srv);
/* revoke = yes: close tunnels that the current snapshot refuses. */
void px_conn_revoke(struct px_server *srv);

/* ---- the listeners (listen.c) -------------------------------------------- */

/* Bind every listener CFG names, each handing its clients to ACCEPT;
 * 0, or -1 (logged). */
int px_listeners_open(struct px_server *srv, const struct cf_config *cfg, px_accept_fn *accept);
void px_listeners_close(struct px_server *srv);
/* Bind one listener for SESSION, handing its clients to ACCEPT, and add it
 * to SRV's list; 0 or -1. */
int px_listener_open(struct px_server *srv, const struct cf_listen *w, const char *session,
    px_accept_fn *accept);
/* SRV's listeners in the order they were bound: the first (NULL: none),
 * and the one after L (NULL: L was the last).  Owned by SRV; closing one
 * (px_listener_close()) ends it, so take the next one first. */
struct px_listener *px_listeners_first(const struct px_server *srv);
struct px_listener *px_listener_next(const struct px_listener *l);
/* L's session name and its address as the config wrote it (owned by L). */
const char *px_listener_session(const struct px_listener *l);
const char *px_listener_text(const struct px_listener *l);
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
 * 0, or -1 (logged). */
int px_listener_set_perms(struct px_listener *l, const struct cf_listen *w);
/* Nonzero when L is bound where W says, for SESSION. */
int px_listener_is(const struct px_listener *l, const struct cf_listen *w, const char *session);
/* Stop/restart accepting on every listener (max_connections reached). */
void px_listeners_pause(struct px_server *srv, int pause);
/*
 * Bind a new non-blocking, close-on-exec stream socket at the UNIX socket
 * PATH, not yet listening: its directory made if missing (one level, 0755;
 * *MADE_DIR then set to 1), a stale socket file there replaced (a live one,
 * or anything that is not a socket, is an error, logged), the file born
 * 0600 so that the caller can set its owner, group and mode before
 * listen(2).  Returns the descriptor, or -1 with errno.
 */
int px_unix_bind(const char *path, int *made_dir);
/* Give socket files, and directories made for them, to UID:GID. */
void px_listeners_chown(struct px_server *srv, uid_t uid, gid_t gid);

#endif
