/*
 * sidecar/pending.h: the answers of a run's admin socket that
 * `postern-sidecar ask` reads: the JSON of GET /pending (proxy/policy/ask.h) and
 * the head of an HTTP response.  The bytes come from the proxy engine, but
 * the names and paths in them were chosen by the sandboxed command, so
 * they are parsed as hostile: bounded, and every string kept printable.
 */
#ifndef POSTERN_SIDECAR_PENDING_H
#define POSTERN_SIDECAR_PENDING_H

#include <stddef.h>
#include <stdint.h>

/* At most this many questions are kept from one list; the rest wait. */
#define SC_PENDING_MAX 64

/* One pending question.  Strings are NUL-terminated, truncated to fit,
 * with every byte outside printable ASCII replaced by '?'.  PATH holds
 * what the proxy shows of a path (proxy/policy/ask.h: 1024 bytes); PATH_CUT is
 * how many more it has, and CUT says a string was truncated here: the
 * question is then not all shown. */
struct sc_pending {
	uint64_t id;
	char session[72];
	char host[256];
	unsigned port;
	char method[64];
	char path[1025];
	uint64_t path_cut;
	int cut;
	uint64_t waiting;
	uint64_t expires_in_ms;
};

/*
 * Parse LEN bytes of BODY, the JSON object {"pending":[{...},...]} of GET
 * /pending, into at most MAX entries of OUT (unknown keys and values of
 * any type are skipped, nesting at most 16 deep).  An entry without an
 * "id" is dropped.  Returns how many were stored (0..MAX), or -EINVAL
 * when BODY is not such an object.
 */
int sc_pending_parse(const char *body, size_t len, struct sc_pending *out, size_t max);

#endif
