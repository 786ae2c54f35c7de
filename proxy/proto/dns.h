/*
 * proxy/proto/dns.h: asynchronous name resolution for postern-proxy.
 *
 * c-ares runs inside the proxy's libevent loop (its sockets and its timer
 * are libevent events; there are no threads and no blocking calls), and
 * never touches glibc NSS, so a static binary works in an empty root.
 * Answers are kept in a bounded cache that honours their TTL.  The servers
 * come from the config key "dns_servers" or, when it is absent, from
 * /etc/resolv.conf; /etc/hosts is never consulted and no search domains
 * are applied, so a name always means the same thing as in the allowlist.
 */
#ifndef POSTERN_PROXY_DNS_H
#define POSTERN_PROXY_DNS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct event_base;

struct px_dns;       /* resolver + cache, owned by the proxy */
struct px_dns_query; /* one outstanding lookup, owned by the resolver */

/*
 * At most this many addresses are returned for one name, and the caller
 * vets every one of them (proxy/flow/conn.c refuses the host when any is
 * refused, then dials at most the first 16).  A name with more distinct
 * addresses fails with PX_DNS_ERROR ("more than 64 addresses") instead of
 * being cut short: an address left out would escape the caller's checks.
 */
#define PX_DNS_MAX_ADDRS 64
#define PX_DNS_MAX_ADDRS_TEXT "64"

/*
 * Failure statuses given to a px_dns_cb.  They are far below any negative
 * errno value so that callers may mix them with -errno codes.
 */
#define PX_DNS_NXDOMAIN (-1001) /* the name does not exist (RCODE 3) */
#define PX_DNS_NODATA   (-1002) /* the name exists, without A or AAAA */
#define PX_DNS_SERVFAIL (-1003) /* the server failed (RCODE 2) */
#define PX_DNS_REFUSED  (-1004) /* the server refused (RCODE 5) */
#define PX_DNS_TIMEOUT  (-1005) /* no answer within timeout_ms x tries */
#define PX_DNS_ERROR    (-1006) /* anything else; see the message */

struct px_dns_opts {
	/*
	 * Time for one attempt, in milliseconds, and the number of attempts
	 * per server.  c-ares doubles the wait on each round through the
	 * server list; postern caps the whole lookup at timeout_ms x tries
	 * for its callers whatever c-ares does underneath.
	 */
	unsigned timeout_ms;  /* default 2000 */
	unsigned tries;       /* default 2 */
	size_t cache_max;     /* cached names; 0 disables the cache; default 1024 */
	uint32_t max_ttl;     /* seconds; longer TTLs are clamped; default 300 */
	/*
	 * Seconds to remember NXDOMAIN and NODATA answers.  c-ares does not
	 * hand out the SOA minimum that RFC 2308 §5 would use, so this is a
	 * fixed short time (also clamped by max_ttl); 0 disables negative
	 * caching.  Server failures and timeouts are never cached.  Default 5.
	 */
	uint32_t neg_ttl;
	/* The resolv.conf used when no servers are given (tests change it). */
	const char *resolv_conf; /* default "/etc/resolv.conf" */
};

struct px_dns_result {
	/*
	 * Addresses ordered for Happy Eyeballs (RFC 8305 §4): interleaved by
	 * family, IPv6 first, each family in the order the server gave.  The
	 * port of every address is 0; the caller sets it.  No duplicates.
	 */
	size_t naddrs;
	struct sockaddr_storage addrs[PX_DNS_MAX_ADDRS];
	socklen_t addrlens[PX_DNS_MAX_ADDRS];
	/* Seconds the answer may still be used: the smallest TTL of the
	 * records used (CNAMEs included), clamped to max_ttl. */
	uint32_t ttl;
	int from_cache; /* 1 when answered from the cache, without a query */
};

struct px_dns_stats {
	uint64_t hits;      /* answered from the cache (negative entries too) */
	uint64_t misses;    /* needed a lookup (or joined one in flight) */
	uint64_t coalesced; /* misses that joined a lookup already in flight */
	uint64_t failures;  /* lookups that ended with a failure status */
	uint64_t timeouts;  /* callers given PX_DNS_TIMEOUT */
	uint64_t evictions; /* live entries dropped because the cache was full */
	size_t entries;     /* names in the cache now */
	size_t inflight;    /* c-ares lookups outstanding now */
};

/*
 * Called exactly once per px_dns_resolve() that was not cancelled, always
 * from the event loop and never from inside px_dns_resolve().  STATUS is 0
 * with RES holding at least one address, or one of the PX_DNS_* failures
 * with RES NULL and ERRMSG a static English phrase (ERRMSG is NULL on
 * success).  RES is only valid during the call.  The query handle is freed
 * before the call: the callback must not cancel it, but may resolve other
 * names, cancel other queries, or free the whole resolver.
 */
typedef void (*px_dns_cb)(int status, const struct px_dns_result *res,
    const char *errmsg, void *arg);

/* Fill OPTS with the defaults documented in struct px_dns_opts. */
void px_dns_opts_init(struct px_dns_opts *opts);

/*
 * Create a resolver on BASE.  SERVERS is the "dns_servers" value: a
 * comma-separated list of "IPv4", "IPv4:port", "IPv6", "[IPv6]" or
 * "[IPv6]:port" (port 53 when none), blanks around items allowed; or NULL
 * to use the nameservers of OPTS->resolv_conf, which must exist and list at
 * least one (an empty root without /etc/resolv.conf is an error here, not a
 * silent fallback to 127.0.0.1).  OPTS may be NULL for the defaults; it is
 * copied.  Returns the resolver, or NULL with errno set and, when ERRBUF is
 * not NULL, a NUL-terminated message of at most ERRLEN bytes saying what is
 * wrong.  BASE must outlive the resolver.
 */
struct px_dns *px_dns_new(struct event_base *base, const char *servers,
    const struct px_dns_opts *opts, char *errbuf, size_t errlen);

/*
 * Free D: outstanding queries are dropped and their callbacks are never
 * called; c-ares is torn down.  Safe from inside a px_dns_cb.  NULL is a
 * no-op.
 */
void px_dns_free(struct px_dns *d);

/*
 * Start resolving NAME (A and AAAA), which must already be in the normal
 * form of cf_host_parse() and must not be an IP literal.  CB is called
 * later with ARG, as described at px_dns_cb; a cache hit is delivered the
 * same way, on the next loop iteration.  "localhost" and names below it
 * give ::1 and 127.0.0.1 without a query (RFC 6761 §6.3), for the
 * caller's range check to refuse.  Concurrent queries for one name
 * share one c-ares lookup.  Returns a handle owned by D, valid until the
 * callback starts or px_dns_cancel(); or NULL with errno EINVAL (NAME not
 * a name in normal form) or ENOMEM.
 */
struct px_dns_query *px_dns_resolve(struct px_dns *d, const char *name,
    px_dns_cb cb, void *arg);

/*
 * Cancel Q: its callback is never called and Q is freed.  The lookup it
 * waited for goes on and its answer still fills the cache.  Safe from
 * inside any px_dns_cb (for another query).  NULL is a no-op.
 */
void px_dns_cancel(struct px_dns_query *q);

/* Copy D's counters into OUT, for /metrics. */
void px_dns_stats(const struct px_dns *d, struct px_dns_stats *out);

/*
 * For tests and fuzzing only: route the resolver's sockets through FUNCS,
 * a struct ares_socket_functions, called with USER (see
 * ares_set_socket_functions(3)), so that a test can play the DNS server
 * without a network.  Call right after px_dns_new(), before any lookup.
 */
void px_dns_set_socket_functions(struct px_dns *d, const void *funcs, void *user);

/* A static English name for STATUS (0 or a PX_DNS_* code). */
const char *px_dns_strerror(int status);

#endif
