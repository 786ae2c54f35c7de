/*
 * proxy/ctl.h: `postern-proxy ctl status|reload|metrics`, the admin
 * socket's client for a person at a terminal.
 */
#ifndef POSTERN_PROXY_CTL_H
#define POSTERN_PROXY_CTL_H

#include <stddef.h>

/* Where ctl looks when neither --admin nor -c says. */
#define PX_CTL_DEFAULT_ADMIN "/run/postern/admin.sock"

/*
 * Run `postern-proxy ctl COMMAND [--admin PATH] [-c FILE]`; ARGV[0] is
 * "ctl".  The admin socket is --admin PATH, else the `admin` key of
 * [proxy] in FILE (read even when FILE has errors elsewhere, so that a
 * broken edit can still be reloaded to see its errors), else
 * PX_CTL_DEFAULT_ADMIN.  Speaks HTTP/1.0 over the UNIX socket with a
 * 10-second limit and prints, on standard output: `status` as text for a
 * person, `reload` whether the new config was taken (and every FILE:LINE
 * error when not), `metrics` the Prometheus text as served.  Returns the
 * exit status: 0 on success, 1 when the proxy cannot be reached or
 * answers with an error or refuses the reload, 2 for a usage error.
 */
int px_ctl_main(int argc, char **argv);

/*
 * Send REQ (a whole HTTP/1.0 request, NUL-terminated) to the UNIX socket
 * PATH and read the whole response, up to the peer's close, into *RESP
 * (malloc'd, NUL-terminated, *LEN bytes; the caller frees it), all within
 * TIMEOUT_MS, at most about MAX bytes.  Never blocks past the time (a
 * listener whose backlog is full is waited for, not hung on).  Returns 0,
 * or -ETIMEDOUT, -EMSGSIZE, -ENOENT, -ECONNREFUSED or another -errno, with
 * *RESP NULL.  The admin socket's client for ctl and postern-sidecar ask.
 */
int px_ctl_exchange(const char *path, const char *req, int timeout_ms, size_t max, char **resp,
    size_t *len);

/*
 * Split the HTTP/1.x response RESP (LEN bytes) into its status code
 * (*STATUS) and body (*BODY, *BODYLEN, pointing into RESP).  Bounds-checked
 * (tests/unit/test-ctl.c, fuzzed by fuzz-sidecar-pending).  Returns 0, or -EINVAL when RESP is not a
 * complete HTTP/1.x response head.
 */
int px_ctl_parse_response(const char *resp, size_t len, int *status, const char **body,
    size_t *bodylen);

#endif
