/*
 * proxy/tls/registry.c: every terminating session's CAs and the upstream
 * context, kept in line with the config (see registry.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "conf/secret.h"
#include "proxy/tls/ca.h"
#include "proxy/core/log.h"
#include "proxy/tls/registry.h"
#include "proxy/tls/tlsup.h"
#include "proxy/core/lock.h"

/* Shared by every worker (lock.h): a reload commits on one loop while
 * the others make leaves. */
static pthread_mutex_t tlsreg_lock = PX_LOCK_INIT;

struct sess {
	char *name;
	struct px_ca *cas[PX_SESSTLS_MAX_CAS];
	size_t ncas;
	unsigned next;            /* the number of the next CA's label */
	char *pem;                /* every CA's PEM, oldest first */
};

struct px_tlsreg {
	struct sess *v;
	size_t n;
	SSL_CTX *up;
	char *up_ca_file;         /* what UP trusts (NULL: the system store) */
	int have_up;
};

struct px_tlsreg *
px_tlsreg_new(void)
{
	return calloc(1, sizeof(struct px_tlsreg));
}

static void
sess_clear(struct sess *s)
{
	size_t i;

	for (i = 0; i < s->ncas; i++)
		px_ca_free(s->cas[i]);
	free(s->name);
	free(s->pem);
	memset(s, 0, sizeof(*s));
}

void
px_tlsreg_free(struct px_tlsreg *r)
{
	PX_LOCKED(&tlsreg_lock);
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->n; i++)
		sess_clear(&r->v[i]);
	free(r->v);
	SSL_CTX_free(r->up);
	free(r->up_ca_file);
	free(r);
}

static struct sess *
find(const struct px_tlsreg *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (strcmp(r->v[i].name, name) == 0)
			return &r->v[i];
	return NULL;
}

static int
same_str(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Join the PEM of S's CAs into S->pem; 0 or -ENOMEM. */
static int
join_pem(struct sess *s)
{
	size_t i, len = 0;
	char *p;

	for (i = 0; i < s->ncas; i++)
		len += strlen(px_ca_pem(s->cas[i]));
	if ((p = malloc(len + 1)) == NULL)
		return -ENOMEM;
	s->pem = p;
	for (i = 0; i < s->ncas; i++) {
		size_t l = strlen(px_ca_pem(s->cas[i]));
		memcpy(p, px_ca_pem(s->cas[i]), l);
		p += l;
	}
	*p = '\0';
	return 0;
}

/*
 * The new entry NS for session NAME with the N terminated HOSTS: the CAs
 * of OLD (NULL: none) that still cover one of the hosts, kept in their
 * order, and one CA made for the hosts none of them covers.  A CA kept is
 * shared with OLD: the caller moves ownership once everything succeeded.
 * 0, or -1 with ERR.
 */
static int
plan(struct sess *ns, const struct sess *old, const char *name, const char *const *hosts,
    size_t n, const char *state_dir, size_t *made, char *err, size_t errsz)
{
	const char **miss = NULL;
	size_t i, j, nmiss = 0;
	int rc = -1;

	memset(ns, 0, sizeof(*ns));
	if ((ns->name = strdup(name)) == NULL || (miss = calloc(n, sizeof(*miss))) == NULL) {
		snprintf(err, errsz, "out of memory");
		goto out;
	}
	ns->next = old != NULL ? old->next : 1;
	if (old != NULL)
		for (j = 0; j < old->ncas; j++) {
			int used = 0;
			for (i = 0; i < n && !used; i++)
				used = px_ca_has_host(old->cas[j], hosts[i]);
			/* A CA none of whose hosts is terminated any more is
			 * dropped; one that still covers a host is kept, so the
			 * sandboxes trusting it keep working. */
			if (used)
				ns->cas[ns->ncas++] = old->cas[j];
		}
	for (i = 0; i < n; i++) {
		int covered = 0;
		for (j = 0; j < ns->ncas && !covered; j++)
			covered = px_ca_has_host(ns->cas[j], hosts[i]);
		if (!covered)
			miss[nmiss++] = hosts[i];
	}
	if (nmiss > 0) {
		char label[96];
		char why[300];
		struct px_ca *ca;

		if (ns->ncas == PX_SESSTLS_MAX_CAS) {
			snprintf(err, errsz, "session %s would need more than %d CAs (each reload that "
			    "adds a terminated host adds one): restart the proxy and its sandboxes",
			    name, PX_SESSTLS_MAX_CAS);
			goto out;
		}
		/* The first CA is named after the session, a further one
		 * SESSION+K, K counting every CA it ever had, so that no two
		 * share the files of the state directory. */
		if (ns->next <= 1)
			snprintf(label, sizeof(label), "%s", name);
		else
			snprintf(label, sizeof(label), "%s+%u", name, ns->next);
		ns->next++;
		ca = px_ca_new(label, miss, nmiss, state_dir, why, sizeof(why));
		if (ca == NULL) {
			snprintf(err, errsz, "session %s: cannot make its CA: %s", name, why);
			goto out;
		}
		ns->cas[ns->ncas++] = ca;
		if (made != NULL)
			(*made)++;
		log_info("session %s: %s CA %s for %zu host%s (%s%s)", name,
		    px_ca_reused(ca) ? "loaded" : "made", label, nmiss, nmiss == 1 ? "" : "s",
		    miss[0], nmiss > 1 ? ", ..." : "");
		if (ns->ncas > 1)
			log_notice("session %s: sandboxes started before this reload do not trust "
			    "CA %s: they reach %s%s only after a restart", name, label, miss[0],
			    nmiss > 1 ? " and the other new hosts" : "");
	}
	if (join_pem(ns) < 0) {
		snprintf(err, errsz, "out of memory");
		goto out;
	}
	rc = 0;
out:
	free(miss);
	return rc;
}

/* Free what NS made that OLD does not hold. */
static void
unplan(struct sess *ns, const struct sess *old)
{
	size_t i, j;

	for (i = 0; i < ns->ncas; i++) {
		int shared = 0;
		for (j = 0; old != NULL && j < old->ncas; j++)
			shared |= old->cas[j] == ns->cas[i];
		if (!shared)
			px_ca_free(ns->cas[i]);
	}
	ns->ncas = 0;
	sess_clear(ns);
}

/* What px_tlsreg_prepare() made, until it is committed or dropped. */
struct px_tlsreg_next {
	struct sess *v;
	size_t n;
	SSL_CTX *up;              /* NULL: keep R's */
	char *up_file;
};

struct px_tlsreg_next *
px_tlsreg_prepare(struct px_tlsreg *r, const struct cf_config *cfg, size_t *made, char *err,
    size_t errsz)
{
	PX_LOCKED(&tlsreg_lock);
	const struct cf_proxy_settings *p = cf_config_proxy(cfg);
	struct px_tlsreg_next *x;
	size_t i, total = cf_config_nsessions(cfg);

	if (made != NULL)
		*made = 0;
	snprintf(err, errsz, "%s", "");
	if ((x = calloc(1, sizeof(*x))) == NULL ||
	    (total > 0 && (x->v = calloc(total, sizeof(*x->v))) == NULL)) {
		free(x);
		snprintf(err, errsz, "out of memory");
		return NULL;
	}
	for (i = 0; i < total; i++) {
		const char *const *hosts;
		if (cf_session_terminated_hosts(cf_config_session(cfg, i), &hosts) > 0)
			break;
	}
	/* The upstream context loads the whole trust store (a few MB and
	 * a tenth of a second): only when some session terminates TLS. */
	if (i < total && (!r->have_up || !same_str(r->up_ca_file, p->upstream_ca_file))) {
		char why[300];
		if ((x->up = px_tlsup_ctx_new(p->upstream_ca_file, why, sizeof(why))) == NULL) {
			snprintf(err, errsz, "upstream_ca_file: %s", why);
			goto fail;
		}
		if (p->upstream_ca_file != NULL && (x->up_file = strdup(p->upstream_ca_file)) == NULL) {
			snprintf(err, errsz, "out of memory");
			goto fail;
		}
	}
	for (i = 0; i < total; i++) {
		const struct cf_session *s = cf_config_session(cfg, i);
		const char *const *hosts = NULL;
		size_t n = cf_session_terminated_hosts(s, &hosts);

		if (n == 0)
			continue;
		if (plan(&x->v[x->n], find(r, s->name), s->name, hosts, n, p->state_dir, made, err,
		    errsz) < 0) {
			sess_clear(&x->v[x->n]);
			goto fail;
		}
		x->n++;
	}
	return x;
fail:
	px_tlsreg_abort(r, x);
	return NULL;
}

void
px_tlsreg_abort(struct px_tlsreg *r, struct px_tlsreg_next *x)
{
	PX_LOCKED(&tlsreg_lock);
	size_t i;

	if (x == NULL)
		return;
	for (i = 0; i < x->n; i++)
		unplan(&x->v[i], find(r, x->v[i].name));
	free(x->v);
	SSL_CTX_free(x->up);
	free(x->up_file);
	free(x);
}

void
px_tlsreg_commit(struct px_tlsreg *r, struct px_tlsreg_next *x)
{
	PX_LOCKED(&tlsreg_lock);
	size_t i, j;

	/* Free the old CAs the new entries do not keep. */
	for (i = 0; i < r->n; i++) {
		struct sess *o = &r->v[i];
		for (j = 0; j < o->ncas; j++) {
			size_t a, b;
			int kept = 0;
			for (a = 0; a < x->n && !kept; a++)
				for (b = 0; b < x->v[a].ncas && !kept; b++)
					kept = x->v[a].cas[b] == o->cas[j];
			if (!kept)
				px_ca_free(o->cas[j]);
		}
		o->ncas = 0;
		sess_clear(o);
	}
	free(r->v);
	r->v = x->v;
	r->n = x->n;
	if (x->up != NULL) {
		SSL_CTX_free(r->up);
		free(r->up_ca_file);
		r->up = x->up;
		r->up_ca_file = x->up_file;
		r->have_up = 1;
	}
	free(x);
}

int
px_tlsreg_update(struct px_tlsreg *r, const struct cf_config *cfg, size_t *made, char *err,
    size_t errsz)
{
	PX_LOCKED(&tlsreg_lock);
	struct px_tlsreg_next *x = px_tlsreg_prepare(r, cfg, made, err, errsz);

	if (x == NULL)
		return -1;
	px_tlsreg_commit(r, x);
	return 0;
}

SSL_CTX *
px_tlsreg_leaf(struct px_tlsreg *r, const char *session, const char *host)
{
	PX_LOCKED(&tlsreg_lock);
	struct sess *s = find(r, session);
	size_t i;

	for (i = 0; s != NULL && i < s->ncas; i++)
		if (px_ca_has_host(s->cas[i], host))
			return px_ca_leaf_ctx(s->cas[i], host);
	errno = ENOENT;
	return NULL;
}

const char *
px_tlsreg_pem(const struct px_tlsreg *r, const char *session)
{
	PX_LOCKED(&tlsreg_lock);
	const struct sess *s = find(r, session);

	return s != NULL ? s->pem : NULL;
}

int
px_tlsreg_pem_copy(const struct px_tlsreg *r, const char *session, char **pem)
{
	PX_LOCKED(&tlsreg_lock);
	const struct sess *s = find(r, session);

	*pem = NULL;
	if (s == NULL || s->pem == NULL)
		return 0;
	if ((*pem = strdup(s->pem)) == NULL)
		return -ENOMEM;
	return 0;
}

size_t
px_tlsreg_ncas(const struct px_tlsreg *r, const char *session)
{
	PX_LOCKED(&tlsreg_lock);
	const struct sess *s = find(r, session);

	return s != NULL ? s->ncas : 0;
}

SSL_CTX *
px_tlsreg_upstream(const struct px_tlsreg *r)
{
	PX_LOCKED(&tlsreg_lock);
	return r->up;
}
