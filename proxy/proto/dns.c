/*
 * proxy/proto/dns.c: c-ares inside the libevent loop, with a TTL cache.
 *
 * Three kinds of objects live here.  A lookup is one ares_getaddrinfo() in
 * flight for one name; every px_dns_query that asks for that name while it
 * is in flight waits on it, so two clients of one host cost one lookup.  A
 * cache entry is a finished answer kept until its TTL runs out, in a
 * least-recently-used list bounded by cache_max.  A query is what a caller
 * holds: it either waits on a lookup (with its own deadline timer) or holds
 * a copy of the answer until its event delivers it.
 *
 * No user callback ever runs inside a c-ares callback or inside
 * px_dns_resolve(): c-ares callbacks only record the answer and activate
 * the waiting queries' events, and user code runs from those events.  So a
 * callback may call px_dns_free() without c-ares being torn down under its
 * own feet, and ares_getaddrinfo() answering synchronously (an ".onion"
 * name, out of memory) needs no special case.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <search.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <ares.h>
#include <event2/event.h>

#include "conf/host.h"
#include "proxy/proto/dns.h"

/* An address as kept in the cache: 17 bytes instead of a sockaddr_storage. */
struct dns_addr {
	uint8_t family; /* AF_INET or AF_INET6 */
	uint8_t a[16];
};

/* A finished answer, as cached and as handed to a waiting query. */
struct dns_answer {
	int status;          /* 0 or PX_DNS_* */
	const char *errmsg;  /* static; NULL on success */
	uint32_t ttl;
	size_t naddrs;
	struct dns_addr addrs[PX_DNS_MAX_ADDRS];
};

/*
 * Both tree-indexed structs start with the name, so the tsearch(3)
 * comparator can treat a key string and a stored object alike.
 */
struct dns_entry {
	char name[CF_HOST_MAX];
	struct dns_answer ans;
	uint64_t expires_ms; /* CLOCK_MONOTONIC */
	struct dns_entry *lru_prev, *lru_next; /* head: most recently used */
};

struct dns_lookup {
	char name[CF_HOST_MAX];
	struct px_dns *d;
	struct px_dns_query *waiters;
};

struct px_dns_query {
	struct px_dns *d;
	struct dns_lookup *lk;                /* NULL once answered */
	struct px_dns_query *w_prev, *w_next; /* lk->waiters */
	struct px_dns_query *prev, *next;     /* d->queries */
	struct event *ev;  /* deadline while waiting, then delivery */
	int done;          /* ans is filled in */
	int from_cache;
	struct dns_answer ans;
	px_dns_cb cb;
	void *arg;
};

struct dns_sock {
	struct px_dns *d;
	ares_socket_t fd;
	struct event *ev;
	int readable, writable;
	struct dns_sock *next;
};

struct px_dns {
	struct event_base *base;
	ares_channel ch;
	int lib_ok;     /* ares_library_init() succeeded */
	int destroying; /* inside px_dns_free() */
	struct event *timer;
	struct dns_sock *socks;
	struct px_dns_opts opts;
	uint64_t deadline_ms;

	void *cache_root;
	struct dns_entry *lru_head, *lru_tail;

	void *lookup_root;
	struct px_dns_query *queries;

	struct px_dns_stats st;
};

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void
set_err(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
set_err(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!buf || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

const char *
px_dns_strerror(int status)
{
	switch (status) {
	case 0:
		return "success";
	case PX_DNS_NXDOMAIN:
		return "no such name (NXDOMAIN)";
	case PX_DNS_NODATA:
		return "the name has no IPv4 or IPv6 address";
	case PX_DNS_SERVFAIL:
		return "the DNS server failed (SERVFAIL)";
	case PX_DNS_REFUSED:
		return "the DNS server refused the query (REFUSED)";
	case PX_DNS_TIMEOUT:
		return "no answer from the DNS servers in time";
	case PX_DNS_ERROR:
		return "DNS resolution failed";
	default:
		return "unknown DNS status";
	}
}

void
px_dns_opts_init(struct px_dns_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->timeout_ms = 2000;
	opts->tries = 2;
	opts->cache_max = 1024;
	opts->max_ttl = 300;
	opts->neg_ttl = 5;
	opts->resolv_conf = "/etc/resolv.conf";
}

/* ---- c-ares sockets and timer as libevent events ---- */

static void arm_timer(struct px_dns *d);

static void
sock_cb(evutil_socket_t fd, short what, void *arg)
{
	struct dns_sock *s = arg;
	struct px_dns *d = s->d;

	/*
	 * ares_process_fd() may close this socket, which calls sock_state_cb
	 * and frees S and its event: touch neither afterwards.
	 */
	ares_process_fd(d->ch, (what & EV_READ) ? fd : ARES_SOCKET_BAD,
	    (what & EV_WRITE) ? fd : ARES_SOCKET_BAD);
	arm_timer(d);
}

static void
timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct px_dns *d = arg;

	(void)fd;
	(void)what;
	ares_process_fd(d->ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
	arm_timer(d);
}

/* Re-arm the c-ares timer; called after every call into c-ares. */
static void
arm_timer(struct px_dns *d)
{
	struct timeval tv, *tvp;

	if (d->destroying)
		return;
	tvp = ares_timeout(d->ch, NULL, &tv);
	if (tvp)
		evtimer_add(d->timer, tvp);
	else
		evtimer_del(d->timer);
}

/*
 * ARES_OPT_SOCK_STATE_CB: c-ares tells which of its sockets to watch for
 * what; both flags 0 means the socket is being closed.
 */
static void
sock_state_cb(void *data, ares_socket_t fd, int readable, int writable)
{
	struct px_dns *d = data;
	struct dns_sock **pp, *s;
	short what;

	for (pp = &d->socks; (s = *pp) != NULL; pp = &s->next)
		if (s->fd == fd)
			break;

	if (!readable && !writable) {
		if (s) {
			*pp = s->next;
			/* No event when event_new() ran out of memory (fail:). */
			if (s->ev != NULL)
				event_free(s->ev);
			free(s);
		}
		return;
	}
	if (s && s->readable == readable && s->writable == writable)
		return;
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			goto fail;
		s->d = d;
		s->fd = fd;
		s->next = d->socks;
		d->socks = s;
	} else if (s->ev) {
		event_free(s->ev);
		s->ev = NULL;
	}
	what = EV_PERSIST | (readable ? EV_READ : 0) | (writable ? EV_WRITE : 0);
	s->ev = event_new(d->base, fd, what, sock_cb, s);
	if (!s->ev || event_add(s->ev, NULL) < 0)
		goto fail;
	s->readable = readable;
	s->writable = writable;
	return;

fail:
	/*
	 * Without an event the socket is never read; the query on it then
	 * ends by the c-ares timeout instead of hanging, and the next state
	 * change for this socket tries again.
	 */
	if (s)
		s->readable = s->writable = -1;
}

/* ---- the cache ---- */

static void
lru_unlink(struct px_dns *d, struct dns_entry *e)
{
	if (e->lru_prev)
		e->lru_prev->lru_next = e->lru_next;
	else
		d->lru_head = e->lru_next;
	if (e->lru_next)
		e->lru_next->lru_prev = e->lru_prev;
	else
		d->lru_tail = e->lru_prev;
	e->lru_prev = e->lru_next = NULL;
}

static void
lru_push(struct px_dns *d, struct dns_entry *e)
{
	e->lru_prev = NULL;
	e->lru_next = d->lru_head;
	if (d->lru_head)
		d->lru_head->lru_prev = e;
	d->lru_head = e;
	if (!d->lru_tail)
		d->lru_tail = e;
}

static void
cache_remove(struct px_dns *d, struct dns_entry *e)
{
	lru_unlink(d, e);
	tdelete(e->name, &d->cache_root, name_cmp);
	free(e);
	d->st.entries--;
}

/* A live entry for NAME, or NULL; expired entries are dropped on the way. */
static struct dns_entry *
cache_get(struct px_dns *d, const char *name, uint64_t now)
{
	void *node;
	struct dns_entry *e;

	node = tfind(name, &d->cache_root, name_cmp);
	if (!node)
		return NULL;
	e = *(struct dns_entry **)node;
	if (now >= e->expires_ms) {
		cache_remove(d, e);
		return NULL;
	}
	lru_unlink(d, e);
	lru_push(d, e);
	return e;
}

static void
cache_put(struct px_dns *d, const char *name, const struct dns_answer *ans)
{
	uint32_t ttl;
	uint64_t now = now_ms();
	struct dns_entry *e;
	void *node;

	if (d->opts.cache_max == 0)
		return;
	if (ans->status == 0) {
		ttl = ans->ttl; /* already clamped to max_ttl */
	} else if (ans->status == PX_DNS_NXDOMAIN || ans->status == PX_DNS_NODATA) {
		ttl = d->opts.neg_ttl < d->opts.max_ttl ? d->opts.neg_ttl
		    : d->opts.max_ttl;
	} else {
		/* A failing server may recover any moment: never cached. */
		return;
	}
	/* TTL 0 means "use once, do not cache" (RFC 1035 §3.2.1). */
	if (ttl == 0)
		return;

	node = tfind(name, &d->cache_root, name_cmp);
	if (node) {
		e = *(struct dns_entry **)node;
		lru_unlink(d, e);
	} else {
		while (d->st.entries >= d->opts.cache_max && d->lru_tail) {
			if (d->lru_tail->expires_ms > now)
				d->st.evictions++;
			cache_remove(d, d->lru_tail);
		}
		e = calloc(1, sizeof(*e));
		if (!e)
			return; /* not caching is always correct */
		memcpy(e->name, name, strlen(name) + 1);
		node = tsearch(e, &d->cache_root, name_cmp);
		if (!node || *(struct dns_entry **)node != e) {
			free(e);
			return;
		}
		d->st.entries++;
	}
	e->ans = *ans;
	e->ans.ttl = ttl;
	e->expires_ms = now + (uint64_t)ttl * 1000u;
	lru_push(d, e);
}

/* ---- answers ---- */

static void
answer_fail(struct dns_answer *ans, int status, const char *msg)
{
	memset(ans, 0, sizeof(*ans));
	ans->status = status;
	ans->errmsg = msg ? msg : px_dns_strerror(status);
}

/*
 * Append A to LIST (of *N, at most PX_DNS_MAX_ADDRS) unless already there.
 * Returns -ENOSPC when A is new and the list is full: the caller must
 * refuse the whole answer rather than drop an address its range check
 * would not see.
 */
static int
addr_add(struct dns_addr *list, size_t *n, const struct dns_addr *a)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (list[i].family == a->family && !memcmp(list[i].a, a->a, 16))
			return 0;
	if (*n == PX_DNS_MAX_ADDRS)
		return -ENOSPC;
	list[(*n)++] = *a;
	return 0;
}

/*
 * RFC 2181 §8: a TTL with the top bit set is to be read as zero.  c-ares
 * stores the 32-bit TTL in an int, where such a value turns negative.
 */
static uint32_t
ttl_of(int ttl)
{
	return ttl < 0 ? 0 : (uint32_t)ttl;
}

/* Turn a successful ares_addrinfo into ANS (ordered, deduplicated). */
static void
answer_from_ai(struct px_dns *d, const struct ares_addrinfo *ai,
    struct dns_answer *ans)
{
	struct dns_addr v6[PX_DNS_MAX_ADDRS], v4[PX_DNS_MAX_ADDRS], a;
	size_t n6 = 0, n4 = 0, i6 = 0, i4 = 0;
	const struct ares_addrinfo_node *n;
	const struct ares_addrinfo_cname *c;
	uint32_t ttl = d->opts.max_ttl;
	int full = 0;

	memset(ans, 0, sizeof(*ans));
	for (n = ai ? ai->nodes : NULL; n; n = n->ai_next) {
		memset(&a, 0, sizeof(a));
		if (n->ai_family == AF_INET && n->ai_addr &&
		    n->ai_addrlen >= (ares_socklen_t)sizeof(struct sockaddr_in)) {
			const struct sockaddr_in *sin = (const void *)n->ai_addr;

			a.family = AF_INET;
			memcpy(a.a, &sin->sin_addr, 4);
			full |= addr_add(v4, &n4, &a) < 0;
		} else if (n->ai_family == AF_INET6 && n->ai_addr &&
		    n->ai_addrlen >= (ares_socklen_t)sizeof(struct sockaddr_in6)) {
			const struct sockaddr_in6 *sin6 = (const void *)n->ai_addr;

			a.family = AF_INET6;
			memcpy(a.a, &sin6->sin6_addr, 16);
			full |= addr_add(v6, &n6, &a) < 0;
		} else {
			continue;
		}
		if (ttl_of(n->ai_ttl) < ttl)
			ttl = ttl_of(n->ai_ttl);
	}
	/*
	 * Every answer is vetted by the caller, not only the ones it dials:
	 * a name with more addresses than can be kept is refused, since an
	 * address dropped here would escape the deny_hosts, never-reachable
	 * and own-listener checks.
	 */
	if (full || n4 + n6 > PX_DNS_MAX_ADDRS) {
		answer_fail(ans, PX_DNS_ERROR, "the name has more than "
		    PX_DNS_MAX_ADDRS_TEXT " addresses, more than postern keeps and vets");
		return;
	}
	if (n4 + n6 == 0) {
		answer_fail(ans, PX_DNS_NODATA, NULL);
		return;
	}
	/* The CNAMEs that led to the addresses bound their lifetime too. */
	for (c = ai->cnames; c; c = c->next)
		if (ttl_of(c->ttl) < ttl)
			ttl = ttl_of(c->ttl);

	/*
	 * RFC 8305 §4: alternate the families, starting with IPv6, so that a
	 * broken family costs one connection attempt delay and not a list.
	 */
	while (ans->naddrs < PX_DNS_MAX_ADDRS && (i6 < n6 || i4 < n4)) {
		if (i6 < n6)
			ans->addrs[ans->naddrs++] = v6[i6++];
		if (i4 < n4 && ans->naddrs < PX_DNS_MAX_ADDRS)
			ans->addrs[ans->naddrs++] = v4[i4++];
	}
	ans->status = 0;
	ans->ttl = ttl;
}

static void
answer_from_status(int status, struct dns_answer *ans)
{
	switch (status) {
	case ARES_ENOTFOUND:
		answer_fail(ans, PX_DNS_NXDOMAIN, NULL);
		break;
	case ARES_ENODATA:
		answer_fail(ans, PX_DNS_NODATA, NULL);
		break;
	case ARES_ESERVFAIL:
		answer_fail(ans, PX_DNS_SERVFAIL, NULL);
		break;
	case ARES_EREFUSED:
		answer_fail(ans, PX_DNS_REFUSED, NULL);
		break;
	case ARES_ETIMEOUT:
		answer_fail(ans, PX_DNS_TIMEOUT, NULL);
		break;
	case ARES_ECONNREFUSED:
		/*
		 * c-ares 1.18 also ends here when every server answered
		 * SERVFAIL or REFUSED: it tries the next server on those
		 * RCODEs, and reports the last attempt's connection status.
		 */
		answer_fail(ans, PX_DNS_ERROR, "no DNS server gave a usable "
		    "answer (each failed, refused or was unreachable)");
		break;
	case ARES_EBADRESP:
		answer_fail(ans, PX_DNS_ERROR, "malformed answer from the DNS server");
		break;
	default:
		/* ares_strerror() returns static strings. */
		answer_fail(ans, PX_DNS_ERROR, ares_strerror(status));
		break;
	}
}

static void
result_from_answer(const struct dns_answer *ans, int from_cache,
    struct px_dns_result *res)
{
	size_t i;

	res->naddrs = ans->naddrs;
	res->ttl = ans->ttl;
	res->from_cache = from_cache;
	for (i = 0; i < ans->naddrs; i++) {
		memset(&res->addrs[i], 0, sizeof(res->addrs[i]));
		if (ans->addrs[i].family == AF_INET6) {
			struct sockaddr_in6 *sin6 = (void *)&res->addrs[i];

			sin6->sin6_family = AF_INET6;
			memcpy(&sin6->sin6_addr, ans->addrs[i].a, 16);
			res->addrlens[i] = sizeof(*sin6);
		} else {
			struct sockaddr_in *sin = (void *)&res->addrs[i];

			sin->sin_family = AF_INET;
			memcpy(&sin->sin_addr, ans->addrs[i].a, 4);
			res->addrlens[i] = sizeof(*sin);
		}
	}
}

/* ---- queries and lookups ---- */

static void
waiter_unlink(struct px_dns_query *q)
{
	if (!q->lk)
		return;
	if (q->w_prev)
		q->w_prev->w_next = q->w_next;
	else
		q->lk->waiters = q->w_next;
	if (q->w_next)
		q->w_next->w_prev = q->w_prev;
	q->w_prev = q->w_next = NULL;
	q->lk = NULL;
}

static void
query_destroy(struct px_dns_query *q)
{
	struct px_dns *d = q->d;

	waiter_unlink(q);
	if (q->prev)
		q->prev->next = q->next;
	else
		d->queries = q->next;
	if (q->next)
		q->next->prev = q->prev;
	event_free(q->ev);
	free(q);
}

/* The query's event: the answer is ready, or its deadline has passed. */
static void
query_cb(evutil_socket_t fd, short what, void *arg)
{
	struct px_dns_query *q = arg;
	struct px_dns_result res;
	struct dns_answer ans;
	px_dns_cb cb = q->cb;
	void *cbarg = q->arg;
	int from_cache = q->from_cache;

	(void)fd;
	(void)what;
	if (q->done) {
		ans = q->ans;
	} else {
		/* The lookup goes on without us; its answer still gets cached. */
		answer_fail(&ans, PX_DNS_TIMEOUT, NULL);
		q->d->st.timeouts++;
	}
	query_destroy(q);
	if (ans.status == 0) {
		result_from_answer(&ans, from_cache, &res);
		cb(0, &res, NULL, cbarg);
	} else {
		cb(ans.status, NULL, ans.errmsg, cbarg);
	}
}

static void
lookup_free(struct px_dns *d, struct dns_lookup *lk)
{
	tdelete(lk->name, &d->lookup_root, name_cmp);
	d->st.inflight--;
	free(lk);
}

/*
 * The ares_getaddrinfo() callback.  Runs inside c-ares (ares_process_fd(),
 * ares_getaddrinfo() itself, or ares_destroy()): no user code from here.
 */
static void
addrinfo_cb(void *arg, int status, int timeouts, struct ares_addrinfo *ai)
{
	struct dns_lookup *lk = arg;
	struct px_dns *d = lk->d;
	struct px_dns_query *q, *next;
	struct dns_answer ans;

	(void)timeouts;
	if (status == ARES_EDESTRUCTION || status == ARES_ECANCELLED ||
	    d->destroying) {
		/* px_dns_free() has already dropped every waiter. */
		ares_freeaddrinfo(ai);
		lookup_free(d, lk);
		return;
	}
	if (status == ARES_SUCCESS)
		answer_from_ai(d, ai, &ans);
	else
		answer_from_status(status, &ans);
	ares_freeaddrinfo(ai);

	if (ans.status != 0)
		d->st.failures++;
	cache_put(d, lk->name, &ans);

	for (q = lk->waiters; q; q = next) {
		next = q->w_next;
		q->w_prev = q->w_next = NULL;
		q->lk = NULL;
		q->ans = ans;
		q->done = 1;
		event_del(q->ev);
		event_active(q->ev, EV_TIMEOUT, 0);
	}
	lk->waiters = NULL;
	lookup_free(d, lk);
}

/*
 * NAME must be exactly the normal form of a host name: what cf_host_parse()
 * produces, so the cache key is never ambiguous.
 */
static int
name_ok(const char *name)
{
	struct cf_host h;
	size_t len;

	if (!name)
		return 0;
	len = strnlen(name, CF_HOST_MAX);
	if (len == 0 || len >= CF_HOST_MAX)
		return 0;
	if (cf_host_parse(name, len, CF_HOST_NO_IP, &h, NULL) < 0)
		return 0;
	return h.kind == CF_HOST_NAME && strcmp(h.name, name) == 0;
}

/*
 * RFC 6761 §6.3: "localhost" and the names below it are the loopback
 * addresses and are never sent to a DNS server.  c-ares only does this
 * in its /etc/hosts step, which postern turns off, so it is done here;
 * the caller's range check then refuses them like any loopback address.
 */
static int
is_localhost(const char *name)
{
	size_t len = strlen(name);

	return strcmp(name, "localhost") == 0 ||
	    (len > 10 && strcmp(name + len - 10, ".localhost") == 0);
}

static void
answer_localhost(struct dns_answer *ans)
{
	memset(ans, 0, sizeof(*ans));
	ans->naddrs = 2;
	ans->addrs[0].family = AF_INET6;
	ans->addrs[0].a[15] = 1;
	ans->addrs[1].family = AF_INET;
	ans->addrs[1].a[0] = 127;
	ans->addrs[1].a[3] = 1;
}

/* Q's answer is ready: deliver it from the loop, never from here. */
static void
query_ready(struct px_dns_query *q)
{
	q->done = 1;
	event_active(q->ev, EV_TIMEOUT, 0);
}

struct px_dns_query *
px_dns_resolve(struct px_dns *d, const char *name, px_dns_cb cb, void *arg)
{
	struct px_dns_query *q = NULL;
	struct dns_lookup *lk;
	struct dns_entry *e;
	struct ares_addrinfo_hints hints;
	struct timeval tv;
	void *node;
	uint64_t now = now_ms();
	int err = 0;

	if (!d || !cb || !name_ok(name)) {
		err = EINVAL;
		goto out;
	}
	q = calloc(1, sizeof(*q));
	if (!q) {
		err = ENOMEM;
		goto out;
	}
	q->d = d;
	q->cb = cb;
	q->arg = arg;
	q->ev = evtimer_new(d->base, query_cb, q);
	if (!q->ev) {
		free(q);
		q = NULL;
		err = ENOMEM;
		goto out;
	}
	/* Linked from here on, so that query_destroy() undoes everything. */
	q->next = d->queries;
	if (d->queries)
		d->queries->prev = q;
	d->queries = q;

	if (is_localhost(name)) {
		answer_localhost(&q->ans);
		query_ready(q);
		return q;
	}

	e = cache_get(d, name, now);
	if (e) {
		d->st.hits++;
		q->ans = e->ans;
		q->ans.ttl = (uint32_t)((e->expires_ms - now) / 1000u);
		q->from_cache = 1;
		query_ready(q);
		return q;
	}

	d->st.misses++;
	tv.tv_sec = (time_t)(d->deadline_ms / 1000u);
	tv.tv_usec = (suseconds_t)(d->deadline_ms % 1000u) * 1000;
	if (evtimer_add(q->ev, &tv) < 0) {
		err = ENOMEM;
		goto out;
	}

	node = tfind(name, &d->lookup_root, name_cmp);
	if (node) {
		lk = *(struct dns_lookup **)node;
		d->st.coalesced++;
	} else {
		lk = calloc(1, sizeof(*lk));
		if (!lk) {
			err = ENOMEM;
			goto out;
		}
		memcpy(lk->name, name, strlen(name) + 1);
		lk->d = d;
		if (!tsearch(lk, &d->lookup_root, name_cmp)) {
			free(lk);
			err = ENOMEM;
			goto out;
		}
		d->st.inflight++;
	}
	q->lk = lk;
	q->w_next = lk->waiters;
	if (lk->waiters)
		lk->waiters->w_prev = q;
	lk->waiters = q;
	if (node)
		return q;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	/*
	 * NOSORT: keep the server's order within each family; the RFC 6724
	 * sort of c-ares would connect() a probe socket per address, and the
	 * Happy Eyeballs order is made by answer_from_ai().
	 */
	hints.ai_flags = ARES_AI_NOSORT;
	ares_getaddrinfo(d->ch, lk->name, NULL, &hints, addrinfo_cb, lk);
	/* c-ares may have answered already: LK may be freed, Q answered. */
	arm_timer(d);
	return q;

out:
	if (q)
		query_destroy(q);
	errno = err;
	return NULL;
}

void
px_dns_cancel(struct px_dns_query *q)
{
	if (!q)
		return;
	query_destroy(q);
}

void
px_dns_stats(const struct px_dns *d, struct px_dns_stats *out)
{
	*out = d->st;
}

/* ---- configuration ---- */

static int
is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * Turn the "dns_servers" value into the canonical CSV that
 * ares_set_servers_ports_csv() takes, checking every item with the one
 * host parser: only canonical IP literals, never names (resolving the
 * resolver's name would need a resolver).
 */
static int
servers_to_csv(const char *in, char *out, size_t outlen, char *errbuf,
    size_t errlen)
{
	const char *p = in, *end, *s, *t;
	size_t used = 0, nitems = 0;
	char tmp[CF_HOST_TEXT_MAX + 8];
	char host[CF_HOST_TEXT_MAX];
	struct cf_host h;
	uint16_t port;
	const char *why = NULL;
	int n, colons;

	out[0] = '\0';
	for (;;) {
		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		s = p;
		t = end;
		while (s < t && is_blank(*s))
			s++;
		while (t > s && is_blank(t[-1]))
			t--;
		if (s == t) {
			set_err(errbuf, errlen, "dns_servers: empty item");
			return -EINVAL;
		}
		colons = 0;
		for (const char *c = s; c < t; c++)
			colons += *c == ':';
		if ((size_t)(t - s) >= sizeof(tmp) - 2) {
			set_err(errbuf, errlen, "dns_servers: item too long");
			return -EINVAL;
		}
		if (colons > 1 && *s != '[') {
			/* A bare IPv6 address: bracket it for the parser. */
			n = snprintf(tmp, sizeof(tmp), "[%.*s]", (int)(t - s), s);
		} else {
			n = snprintf(tmp, sizeof(tmp), "%.*s", (int)(t - s), s);
		}
		if (n < 0 || (size_t)n >= sizeof(tmp) ||
		    cf_authority_parse(tmp, (size_t)n, 0, &h, &port, &why) < 0) {
			set_err(errbuf, errlen, "dns_servers: '%.*s': %s",
			    (int)(t - s), s, why ? why : "not an address");
			return -EINVAL;
		}
		if (h.kind == CF_HOST_NAME) {
			set_err(errbuf, errlen,
			    "dns_servers: '%.*s' is a name; give an IP address",
			    (int)(t - s), s);
			return -EINVAL;
		}
		cf_host_format(&h, host, sizeof(host));
		n = snprintf(out + used, outlen - used, "%s%s:%u",
		    nitems ? "," : "", host, port ? (unsigned)port : 53u);
		if (n < 0 || (size_t)n >= outlen - used) {
			set_err(errbuf, errlen, "dns_servers: too many servers");
			return -EINVAL;
		}
		used += (size_t)n;
		nitems++;
		if (!*end)
			break;
		p = end + 1;
	}
	return 0;
}

/*
 * c-ares falls back to 127.0.0.1 when resolv.conf is missing or names no
 * server, which in an empty root means every lookup fails much later with
 * a puzzling "connection refused".  Check up front instead: PATH must be
 * readable and hold at least one "nameserver ADDRESS" line.
 */
static int
resolv_conf_check(const char *path, char *errbuf, size_t errlen)
{
	char buf[65536], addr[64];
	ssize_t n;
	size_t len = 0, i, j, k, e;
	int fd, found = 0, err = 0;
	struct in6_addr a6;
	struct in_addr a4;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		set_err(errbuf, errlen,
		    "no dns_servers configured and %s cannot be read: %s",
		    path, strerror(err));
		return -err;
	}
	while (len < sizeof(buf) - 1) {
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			close(fd);
			set_err(errbuf, errlen, "%s: %s", path, strerror(err));
			return -err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';

	for (i = 0; i < len && !found; i = j + 1) {
		for (j = i; j < len && buf[j] != '\n'; j++)
			;
		k = i;
		while (k < j && is_blank(buf[k]))
			k++;
		if (j - k < 11 || memcmp(buf + k, "nameserver", 10) != 0 ||
		    !is_blank(buf[k + 10]))
			continue;
		k += 10;
		while (k < j && is_blank(buf[k]))
			k++;
		/* The address ends at a blank, a zone ("%eth0") or CR. */
		for (e = k; e < j && !is_blank(buf[e]) && buf[e] != '%' &&
		    buf[e] != '\r'; e++)
			;
		if (e == k || e - k >= sizeof(addr))
			continue;
		memcpy(addr, buf + k, e - k);
		addr[e - k] = '\0';
		found = inet_pton(AF_INET, addr, &a4) == 1 ||
		    inet_pton(AF_INET6, addr, &a6) == 1;
	}
	if (!found) {
		set_err(errbuf, errlen,
		    "no dns_servers configured and %s lists no nameserver",
		    path);
		return -ENOENT;
	}
	return 0;
}

struct px_dns *
px_dns_new(struct event_base *base, const char *servers,
    const struct px_dns_opts *opts, char *errbuf, size_t errlen)
{
	struct px_dns *d = NULL;
	struct ares_options ao;
	char csv[4096];
	char lookups[] = "b";
	int optmask, rc, err = 0;

	d = calloc(1, sizeof(*d));
	if (!d) {
		err = ENOMEM;
		set_err(errbuf, errlen, "out of memory");
		goto out;
	}
	d->base = base;
	if (opts)
		d->opts = *opts;
	else
		px_dns_opts_init(&d->opts);
	if (!d->opts.resolv_conf)
		d->opts.resolv_conf = "/etc/resolv.conf";
	if (d->opts.timeout_ms == 0 || d->opts.tries == 0 ||
	    d->opts.timeout_ms > 60000 || d->opts.tries > 10) {
		err = EINVAL;
		set_err(errbuf, errlen,
		    "dns timeout must be 1-60000 ms and tries 1-10");
		goto out;
	}
	d->deadline_ms = (uint64_t)d->opts.timeout_ms * d->opts.tries;

	if (servers) {
		rc = servers_to_csv(servers, csv, sizeof(csv), errbuf, errlen);
		if (rc < 0) {
			err = -rc;
			goto out;
		}
	} else {
		rc = resolv_conf_check(d->opts.resolv_conf, errbuf, errlen);
		if (rc < 0) {
			err = -rc;
			goto out;
		}
	}

	rc = ares_library_init(ARES_LIB_INIT_ALL);
	if (rc != ARES_SUCCESS) {
		err = ENOMEM;
		set_err(errbuf, errlen, "c-ares: %s", ares_strerror(rc));
		goto out;
	}
	d->lib_ok = 1;

	d->timer = evtimer_new(base, timer_cb, d);
	if (!d->timer) {
		err = ENOMEM;
		set_err(errbuf, errlen, "out of memory");
		goto out;
	}

	memset(&ao, 0, sizeof(ao));
	optmask = ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES |
	    ARES_OPT_SOCK_STATE_CB | ARES_OPT_LOOKUPS | ARES_OPT_DOMAINS;
	/*
	 * No search domains and no HOSTALIASES: the allowlist names exact
	 * hosts, and "api.example.com" must never turn into
	 * "api.example.com.corp.internal" (ndomains 0 also overrides the
	 * "search" line of resolv.conf).  Lookups "b": DNS only, never
	 * /etc/hosts, so that the answer does not depend on which root
	 * the proxy runs in.
	 */
	ao.flags = ARES_FLAG_NOSEARCH | ARES_FLAG_NOALIASES;
	ao.timeout = (int)d->opts.timeout_ms;
	ao.tries = (int)d->opts.tries;
	ao.sock_state_cb = sock_state_cb;
	ao.sock_state_cb_data = d;
	ao.lookups = lookups;
	ao.domains = NULL;
	ao.ndomains = 0;
	if (servers) {
		/*
		 * With servers given, resolv.conf plays no part: c-ares reads
		 * /dev/null instead (an unreadable /etc/resolv.conf would
		 * otherwise fail ares_init_options), and an empty
		 * ARES_OPT_SERVERS keeps it from adding its 127.0.0.1
		 * default.  The real list follows.
		 */
		optmask |= ARES_OPT_SERVERS | ARES_OPT_RESOLVCONF;
		ao.servers = NULL;
		ao.nservers = 0;
		ao.resolvconf_path = (char *)"/dev/null";
	} else {
		optmask |= ARES_OPT_RESOLVCONF;
		ao.resolvconf_path = (char *)d->opts.resolv_conf;
	}
	rc = ares_init_options(&d->ch, &ao, optmask);
	if (rc != ARES_SUCCESS) {
		d->ch = NULL;
		err = rc == ARES_ENOMEM ? ENOMEM : EINVAL;
		set_err(errbuf, errlen, "c-ares: %s", ares_strerror(rc));
		goto out;
	}
	if (servers) {
		rc = ares_set_servers_ports_csv(d->ch, csv);
		if (rc != ARES_SUCCESS) {
			err = EINVAL;
			set_err(errbuf, errlen, "dns_servers '%s': %s", csv,
			    ares_strerror(rc));
			goto out;
		}
	}
	return d;

out:
	px_dns_free(d);
	errno = err;
	return NULL;
}

static void
free_entry(void *p)
{
	free(p);
}

void
px_dns_free(struct px_dns *d)
{
	struct dns_sock *s;

	if (!d)
		return;
	d->destroying = 1;
	/* Drop the waiters first, so that no lookup has anyone to tell. */
	while (d->queries)
		query_destroy(d->queries);
	if (d->ch) {
		/* Calls addrinfo_cb(ARES_EDESTRUCTION) for every lookup. */
		ares_destroy(d->ch);
		d->ch = NULL;
	}
	while ((s = d->socks)) {
		d->socks = s->next;
		if (s->ev)
			event_free(s->ev);
		free(s);
	}
	if (d->timer)
		event_free(d->timer);
	tdestroy(d->lookup_root, free_entry);
	tdestroy(d->cache_root, free_entry);
	if (d->lib_ok)
		ares_library_cleanup();
	free(d);
}

void
px_dns_set_socket_functions(struct px_dns *d, const void *funcs, void *user)
{
	ares_set_socket_functions(d->ch, funcs, user);
}
