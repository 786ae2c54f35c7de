/*
 * proxy/server.h: the proxy engine's shared state, internal to proxy/.
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

/* One bound listener; it serves the session named SESSION. */
struct px_listener {
	struct px_server *srv;
	struct evconnlistener *lev;
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

/*
 * Reload the config file: parse and validate it completely; on success swap
 * the snapshot (generation + 1), rebind listeners whose set changed, and,
 * with revoke = yes, close tunnels the new rules refuse.  On failure the old
 * snapshot stays in force; with SRV->load_once every reload is refused.  Every error is appended to DIAG (may be NULL)
 * and logged.  Returns 0 when the new config was taken, -1 otherwise.
 */
int px_server_reload(struct px_server *srv, struct cf_diag *diag, const char *trigger);

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

/* Listener management (listen.c). */
int px_listeners_open(struct px_server *srv, const struct cf_config *cfg);
void px_listeners_close(struct px_server *srv);
/* Bind one listener for SESSION and add it to SRV's list; 0 or -1. */
int px_listener_open(struct px_server *srv, const struct cf_listen *w, const char *session);
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
/* Give socket files, and directories made for them, to UID:GID. */
void px_listeners_chown(struct px_server *srv, uid_t uid, gid_t gid);

#endif
