/*
 * tests/integration/h2-relay.c: proxy/flow/h2 between real HTTP/2 programs, on
 * loopback only, for tests/integration/h2-clients.sh.
 *
 *   h2-relay UPSTREAM_PORT
 *
 * Listens on 127.0.0.1 (a port the kernel picks, printed on stdout), and
 * for each accepted plaintext h2c client connects to 127.0.0.1:UPSTREAM_PORT
 * and relays through the module, one connection at a time.  Its decide
 * injects "authorization: Bearer real-from-relay" on paths under /inject,
 * refuses paths under /deny with 403, and forwards the rest; each done
 * call prints one line on stderr.  Output to each side is kept in a
 * buffer that refuses more than 1 MiB, so the module's back-pressure is in
 * play.  Not installed.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proxy/flow/h2.h"

#define OUT_MAX (1024 * 1024)

struct out {
	uint8_t buf[OUT_MAX];
	size_t len;
};

static struct out to_client, to_up;

static ssize_t
take(struct out *o, const uint8_t *p, size_t n)
{
	if (n > OUT_MAX - o->len)
		n = OUT_MAX - o->len;
	memcpy(o->buf + o->len, p, n);
	o->len += n;
	return (ssize_t)n;
}

static ssize_t
send_client(void *arg, const uint8_t *p, size_t n)
{
	return take(&to_client, p, n);
}

static ssize_t
send_up(void *arg, const uint8_t *p, size_t n)
{
	return take(&to_up, p, n);
}

static const struct px_h2_edit inject = { "authorization", "Bearer real-from-relay" };

static void
decide(void *arg, const struct px_h2_req *req, struct px_h2_verdict *v)
{
	if (req->path != NULL && strncmp(req->path, "/deny", 5) == 0) {
		v->status = 403;
		v->reason = "path_denied";
		return;
	}
	v->action = PX_H2_FORWARD;
	if (req->path != NULL && strncmp(req->path, "/inject", 7) == 0) {
		v->edits = &inject;
		v->nedits = 1;
		v->edit_set = "test-secret";
	}
}

static void
done(void *arg, const struct px_h2_stream_info *i)
{
	fprintf(stderr, "done %s %s %d up=%" PRIu64 " down=%" PRIu64
	    " reset=%u edits=%s\n", i->method, i->path, i->status, i->bytes_up,
	    i->bytes_down, i->reset, i->edit_set ? i->edit_set : "-");
}

/* Write what O holds to FD; 0, or -1 when the peer is gone. */
static int
drain(int fd, struct out *o)
{
	ssize_t n;

	while (o->len > 0) {
		n = write(fd, o->buf, o->len);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		memmove(o->buf, o->buf + n, o->len - (size_t)n);
		o->len -= (size_t)n;
	}
	return 0;
}

static void
relay(int cfd, uint16_t upport)
{
	struct px_h2_cbs cbs = { send_client, send_up, decide, done };
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct pollfd pfd[2];
	struct px_h2 *h = NULL;
	uint8_t buf[16384];
	int ufd, up_open = 1;
	ssize_t n;

	to_client.len = to_up.len = 0;
	sa.sin_port = htons(upport);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ufd = socket(AF_INET, SOCK_STREAM, 0);
	if (ufd < 0 || connect(ufd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		perror("h2-relay: upstream");
		goto out;
	}
	fcntl(cfd, F_SETFL, O_NONBLOCK);
	fcntl(ufd, F_SETFL, O_NONBLOCK);
	h = px_h2_new(&cbs, NULL);
	if (h == NULL)
		goto out;
	px_h2_flush(h);
	while (!px_h2_over(h)) {
		if (drain(cfd, &to_client) < 0)
			break;
		if (up_open && drain(ufd, &to_up) < 0)
			up_open = 0;
		px_h2_flush(h);
		pfd[0].fd = cfd;
		pfd[0].events = POLLIN | (to_client.len ? POLLOUT : 0);
		pfd[1].fd = up_open ? ufd : -1;
		pfd[1].events = POLLIN | (to_up.len ? POLLOUT : 0);
		if (poll(pfd, 2, 10000) <= 0)
			break;
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			n = read(cfd, buf, sizeof(buf));
			if (n < 0 && errno == EAGAIN)
				continue;
			if (n <= 0)
				break;
			if (px_h2_client_input(h, buf, (size_t)n) != 0)
				fprintf(stderr, "h2-relay: %s\n",
				    px_h2_error(h) ? px_h2_error(h) : "error");
		}
		if (up_open && (pfd[1].revents & (POLLIN | POLLHUP | POLLERR))) {
			n = read(ufd, buf, sizeof(buf));
			if (n < 0 && errno == EAGAIN) {
				continue;
			} else if (n <= 0) {
				up_open = 0;
				px_h2_upstream_eof(h);
			} else if (px_h2_upstream_input(h, buf, (size_t)n) != 0) {
				fprintf(stderr, "h2-relay: %s\n",
				    px_h2_error(h) ? px_h2_error(h) : "error");
			}
		}
	}
	drain(cfd, &to_client);
out:
	px_h2_free(h);
	if (ufd >= 0)
		close(ufd);
	close(cfd);
}

int
main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int lfd, cfd, one = 1;
	long upport;

	if (argc != 2 || (upport = strtol(argv[1], NULL, 10)) <= 0 || upport > 65535) {
		fprintf(stderr, "usage: h2-relay UPSTREAM_PORT\n");
		return 2;
	}
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(lfd, 8) != 0 || getsockname(lfd, (struct sockaddr *)&sa, &len) != 0) {
		perror("h2-relay: listen");
		return 1;
	}
	printf("%u\n", ntohs(sa.sin_port));
	fflush(stdout);
	for (;;) {
		cfd = accept(lfd, NULL, NULL);
		if (cfd < 0)
			continue;
		relay(cfd, (uint16_t)upport);
	}
}
