/*
 * tests/fuzz/fuzz-dns.c: DNS answers fed through the resolver path.
 *
 * c-ares' sockets are replaced (ares_set_socket_functions) by socket pairs
 * whose far end is this harness playing the DNS server: each query c-ares
 * sends is answered with a message built from the fuzz input (the query's
 * own ID and question, then flags, counts and records from the input), over
 * UDP and, when the answer says TC, over TCP.  px_dns then turns whatever
 * c-ares accepted into a result.  Invariants: at most PX_DNS_MAX_ADDRS
 * addresses, each AF_INET or AF_INET6 with port 0, no duplicates, the TTL
 * within the clamp, exactly one callback, no leak.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <ares.h>
#include <event2/event.h>

#include "proxy/proto/dns.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t *fz_data;
static size_t fz_size;
static int peer[64]; /* c-ares fd -> our end */

static ares_socket_t
fz_socket(int domain, int type, int protocol, void *user)
{
	int sv[2];

	(void)domain;
	(void)protocol;
	(void)user;
	if (socketpair(AF_UNIX, (type & SOCK_STREAM) ? SOCK_STREAM : SOCK_DGRAM, 0, sv) != 0)
		return ARES_SOCKET_BAD;
	if (sv[0] >= 64) {
		close(sv[0]);
		close(sv[1]);
		return ARES_SOCKET_BAD;
	}
	peer[sv[0]] = sv[1];
	return sv[0];
}

static int
fz_close(ares_socket_t fd, void *user)
{
	(void)user;
	if (fd >= 0 && fd < 64 && peer[fd] > 0) {
		close(peer[fd]);
		peer[fd] = 0;
	}
	return close(fd);
}

static int
fz_connect(ares_socket_t fd, const struct sockaddr *sa, ares_socklen_t len, void *user)
{
	(void)fd;
	(void)sa;
	(void)len;
	(void)user;
	return 0;
}

static ares_ssize_t
fz_recvfrom(ares_socket_t fd, void *buf, size_t len, int flags, struct sockaddr *from,
    ares_socklen_t *fromlen, void *user)
{
	ssize_t n;

	(void)flags;
	(void)user;
	n = recv(fd, buf, len, MSG_DONTWAIT);
	if (from != NULL && fromlen != NULL && *fromlen >= (ares_socklen_t)sizeof(struct sockaddr_in)) {
		/* The answer comes from the server c-ares asked. */
		struct sockaddr_in sin;
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_port = htons(53);
		sin.sin_addr.s_addr = htonl(0x7f000001);
		memcpy(from, &sin, sizeof(sin));
		*fromlen = sizeof(sin);
	}
	return n;
}

/* Answer QUERY (LEN bytes, a DNS message) with a message made of its ID and
 * question and the fuzz input; TCP answers carry the length prefix. */
static void
answer(int fd, const uint8_t *query, size_t len, int tcp)
{
	uint8_t msg[4096 + 2];
	size_t q = 12, off = tcp ? 2 : 0, n;

	if (len < 12)
		return;
	while (q < len && query[q] != 0)
		q += (size_t)query[q] + 1;
	q += 5; /* root label, QTYPE, QCLASS */
	if (q > len)
		return;
	memcpy(msg + off, query, q);
	msg[off + 2] = 0x80 | (fz_size > 0 ? (fz_data[0] & 0x7b) : 0); /* QR, opcode/AA/TC/RD */
	msg[off + 3] = fz_size > 1 ? fz_data[1] : 0;                  /* RA, RCODE */
	msg[off + 6] = 0;
	msg[off + 7] = fz_size > 2 ? fz_data[2] : 0;                  /* ANCOUNT */
	msg[off + 8] = msg[off + 9] = msg[off + 10] = msg[off + 11] = 0;
	n = fz_size > 3 ? fz_size - 3 : 0;
	if (off + q + n > sizeof(msg))
		n = sizeof(msg) - off - q;
	if (n > 0)
		memcpy(msg + off + q, fz_data + 3, n);
	if (tcp) {
		msg[0] = (uint8_t)((q + n) >> 8);
		msg[1] = (uint8_t)(q + n);
	}
	(void)!write(fd, msg, off + q + n);
}

static ares_ssize_t
fz_sendv(ares_socket_t fd, const struct iovec *iov, int iovcnt, void *user)
{
	uint8_t buf[4096];
	size_t len = 0;
	int i, type = 0;
	socklen_t tl = sizeof(type);

	(void)user;
	for (i = 0; i < iovcnt; i++) {
		size_t k = iov[i].iov_len;
		if (len + k > sizeof(buf))
			k = sizeof(buf) - len;
		memcpy(buf + len, iov[i].iov_base, k);
		len += k;
	}
	getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl);
	if (fd >= 0 && fd < 64 && peer[fd] > 0) {
		if (type == SOCK_STREAM)
			answer(peer[fd], len > 2 ? buf + 2 : buf, len > 2 ? len - 2 : 0, 1);
		else
			answer(peer[fd], buf, len, 0);
	}
	return (ares_ssize_t)len;
}

static const struct ares_socket_functions fz_funcs = {
	fz_socket, fz_close, fz_connect, fz_recvfrom, fz_sendv,
};

struct outcome {
	int calls;
	struct event_base *base;
};

static void
done(int status, const struct px_dns_result *res, const char *errmsg, void *arg)
{
	struct outcome *o = arg;
	size_t i, j;

	o->calls++;
	if (getenv("FUZZ_DNS_DEBUG") != NULL)
		fprintf(stderr, "status %d (%s) naddrs %zu\n", status, errmsg ? errmsg : "ok",
		    res ? res->naddrs : 0);
	if (status == 0) {
		if (res == NULL || res->naddrs == 0 || res->naddrs > PX_DNS_MAX_ADDRS || res->ttl > 300)
			abort();
		for (i = 0; i < res->naddrs; i++) {
			const struct sockaddr *sa = (const struct sockaddr *)&res->addrs[i];
			if (sa->sa_family == AF_INET) {
				if (((const struct sockaddr_in *)(const void *)sa)->sin_port != 0)
					abort();
			} else if (sa->sa_family == AF_INET6) {
				if (((const struct sockaddr_in6 *)(const void *)sa)->sin6_port != 0)
					abort();
			} else {
				abort();
			}
			for (j = 0; j < i; j++)
				if (res->addrlens[i] == res->addrlens[j] &&
				    memcmp(&res->addrs[i], &res->addrs[j], res->addrlens[i]) == 0)
					abort();
		}
	} else if (errmsg == NULL || res != NULL) {
		abort();
	}
	event_base_loopexit(o->base, NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct event_base *base;
	struct px_dns_opts opts;
	struct px_dns *d;
	struct outcome o;
	struct timeval limit = { 2, 0 };
	char err[256];

	if (size > 4000)
		return 0;
	fz_data = data;
	fz_size = size;
	memset(&o, 0, sizeof(o));
	base = event_base_new();
	if (base == NULL)
		return 0;
	o.base = base;
	px_dns_opts_init(&opts);
	opts.timeout_ms = 3;
	opts.tries = 1;
	opts.cache_max = 0;
	d = px_dns_new(base, "127.0.0.1", &opts, err, sizeof(err));
	if (d == NULL)
		abort();
	px_dns_set_socket_functions(d, &fz_funcs, NULL);
	if (px_dns_resolve(d, "fuzz.test", done, &o) == NULL)
		abort();
	event_base_loopexit(base, &limit);
	event_base_dispatch(base);
	if (o.calls != 1)
		abort();
	px_dns_free(d);
	event_base_free(base);
	return 0;
}
