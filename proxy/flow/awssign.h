/*
 * proxy/flow/awssign.h: a request inside a terminated tunnel to a host an
 * aws-sigv4 secret of the session signs for (conf/awskey.h) is checked and
 * signed again with the real keys (proxy/proto/sigv4.h) before its head is
 * built.  Only the HTTP/1.1 path does it: such a tunnel is not offered h2.
 */
#ifndef POSTERN_PROXY_FLOW_AWSSIGN_H
#define POSTERN_PROXY_FLOW_AWSSIGN_H

#include <stddef.h>

struct px_conn;
struct px_http_request;

/*
 * Check and re-sign C's request REQ (HEAD_LEN bytes of head at the start of
 * the client's input), rewriting REQ in place: its Authorization and
 * X-Amz-Security-Token values, or its target (presigned), then point into
 * this thread's buffers, good until the next call.  A request with no
 * SigV4 signature goes unchanged; one signed with a key id other than the
 * session's placeholder, malformed, or in a form that cannot be re-signed
 * is refused (secret_signature).  A body that must be hashed is held in
 * the input first (at most 1 MiB): RESUME(C) is called as more comes, and
 * parses the head again.  Returns 0 to go on, 1 when C was refused or is
 * held (C may be gone).
 */
int px_awssign_request(struct px_conn *c, struct px_http_request *req, size_t head_len,
    void (*resume)(struct px_conn *));

/* After the head is built: the audit line names the secret that signed
 * C's request, if one did. */
void px_awssign_note(struct px_conn *c);

struct cf_secret;
struct px_scrub;

/* When SEC is an aws-sigv4 secret that signs for C's terminated tunnel and
 * has a session token, add the real token to *SCRUB (made when NULL), so
 * that no response carries it back.  Returns 0, or -ENOMEM. */
int px_awssign_scrub(const struct px_conn *c, const struct cf_secret *sec, struct px_scrub **scrub);

/* Nonzero when an aws-sigv4 secret of C's session signs for its terminated
 * tunnel's host and port. */
int px_awssign_host(const struct px_conn *c);

#endif
