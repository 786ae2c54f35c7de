/*
 * bridge/dnsstub.c: the sandbox's DNS stub for transparent capture (see
 * dnsstub.h).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "bridge/dnsstub.h"
#include "bridge/forward.h"
#include "bridge/relay.h"
#include "bridge/session.h"

/* The name check's whole answer is small: a head and two lines. */
#define NAMECHECK_TIMEOUT_MS 1000
/* A TCP connection gets this long in all, from its accept, for its
 * queries and our answers: the stub serves one connection at a time, so a
 * slow client holds it up no longer. */
#define TCP_TIMEOUT_MS 1000

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}


struct name {
	char name[CF_HOST_MAX];
	int allowed;                 /* else refused: NXDOMAIN */
	struct in_addr addr;         /* allowed: its synthetic address */
	char why[BR_DNS_EDE_TEXT_MAX + 1]; /* refused: the EXTRA-TEXT */
};

struct br_dnsstub {
	struct br_relay *relay;
	char *sock;
	struct name *names;
	size_t nnames, nallowed;
	int udp, tcp;
	bool said_full;
};

/* Ask the proxy about NAME; fill E.  Returns 0 or a negative errno (the
 * proxy could not be asked: SERVFAIL, and nothing is remembered). */
static int
check_name(struct br_dnsstub *d, const char *name, struct name *e)
{
	char req[CF_HOST_MAX + 128], *buf = NULL;
	uint16_t ports[BR_DNS_PORTS_MAX];
	size_t len = 0, i;
	int n, err;

	snprintf(req, sizeof(req), "GET /.well-known/postern/name?host=%s HTTP/1.1\r\n"
	    "Host: postern\r\nConnection: close\r\n\r\n", name);
	err = br_session_get(d->sock, req, NAMECHECK_TIMEOUT_MS, &buf, &len);
	if (err < 0) {
		log_notice_errno(-err, "DNS %s: cannot ask the proxy", name);
		goto out;
	}
	n = br_dns_ports_parse(buf, len, ports, BR_DNS_PORTS_MAX);
	if (n < 0) {
		log_notice("DNS %s: the proxy's answer to the name check is malformed", name);
		err = -EPROTO;
		goto out;
	}
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->allowed = n > 0;
	if (n == 0) {
		br_dns_refusal_text(buf, len, name, e->why, sizeof(e->why));
		err = 0;
		goto out;
	}
	if (d->nallowed == BR_DNS_NAMES_MAX) {
		if (!d->said_full)
			log_notice("DNS: %d names have addresses already; no more", BR_DNS_NAMES_MAX);
		d->said_full = true;
		err = -ENOSPC;
		goto out;
	}
	/* 198.18.0.1 upwards, in the order names are first asked: stable for
	 * the bridge's life, never handed out twice (also not when a
	 * listener below fails: those made so far carry this name). */
	e->addr.s_addr = htonl(BR_DNS_NET + 1 + (uint32_t)d->nallowed);
	d->nallowed++;
	for (i = 0; i < (size_t)n; i++) {
		struct sockaddr_in sin;
		char target[BR_FORWARD_TARGET_MAX];

		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_addr = e->addr;
		sin.sin_port = htons(ports[i]);
		snprintf(target, sizeof(target), "%s:%u", name, ports[i]);
		err = br_relay_forward(d->relay, (struct sockaddr *)&sin, sizeof(sin), target, NULL);
		/* A port without its listener is reset like one no rule
		 * allows; the name keeps its address and its other ports. */
		if (err < 0)
			log_notice_errno(-err, "DNS %s: cannot listen on port %u", name, ports[i]);
	}
	err = 0;
out:
	free(buf);
	return err;
}

size_t
br_dnsstub_answer(struct br_dnsstub *d, const uint8_t *msg, size_t len, uint8_t *out,
    size_t cap)
{
	/* RFC 8914 §4.16, the operator's policy: for names no rule can
	 * match, and for those the proxy refused (with its own words). */
	static const struct br_dns_ede nohost = { BR_DNS_EDE_BLOCKED,
		"postern: refused: not a host name any rule can allow (an IP literal, a '_' label, "
		"a byte no host name has, or a class other than IN)" };
	static const struct br_dns_ede noproxy = { BR_DNS_EDE_NETWORK,
		"postern: the proxy could not be asked about this name; try again" };
	static const struct br_dns_ede full = { BR_DNS_EDE_OTHER,
		"postern: the DNS stub has given out all its addresses" };
	struct br_dns_query q;
	struct br_dns_ede why;
	struct name *e = NULL, fresh;
	size_t i;
	int rc;

	rc = br_dns_parse(msg, len, &q);
	if (rc == -EBADMSG)
		return 0;
	if (rc == -ENOTSUP)
		return br_dns_reply(msg, len, NULL, BR_DNS_NOTIMP, NULL, 0, NULL, out, cap);
	if (rc < 0)
		return br_dns_reply(msg, len, NULL, BR_DNS_FORMERR, NULL, 0, NULL, out, cap);
	/* RFC 6891 §6.1.3: only EDNS version 0 is spoken. */
	if (q.edns && q.edns_version != 0)
		return br_dns_reply(msg, len, &q, BR_DNS_BADVERS, NULL, 0, NULL, out, cap);
	/* A name no rule could ever match (an IP literal, "_srv._tcp", raw
	 * bytes): no such name, and nothing for the proxy to judge. */
	if (!q.name_ok || q.qclass != BR_DNS_CLASS_IN)
		return br_dns_reply(msg, len, &q, BR_DNS_NXDOMAIN, NULL, 0, &nohost, out, cap);
	for (i = 0; i < d->nnames; i++)
		if (strcmp(d->names[i].name, q.name) == 0) {
			e = &d->names[i];
			break;
		}
	if (e == NULL) {
		memset(&fresh, 0, sizeof(fresh));
		rc = check_name(d, q.name, &fresh);
		if (rc < 0)
			return br_dns_reply(msg, len, &q, BR_DNS_SERVFAIL, NULL, 0,
			    rc == -ENOSPC ? &full : &noproxy, out, cap);
		/* Refusals are remembered too, within the same bound: the
		 * proxy's line said it once, and the answer does not change
		 * while this snapshot of the rules is the bridge's. */
		if (d->nnames < 2 * BR_DNS_NAMES_MAX) {
			d->names[d->nnames] = fresh;
			e = &d->names[d->nnames++];
		} else {
			e = &fresh;
		}
	}
	if (!e->allowed) {
		why.code = BR_DNS_EDE_BLOCKED;
		why.text = e->why;
		return br_dns_reply(msg, len, &q, BR_DNS_NXDOMAIN, NULL, 0, &why, out, cap);
	}
	/* No IPv6 range: AAAA and every other type get an empty answer
	 * (RFC 2308 §2.2, "NODATA"), so clients use the A record. */
	return br_dns_reply(msg, len, &q, BR_DNS_NOERROR, q.qtype == BR_DNS_TYPE_A ? &e->addr : NULL,
	    BR_DNS_TTL, NULL, out, cap);
}

static void
on_udp(int fd, void *arg)
{
	struct br_dnsstub *d = arg;
	uint8_t in[BR_DNS_MSG_MAX + 1], out[BR_DNS_MSG_MAX];
	struct sockaddr_storage from;
	socklen_t flen = sizeof(from);
	ssize_t k;
	size_t n;

	k = recvfrom(fd, in, sizeof(in), MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *)&from, &flen);
	if (k < 0)
		return;
	/* Longer than RFC 1035 §4.2.1 allows over UDP: not a query of ours. */
	if ((size_t)k > BR_DNS_MSG_MAX)
		return;
	n = br_dnsstub_answer(d, in, (size_t)k, out, sizeof(out));
	if (n > 0)
		(void)sendto(fd, out, n, MSG_DONTWAIT, (struct sockaddr *)&from, flen);
}

/* Bound FD's next wait by what is left until END; -1 when nothing is. */
static int
time_left(int fd, const struct timespec *end)
{
	struct timespec now;
	struct timeval tv;
	long long us;

	clock_gettime(CLOCK_MONOTONIC, &now);
	us = (end->tv_sec - now.tv_sec) * 1000000LL + (end->tv_nsec - now.tv_nsec) / 1000;
	if (us <= 0)
		return -1;
	tv.tv_sec = us / 1000000;
	tv.tv_usec = us % 1000000;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return 0;
}

/* Read exactly N bytes from FD by END: a client that trickles its bytes
 * gets no more time than one that sends none. */
static int
read_full(int fd, uint8_t *p, size_t n, const struct timespec *end)
{
	ssize_t k;

	while (n > 0) {
		if (time_left(fd, end) < 0)
			return -1;
		k = recv(fd, p, n, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static void
on_tcp(int lfd, void *arg)
{
	struct br_dnsstub *d = arg;
	uint8_t in[BR_DNS_MSG_MAX], out[2 + BR_DNS_MSG_MAX], lenb[2];
	struct timespec end;
	size_t n, ql;
	int fd;

	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += TCP_TIMEOUT_MS / 1000;
	end.tv_nsec += (TCP_TIMEOUT_MS % 1000) * 1000000L;
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	/* RFC 1035 §4.2.2: a two-byte length, then the message.  One query
	 * per connection; a longer one than the stub ever answers is dropped
	 * unread. */
	while (read_full(fd, lenb, 2, &end) == 0) {
		ql = get16(lenb);
		if (ql > sizeof(in) || read_full(fd, in, ql, &end) < 0)
			break;
		n = br_dnsstub_answer(d, in, ql, out + 2, sizeof(out) - 2);
		if (n == 0)
			break;
		put16(out, (uint16_t)n);
		if (time_left(fd, &end) < 0 ||
		    send(fd, out, n + 2, MSG_NOSIGNAL) != (ssize_t)(n + 2))
			break;
	}
	close(fd);
}

static int
bind_53(int type)
{
	struct sockaddr_in sin;
	int fd, one = 1;

	fd = socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(53);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 64) < 0)) {
		int err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* Is the synthetic range local here (a "local" route on lo)? */
static int
range_local(void)
{
	struct sockaddr_in sin;
	int fd, err = 0;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(BR_DNS_NET + ((1u << (32 - BR_DNS_PREFIX)) - 2));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		err = -errno;
	close(fd);
	return err;
}

struct br_dnsstub *
br_dnsstub_new(struct br_relay *r, const char *sock)
{
	struct br_dnsstub *d;
	int err;

	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return NULL;
	d->udp = d->tcp = -1;
	d->relay = r;
	d->sock = strdup(sock);
	d->names = calloc(2 * BR_DNS_NAMES_MAX, sizeof(*d->names));
	if (d->sock == NULL || d->names == NULL) {
		err = -ENOMEM;
		goto fail;
	}
	err = range_local();
	if (err < 0)
		goto fail;
	d->udp = bind_53(SOCK_DGRAM);
	if (d->udp < 0) {
		err = d->udp;
		goto fail;
	}
	d->tcp = bind_53(SOCK_STREAM);
	if (d->tcp < 0) {
		err = d->tcp;
		goto fail;
	}
	err = br_relay_watch(r, d->udp, on_udp, d);
	if (err < 0)
		goto fail;
	d->udp = -1;
	err = br_relay_watch(r, d->tcp, on_tcp, d);
	if (err < 0)
		goto fail;
	d->tcp = -1;
	return d;
fail:
	/* A socket already watched belongs to the relay (-1 here). */
	if (d->udp >= 0)
		close(d->udp);
	if (d->tcp >= 0)
		close(d->tcp);
	br_dnsstub_free(d);
	errno = -err;
	return NULL;
}

void
br_dnsstub_free(struct br_dnsstub *d)
{
	if (d == NULL)
		return;
	free(d->sock);
	free(d->names);
	free(d);
}
