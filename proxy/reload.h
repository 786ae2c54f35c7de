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

/* px_reload() as a px_reload_fn: ARG is the struct px_server. */
int px_reload_cb(void *arg, struct cf_diag *diag, const char *trigger,
    const struct px_reload_probe *probe);

#endif
