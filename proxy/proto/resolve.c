/*
 * proxy/proto/resolve.c: a blocking lookup on a private event loop (resolve.h).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include <event2/event.h>

#include "proxy/proto/resolve.h"

struct wait {
	struct event_base *base;
	struct px_resolved *out;
	int status;
	const char *err;
	int done;
};

static void
done_cb(int status, const struct px_dns_result *res, const char *errmsg, void *arg)
{
	struct wait *w = arg;
	size_t i;

	w->status = status;
	w->done = 1;
	if (status == 0) {
		w->out->naddrs = res->naddrs;
		for (i = 0; i < res->naddrs && i < PX_DNS_MAX_ADDRS; i++)
			w->out->addrs[i] = res->addrs[i];
	} else {
		w->err = errmsg ? errmsg : px_dns_strerror(status);
	}
	event_base_loopexit(w->base, NULL);
}

int
px_resolve_sync(const char *name, const char *servers, unsigned timeout_ms,
    struct px_resolved *out, const char **err)
{
	struct px_dns_opts opts;
	struct px_dns *d = NULL;
	struct wait w;
	static char errbuf[256];
	int rc;

	memset(&w, 0, sizeof(w));
	memset(out, 0, sizeof(*out));
	w.out = out;
	w.base = event_base_new();
	if (w.base == NULL) {
		*err = "cannot create an event loop";
		return -ENOMEM;
	}
	px_dns_opts_init(&opts);
	if (timeout_ms > 0 && timeout_ms < opts.timeout_ms * opts.tries)
		opts.timeout_ms = timeout_ms / (opts.tries ? opts.tries : 1);
	opts.cache_max = 0;
	d = px_dns_new(w.base, servers, &opts, errbuf, sizeof(errbuf));
	if (d == NULL) {
		*err = errbuf;
		rc = -EINVAL;
		goto out;
	}
	if (px_dns_resolve(d, name, done_cb, &w) == NULL) {
		*err = "cannot start the lookup";
		rc = -ENOMEM;
		goto out;
	}
	event_base_dispatch(w.base);
	if (!w.done) {
		*err = "lookup did not finish";
		rc = -ETIMEDOUT;
		goto out;
	}
	if (w.status != 0) {
		*err = w.err;
		rc = -EHOSTUNREACH;
		goto out;
	}
	rc = 0;
out:
	px_dns_free(d);
	event_base_free(w.base);
	return rc;
}
