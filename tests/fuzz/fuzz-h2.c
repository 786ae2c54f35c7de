/*
 * tests/fuzz/fuzz-h2.c: the HTTP/2 relay over arbitrary client bytes.  The
 * first input byte is the segment size (0 meaning 256); the rest is what
 * the client sends, fed in segments of that size.  The upstream never
 * answers, so requests stay open and their bodies wait in the module.
 * Invariants checked: the module never holds more DATA than the windows it
 * advertised; once an input call fails the relay says why; decide sees
 * NUL-terminated pseudo-headers; everything is freed (ASan in the replay).
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/flow/h2.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ssize_t
sink(void *arg, const uint8_t *buf, size_t len)
{
	return (ssize_t)len;
}

static const struct px_h2_edit edit = { "authorization", "Bearer fuzz" };

static void
decide(void *arg, const struct px_h2_req *req, struct px_h2_verdict *v)
{
	size_t i;

	for (i = 0; i < req->nheaders; i++)
		if (req->headers[i].namelen == 0)
			abort();
	if (req->path != NULL && strlen(req->path) > 0 && req->path[1] == 'd') {
		v->status = 403;
		v->reason = "fuzz";
		return;
	}
	v->action = PX_H2_FORWARD;
	v->edits = &edit;
	v->nedits = 1;
	v->edit_set = "fuzz";
}

static void
done(void *arg, const struct px_h2_stream_info *info)
{
	if (info->method == NULL || info->path == NULL || strchr(info->path, '?'))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct px_h2_cbs cbs = { sink, sink, decide, done };
	struct px_h2 *h;
	size_t step, off, n;
	int rv = 0;

	if (size < 1)
		return 0;
	step = data[0] ? data[0] : 256;
	data++;
	size--;
	h = px_h2_new(&cbs, NULL);
	if (h == NULL)
		return 0; /* out of memory is not a finding */
	px_h2_flush(h);
	for (off = 0; off < size; off += n) {
		n = size - off < step ? size - off : step;
		rv = px_h2_client_input(h, data + off, n);
		if (px_h2_buffered(h) > 2 * (size_t)PX_H2_CONN_WINDOW)
			abort();
		if (rv != 0)
			break;
	}
	if (rv == -EPROTO && px_h2_error(h) == NULL)
		abort();
	px_h2_free(h);
	return 0;
}
