/*
 * proxy/reload.h: take a new config while serving (SIGHUP, POST /reload,
 * the inotify watch).
 *
 * The admin socket and the watch do not know this module: the engine hands
 * each a px_reload_fn, so that what asks for a reload and what does it
 * depend on neither each other nor the engine.
 */
#ifndef POSTERN_PROXY_RELOAD_H
#define POSTERN_PROXY_RELOAD_H

struct cf_diag;
struct px_server;

/*
 * What an asker that watches the file can tell the reload: WRITTEN(ARG)
 * is nonzero when something wrote to the file since the reload was asked
 * for.  A load that fails then may have read a file half-written (an
 * editor's truncate and write in place): the reload is put off until that
 * writer's close asks again, not refused.
 *
 * REFUSED(ARG), when not NULL, is asked before a refusal is taken: nonzero
 * puts it off (the asker reads the file again later and says 0 then), for
 * a write the events cannot show yet: the kernel changes a truncated
 * file's size before it queues the IN_MODIFY, so a reader can catch the
 * empty file with nothing queued to say so.
 */
struct px_reload_probe {
	int (*written)(void *arg);
	int (*refused)(void *arg);
	void *arg;
};

/*
 * How a module asks for a reload: ARG is what it was handed with the
 * callback, TRIGGER names the asker in the log ("admin", "inotify"),
 * errors are appended to DIAG (may be NULL), PROBE as above (may be
 * NULL).  Returns 0 when the new config was taken, 1 when it was put off
 * (PROBE), -1 when it was refused (px_reload()).
 */
typedef int px_reload_fn(void *arg, struct cf_diag *diag, const char *trigger,
    const struct px_reload_probe *probe);

/*
 * Reload SRV's config file: parse and validate it completely; on success
 * swap the snapshot (generation + 1), rebind listeners whose set changed
 * (new ones hand their clients to px_conn_accept()), and, with revoke =
 * yes, close tunnels the new rules refuse.  On failure the old snapshot
 * stays in force; when SRV reads its config once every reload is refused.
 * Every error is appended to DIAG (may be NULL) and logged; the outcome is
 * recorded in SRV (px_server_last_reload()) and counted (stats.h).
 * Returns 0 when the new config was taken, -1 otherwise; 1 (nothing
 * recorded, nothing logged but a debug line) when the load failed while
 * PROBE says the file was being written, or PROBE puts a refusal off.
 */
int px_reload(struct px_server *srv, struct cf_diag *diag, const char *trigger,
    const struct px_reload_probe *probe);

/* Nonzero when a session of CFG is in mode = ask (which needs workers =
 * 1, worker.h). */
int px_reload_has_ask(const struct cf_config *cfg);

/*
 * Make (TEXT not NULL: LEN bytes, the lines of its [session NAME]
 * section) or end (TEXT NULL) the runtime session NAME, through
 * px_reload(): the new snapshot is the file and every runtime session, or
 * nothing changes.  An ended session's connections are closed on every
 * worker (px_conn_end_session()).  With state_dir the session is kept
 * there (rtsess.h), or forgotten.  Returns 0; -EINVAL when the snapshot
 * was refused (the reasons in DIAG: a bad field, a listener that cannot
 * be bound); -EPERM when NAME is a session of the file, or the proxy
 * never reloads; -EEXIST when NAME exists at run time already; -ENOENT
 * for no such session; -EIO when it could not be kept in state_dir (it
 * is not made); -ENOMEM.  Every reason is in DIAG.
 */
int px_reload_session(struct px_server *srv, const char *name, const char *text, size_t len,
    struct cf_diag *diag);

/* How the admin socket asks for px_reload_session() (ARG: the server). */
typedef int px_session_fn(void *arg, const char *name, const char *text, size_t len,
    struct cf_diag *diag);
int px_reload_session_cb(void *arg, const char *name, const char *text, size_t len,
    struct cf_diag *diag);

/* px_reload() as a px_reload_fn: ARG is the struct px_server. */
int px_reload_cb(void *arg, struct cf_diag *diag, const char *trigger,
    const struct px_reload_probe *probe);

#endif
