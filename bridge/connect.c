/*
 * bridge/connect.c: "postern-bridge connect HOST PORT" (connect.h).  Plain
 * blocking I/O and poll(2): one tunnel, for one ssh.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/log.h"
#include "base/unix.h"
#include "bridge/addr.h"
#include "bridge/connect.h"
#include "bridge/forward.h"
#include "bridge/relay.h"
#include "bridge/upstream.h"

/* The proxy's answer to a CONNECT: head and refusal body, at most. */
#define REPLY_MAX 8192
/* How long the proxy may take to answer: its own connect_timeout (10 s
 * by default) and a DNS lookup fit well inside. */
#define ANSWER_MS 60000

static void
usage(void)
{
	fprintf(stderr, "usage: postern-bridge connect [--via ADDR:PORT | --connect SOCK] HOST PORT\n");
}

/* Write all of the N bytes at P to FD.  Returns 0 or -1 (errno set). */
static int
write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Read into BUF (of SIZE, holding *LEN) from FD, waiting at most MS.
 * Returns the bytes read, 0 at EOF, -1 on an error or timeout. */
static ssize_t
read_some(int fd, char *buf, size_t size, size_t *len, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;
	int rc;

	do
		rc = poll(&p, 1, ms);
	while (rc < 0 && errno == EINTR);
	if (rc <= 0) {
		errno = rc == 0 ? ETIMEDOUT : errno;
		return -1;
	}
	do
		n = read(fd, buf + *len, size - *len);
	while (n < 0 && errno == EINTR);
	if (n > 0)
		*len += (size_t)n;
	return n;
}

/* Say the proxy's refusal: the status and reason, then each line of its
 * body (the rule that is missing, proxy/flow/conn.c), escaped. */
static void
report(const char *target, const struct bs_reply *rep, const char *buf, size_t len)
{
	log_notice("postern refused CONNECT %s: %d %s", target, rep->status,
	    rep->reason[0] ? rep->reason : "(no reason given)");
	br_relay_log_body(buf + rep->head_len, buf + len);
}

/* Relay stdin -> S and S -> stdout until S's EOF (then ssh is done) or
 * both directions ended.  Returns 0, or -1 when a side failed. */
static int
relay(int s)
{
	struct pollfd p[2];
	char buf[65536];
	bool in_open = true, s_open = true;

	while (s_open) {
		int rc;

		p[0].fd = in_open ? 0 : -1;
		p[0].events = POLLIN;
		p[1].fd = s;
		p[1].events = POLLIN;
		rc = poll(p, 2, -1);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0)
			return -1;
		if (in_open && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
			ssize_t n = read(0, buf, sizeof(buf));

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				/* Half-close: the other side still answers. */
				in_open = false;
				(void)shutdown(s, SHUT_WR);
			} else if (write_all(s, buf, (size_t)n) < 0) {
				return -1;
			}
		}
		if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t n = read(s, buf, sizeof(buf));

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return -1;
			if (n == 0)
				s_open = false;
			else if (write_all(1, buf, (size_t)n) < 0)
				return -1;
		}
	}
	return 0;
}

int
br_connect_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "via", required_argument, NULL, 'v' },
		{ "connect", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *via = "127.0.0.1:3128", *sock = NULL, *why = NULL, *host;
	struct sockaddr_storage ss;
	struct br_upstream up;
	struct br_forward f;
	struct bs_reply rep;
	socklen_t slen;
	char spec[BR_FORWARD_TARGET_MAX + 16], req[2 * BR_FORWARD_TARGET_MAX + 64];
	char *buf = NULL;
	size_t len = 0;
	int opt, s = -1, rc = BR_CONNECT_SETUP, n, parsed = 0;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "+c:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'v':
			via = optarg;
			break;
		case 'c':
			sock = optarg;
			break;
		case 'h':
			usage();
			return 0;
		default:
			usage();
			return BR_CONNECT_SETUP;
		}
	}
	if (argc - optind != 2) {
		usage();
		return BR_CONNECT_SETUP;
	}
	host = argv[optind];
	/* ssh's %h is an IPv6 address without brackets; CONNECT wants them
	 * (RFC 9110 §9.3.6, RFC 3986 §3.2.2).  br_forward_parse() judges
	 * the syntax, so that no CR, LF or space gets into the request. */
	n = snprintf(spec, sizeof(spec), "1:%s%s%s:%s", strchr(host, ':') && host[0] != '[' ? "[" : "",
	    host, strchr(host, ':') && host[0] != '[' ? "]" : "", argv[optind + 1]);
	if (n < 0 || (size_t)n >= sizeof(spec) || br_forward_parse(spec, &f, &why) < 0) {
		log_notice("connect %s %s: %s", host, argv[optind + 1], why ? why : "too long");
		return BR_CONNECT_SETUP;
	}
	/* A closed stdout is ssh gone: an error from write(2), not a death. */
	signal(SIGPIPE, SIG_IGN);

	if (sock != NULL) {
		if (br_upstream_parse(sock, &up, &why) < 0) {
			log_notice("--connect %s: %s", sock, why);
			return BR_CONNECT_SETUP;
		}
		memcpy(&ss, &up.ss, sizeof(ss));
		slen = up.len;
		s = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	} else {
		if (br_addr_parse(via, &ss, &slen, &why) < 0) {
			log_notice("--via %s: %s", via, why);
			return BR_CONNECT_SETUP;
		}
		s = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	}
	if (s < 0 || connect(s, (struct sockaddr *)&ss, slen) < 0 ||
	    (sock != NULL && (errno = -br_upstream_preface(&up, s)) != 0)) {
		log_notice("cannot reach the proxy at %s: %s", sock ? sock : via, strerror(errno));
		goto out;
	}
	n = snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", f.target, f.target);
	buf = malloc(REPLY_MAX);
	if (n < 0 || (size_t)n >= sizeof(req) || buf == NULL || write_all(s, req, (size_t)n) < 0) {
		log_notice("cannot send the CONNECT to the proxy: %s", strerror(errno));
		goto out;
	}
	rc = BR_CONNECT_REFUSED;
	for (;;) {
		ssize_t r;

		if (len == REPLY_MAX) {
			if (!parsed)
				log_notice("connect %s: the proxy's answer has no end of head", f.target);
			break;
		}
		r = read_some(s, buf, REPLY_MAX, &len, ANSWER_MS);
		if (r < 0 && !parsed) {
			log_notice("connect %s: no answer from the proxy: %s", f.target, strerror(errno));
			goto out;
		}
		if (r <= 0) {
			if (!parsed)
				log_notice("connect %s: the proxy closed the connection without an answer",
				    f.target);
			break;
		}
		if (parsed)
			continue;
		n = bs_reply_parse(buf, len, &rep);
		if (n == 0)
			continue;
		if (n < 0) {
			log_notice("connect %s: the proxy's answer is not an HTTP response", f.target);
			goto out;
		}
		parsed = 1;
		if (rep.status >= 200 && rep.status <= 299) {
			/* Bytes after the head are the tunnel's (an SSH
			 * server speaks first). */
			if (len > rep.head_len && write_all(1, buf + rep.head_len, len - rep.head_len) < 0)
				goto out;
			free(buf);
			buf = NULL;
			rc = relay(s) == 0 ? 0 : BR_CONNECT_REFUSED;
			goto out;
		}
		/* A refusal: its body follows, and the proxy closes after it. */
	}
	if (parsed)
		report(f.target, &rep, buf, len);
out:
	free(buf);
	if (s >= 0)
		close(s);
	return rc;
}
