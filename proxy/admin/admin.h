/*
 * proxy/admin/admin.h: the admin socket (`admin = unix:PATH` in [proxy]), a
 * libevent evhttp server on a UNIX socket: GET /status, GET /metrics,
 * POST /reload, mode = ask's GET /pending, POST /decide, GET /grants, and
 * the runtime sessions' GET /sessions, PUT and DELETE /sessions/NAME.  See postern-proxy(8), "ADMIN SOCKET".
 * The same thread serves the metrics listener (`metrics = tcp:ADDR:PORT`),
 * GET /metrics and nothing else, with or without the admin socket.
 */
#ifndef POSTERN_PROXY_ADMIN_H
#define POSTERN_PROXY_ADMIN_H

#include "proxy/reload.h"

struct px_admin;
struct px_server;

/*
 * Bind the admin socket that SRV's current snapshot names in [proxy]
 * `admin`, and the metrics listener of `metrics` (either may be absent), ready to be served by a thread of its own (px_admin_start()),
 * so that a loop busy relaying never delays the admin socket; whatever a
 * request reads or changes is still done on SRV's loop (loopcall.h).  The socket file is created
 * with mode 0600, or 0660 with group `admin_group` when that is set; when
 * `user` is set the file (and a directory made for it) is given to that
 * uid, so that it can still be removed after privileges are dropped.  A
 * stale socket file is replaced; a live one, or a file that is not a
 * socket, is an error.  Must be called while the process may still bind
 * and chown (before privileges are dropped).  Returns the admin server, or
 * NULL with errno set (ENOENT: the config has neither, which is not an
 * error to report).  SRV must outlive it; px_admin_free() removes
 * the socket file again.  POST /reload calls RELOAD(RELOAD_ARG, ...) on
 * SRV's loop; GET /status and /metrics are rendered there (status.h).
 */
struct px_admin *px_admin_new(struct px_server *srv, px_reload_fn *reload, void *reload_arg);

/*
 * Start A's thread; call once privileges are dropped (a thread made before
 * would keep the capabilities the loop's thread gives up).  0, or a
 * negative errno.
 */
int px_admin_start(struct px_admin *a);

/* From SRV's loop thread, once the loop has stopped: stop A's thread (a
 * request waiting for the loop is answered 503), close open admin
 * connections, remove the socket file created by px_admin_new(); NULL is a
 * no-op. */
void px_admin_free(struct px_admin *a);

/* PUT and DELETE /sessions/NAME call SESSION(A's RELOAD_ARG, ...) on the
 * loop (reload.h); without it they answer 409.  Call before
 * px_admin_start(). */
void px_admin_set_sessions(struct px_admin *a, px_session_fn *session);

/* The socket path A serves (owned by A). */
const char *px_admin_path(const struct px_admin *a);

#endif
