/*
 * proxy/flow/reflect.c: what no response of a terminated tunnel may carry back
 * (proxy/proto/scrub.h): the forms of the values bound to its host and port, by
 * every snapshot since it opened, and what its responses overwrote.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include <event2/event.h>
#include <openssl/crypto.h>

#include "conf/config.h"
#include "conf/inject.h"
#include "conf/secret.h"
#include "proxy/flow/awssign.h"
#include "proxy/flow/conn.h"
#include "proxy/proto/bodyph.h"
#include "proxy/proto/scrub.h"

/* Add to S the forms of SEC's value that its binding INJ puts on a request:
 * the value itself, and what Basic auth or a query makes of it.  Returns
 * 0, or -ENOMEM when S could not take one. */
static int
scrub_add_forms(struct px_scrub *s, const struct cf_secret *sec, const struct cf_inject *inj,
    const char *value, size_t vlen)
{
	static _Thread_local char out[CF_SECRET_MAX * 3 + 256];
	const char *name = cf_secret_name(sec), *form;
	long r;
	int rc;

	rc = px_scrub_add(s, name, value, vlen);
	if (inj->kind == CF_INJECT_HEADER)
		return rc;	/* the header's format holds the value as it is */
	if (inj->kind == CF_INJECT_REPLACE) {
		/* As a path, a form or a JSON string writes it. */
		static const enum px_bph_enc encs[] = { PX_BPH_PATH, PX_BPH_FORM, PX_BPH_JSON };
		size_t e;
		for (e = 0; e < sizeof(encs) / sizeof(encs[0]); e++)
			if ((r = px_bph_encode(encs[e], value, vlen, out, sizeof(out))) > 0) {
				if (px_scrub_add(s, name, out, (size_t)r) != 0)
					rc = -ENOMEM;
				OPENSSL_cleanse(out, (size_t)r + 1);
			}
		return rc;
	}
	if ((r = cf_inject_render(inj, value, vlen, out, sizeof(out))) < 0)
		return rc;
	/* "Basic BASE64", "PARAM=ENCODED": the part after the first
	 * space or '='. */
	form = strchr(out, inj->kind == CF_INJECT_BASIC ? ' ' : '=');
	if (form != NULL && px_scrub_add(s, name, form + 1, (size_t)r - (size_t)(form + 1 - out)) != 0)
		rc = -ENOMEM;
	OPENSSL_cleanse(out, (size_t)r + 1);
	return rc;
}

struct px_scrub *
px_term_scrub(struct px_conn *c)
{
	size_t i, k, n;

	if (c->tm == NULL || c->sess == NULL)
		return NULL;
	if (c->tm->scrub_gen == c->generation && c->tm->scrub_gen != 0)
		return c->tm->scrub;
	n = cf_session_nsecrets(c->sess);
	for (i = 0; i < n; i++) {
		const struct cf_secret *sec = cf_session_secret(c->sess, i);
		const char *value;
		size_t vlen = 0;

		if ((value = cf_secret_value(sec, &vlen)) == NULL)
			continue;
		for (k = 0; k < cf_secret_ninject(sec); k++) {
			const struct cf_inject *inj = cf_secret_inject(sec, k);

			if (inj->port != c->tm->port || strcmp(inj->host, c->tm->host.name) != 0)
				continue;
			if (c->tm->scrub == NULL && (c->tm->scrub = px_scrub_new()) == NULL)
				return NULL;
			(void)scrub_add_forms(c->tm->scrub, sec, inj, value, vlen);
		}
		/* An aws-sigv4 secret's real session token goes up as it is. */
		if (px_awssign_scrub(c, sec, &c->tm->scrub) != 0)
			return NULL;
	}
	c->tm->scrub_gen = c->generation;
	return c->tm->scrub;
}

int
px_term_scrub_minted(struct px_conn *c, const struct cf_secret *sec, const struct cf_inject *inj,
    const char *value, size_t vlen)
{
	if (c->tm == NULL || (px_term_scrub(c) == NULL && c->tm->scrub == NULL &&
	    (c->tm->scrub = px_scrub_new()) == NULL))
		return -ENOMEM;
	return scrub_add_forms(c->tm->scrub, sec, inj, value, vlen);
}

void
px_term_reflected(struct px_conn *c, size_t n, const char *name, const char *where)
{
	if (n == 0 || c->tm == NULL)
		return;
	if (c->tm->reflected == 0) {
		c->tm->reflected_name = name;
		c->tm->reflected_where = where;
	}
	c->tm->reflected += n;
}
