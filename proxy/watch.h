/*
 * proxy/watch.h: reload the config when its file changes (inotify).
 */
#ifndef POSTERN_PROXY_WATCH_H
#define POSTERN_PROXY_WATCH_H

#include "proxy/reload.h"

struct px_watch;
struct px_server;

/* How long the directory must be quiet after a completed change before a
 * reload, and the longest a stream of completed changes may postpone it,
 * in milliseconds. */
#define PX_WATCH_DEBOUNCE_MS 200
#define PX_WATCH_MAX_DELAY_MS 800

/*
 * Watch the directory of SRV's config file with inotify, so that an
 * in-place write, an editor's write-to-a-temporary-then-rename and a
 * Kubernetes ConfigMap update (a new `..data` symlink renamed over the old
 * one) are all seen; events for other names in the directory are ignored.
 * Only a complete file is read: a change counts once the in-place writer
 * has closed the file (IN_CLOSE_WRITE) or a new file was renamed or linked
 * into place; a write under way (IN_MODIFY with no close yet) never
 * triggers a reload, however long it stalls.  A completed change is acted
 * on once the directory has been quiet for PX_WATCH_DEBOUNCE_MS (never
 * later than PX_WATCH_MAX_DELAY_MS after the first, and never while a new
 * write is under way): RELOAD(RELOAD_ARG, NULL, "inotify"), unless the
 * file's SHA-256 is that of the snapshot in force and the last reload was
 * taken.  Returns the watch, or NULL with errno set (ENOENT: SRV runs the
 * built-in default, there is no file to watch).  SRV must outlive it.
 */
struct px_watch *px_watch_new(struct px_server *srv, px_reload_fn *reload, void *reload_arg);

/* Stop watching and free W; NULL is a no-op. */
void px_watch_free(struct px_watch *w);

#endif
