/*
 * tests/bench/tls-load.c: the TLS upstream and the keep-alive HTTPS load
 * client of tests/bench/bench-term.sh.  The same client measures every path
 * (direct, a plain tunnel through postern-proxy, postern terminating TLS and
 * injecting a credential, squid with ssl_bump doing the same) against the
 * same server, so that only what is in between differs.  Loopback only.
 *
 *   tls-load serve PORTFILE CERT KEY
 *       Serve HTTP/1.1 over TLS (1.2 or newer; ALPN http/1.1 when offered)
 *       on a free port of 127.0.0.1 with the certificate chain CERT and the
 *       key KEY (PEM), and write the port to PORTFILE.  One thread per
 *       connection, keep-alive:
 *         GET /key       200, the body is the SHA-256 of the request's
 *                        x-api-key header as it arrived (64 lowercase
 *                        hex digits), or "-" when there is none; head
 *                        and body in one TLS record.  A digest, not the
 *                        value: a proxy that overwrites a reflected
 *                        credential leaves it alone, and the answer's
 *                        size is the same whatever the key
 *         GET /key?split the same in two records, head then body, as a
 *                        server that streams its answer sends it
 *         GET /bytes/N   200, N bytes, streamed: the byte 'd' repeated,
 *                        or the first byte of $TLS_LOAD_FILL when that is
 *                        set in the server's environment
 *         POST /sink     reads the Content-Length body, 200 with the
 *                        count as the body
 *         anything else  404 (a body is read and dropped first)
 *
 * Every client command takes PROXY (HOST:PORT of an HTTP proxy, or "-" for
 * a direct connection), ADDR (the upstream's IPv4 literal and port), NAME
 * (its host name: the CONNECT authority NAME:PORT through a proxy, the SNI,
 * the name its certificate is verified for, and the Host field) and CAFILE
 * (the CAs the client trusts, PEM).  Each connection: TCP, CONNECT
 * NAME:PORT when there is a proxy, a TLS handshake verifying the chain and
 * the name, then HTTP/1.1 keep-alive requests.  With TLS_LOAD_KEY set in
 * the environment, every request carries "x-api-key: TLS_LOAD_KEY"; with
 * TLS_LOAD_EXPECT set (the key's SHA-256 in hex), every GET /key answer
 * must be exactly that (so a proxy that was to inject the credential is
 * seen to do it on every request).
 *
 *   tls-load rps|rpssplit PROXY ADDR NAME CAFILE CONNS SECONDS
 *       CONNS connections at once, each sending GET /key (rpssplit: GET
 *       /key?split) and reading the answer in a loop for SECONDS
 *       (connections and handshakes are made before the clock starts);
 *       prints "REQ/S P50 P99 REQUESTS", the latencies in microseconds from
 *       the request's write to its answer's last byte.
 *   tls-load up|down PROXY ADDR NAME CAFILE BYTES MAXSECS
 *       One bulk stream inside TLS on one connection: POST /sink of BYTES
 *       (until the server's count comes back) or GET /bytes/BYTES; prints
 *       "BYTES SECONDS MB/s" (stops early after MAXSECS, counting what was
 *       moved).
 *   tls-load probe PROXY ADDR NAME CAFILE
 *       One GET /key; prints the answer (the SHA-256 of what the upstream
 *       received as x-api-key, or "-").  Exits 1 when the connection, the
 *       CONNECT, the handshake or its verification fails, saying why.
 *
 * Errors go to standard error; a timed command that saw errors still
 * prints its rate but exits 1 (a rate with failures in it is no result).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#define CHUNK 65536
#define LINE_MAX_ 4096
#define KEY_MAX 4096
#define IO_TIMEOUT_S 10

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Digits only, no sign, no trailing bytes, no overflow; -1 otherwise. */
static int
parse_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (n == 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

/* A number from the command line: exits on a bad one. */
static uint64_t
num(const char *s)
{
	uint64_t v;

	if (parse_u64(s, strlen(s), &v) < 0) {
		fprintf(stderr, "tls-load: bad number %s\n", s);
		exit(2);
	}
	return v;
}

/* ASCII case-insensitive prefix test: these bytes come from a socket, so
 * no <ctype.h>. */
static bool
field_is(const char *line, size_t len, const char *name)
{
	size_t n = strlen(name);

	if (len <= n || line[n] != ':')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = line[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != name[i])
			return false;
	}
	return true;
}

/* The value of a header line (after the colon, blanks trimmed). */
static const char *
field_value(const char *line, size_t len, size_t namelen, size_t *vlen)
{
	const char *v = line + namelen + 1, *e = line + len;

	while (v < e && (*v == ' ' || *v == '\t'))
		v++;
	while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	*vlen = (size_t)(e - v);
	return v;
}

static void
ssl_err(const char *what)
{
	unsigned long e = ERR_get_error();
	char buf[256];

	if (e == 0) {
		fprintf(stderr, "tls-load: %s: %s\n", what,
		    errno ? strerror(errno) : "connection closed");
		return;
	}
	ERR_error_string_n(e, buf, sizeof(buf));
	fprintf(stderr, "tls-load: %s: %s\n", what, buf);
	ERR_clear_error();
}

/* ------------------------------------------------------------------ */
/* A buffered reader over one TLS connection                           */

struct rd {
	SSL *ssl;
	char buf[CHUNK];
	size_t off, len;
};

static int
rd_fill(struct rd *r)
{
	int n;

	if (r->off == r->len)
		r->off = r->len = 0;
	if (r->len == sizeof(r->buf)) {
		memmove(r->buf, r->buf + r->off, r->len - r->off);
		r->len -= r->off;
		r->off = 0;
	}
	n = SSL_read(r->ssl, r->buf + r->len, (int)(sizeof(r->buf) - r->len));
	if (n <= 0)
		return -1;
	r->len += (size_t)n;
	return 0;
}

/* One line without its CR LF into LINE (at most MAX - 1 bytes, then
 * terminated); its length, or -1 on EOF, error or a line too long. */
static long
rd_line(struct rd *r, char *line, size_t max)
{
	size_t n = 0;

	for (;;) {
		while (r->off < r->len) {
			char c = r->buf[r->off++];
			if (c == '\n') {
				if (n > 0 && line[n - 1] == '\r')
					n--;
				line[n] = '\0';
				return (long)n;
			}
			if (n + 1 >= max)
				return -1;
			line[n++] = c;
		}
		if (rd_fill(r) < 0)
			return -1;
	}
}

/* Consume N bytes, copying the first DSTSZ of them to DST when DST is not
 * NULL; 0 or -1. */
static int
rd_take(struct rd *r, uint64_t n, char *dst, size_t dstsz)
{
	uint64_t got = 0;

	while (got < n) {
		size_t k;

		if (r->off == r->len && rd_fill(r) < 0)
			return -1;
		k = r->len - r->off;
		if (k > n - got)
			k = (size_t)(n - got);
		if (dst != NULL && got < dstsz) {
			size_t c = k;
			if (c > dstsz - got)
				c = (size_t)(dstsz - got);
			memcpy(dst + got, r->buf + r->off, c);
		}
		r->off += k;
		got += k;
	}
	return 0;
}

static int
write_all(SSL *ssl, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		int w = SSL_write(ssl, c, n > CHUNK ? CHUNK : (int)n);
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static void
timeouts(int fd)
{
	struct timeval tv = { .tv_sec = IO_TIMEOUT_S };
	int one = 1;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* ------------------------------------------------------------------ */
/* The server                                                          */

static SSL_CTX *sctx;
static char filler[CHUNK];

static int
alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
    const unsigned char *in, unsigned inlen, void *arg)
{
	static const unsigned char h1[] = "\x08http/1.1";

	(void)ssl;
	(void)arg;
	if (SSL_select_next_proto((unsigned char **)out, outlen, h1,
	    sizeof(h1) - 1, in, inlen) == OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_OK;
	return SSL_TLSEXT_ERR_NOACK;
}

/* A small answer in one TLS record, head and body together, as servers
 * that buffer their output send it: two records would let Nagle's
 * algorithm on a relay's socket hold the second one for the peer's
 * delayed ACK, and the bench would time that rather than the relay. */
static int
respond(SSL *ssl, int status, const char *body, size_t blen)
{
	char out[256 + KEY_MAX];
	int n = snprintf(out, sizeof(out),
	    "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\n"
	    "Content-Length: %zu\r\n\r\n",
	    status, status == 200 ? "OK" : status == 404 ? "Not Found" :
	    "Bad Request", blen);

	if (blen > sizeof(out) - (size_t)n)
		return -1;
	if (blen > 0)
		memcpy(out + n, body, blen);
	return write_all(ssl, out, (size_t)n + blen);
}

/* One request: 0 to go on, -1 to close. */
static int
serve_one(struct rd *r)
{
	char line[LINE_MAX_], target[LINE_MAX_], key[2 * EVP_MAX_MD_SIZE + 1] = "-";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen;
	uint64_t clen = 0, n;
	bool has_len = false, close_after = false;
	long len;

	if ((len = rd_line(r, line, sizeof(line))) < 0)
		return -1;
	if (len == 0 && (len = rd_line(r, line, sizeof(line))) < 0)
		return -1;	/* one empty line before a request (RFC 9112 §2.2) */
	memcpy(target, line, (size_t)len + 1);
	for (;;) {
		size_t vl;
		const char *v;

		if ((len = rd_line(r, line, sizeof(line))) < 0)
			return -1;
		if (len == 0)
			break;
		if (field_is(line, (size_t)len, "content-length")) {
			v = field_value(line, (size_t)len, 14, &vl);
			if (parse_u64(v, vl, &clen) < 0)
				return respond(r->ssl, 400, NULL, 0), -1;
			has_len = true;
		} else if (field_is(line, (size_t)len, "transfer-encoding")) {
			return respond(r->ssl, 400, NULL, 0), -1;
		} else if (field_is(line, (size_t)len, "x-api-key")) {
			v = field_value(line, (size_t)len, 9, &vl);
			if (EVP_Digest(v, vl, md, &mdlen, EVP_sha256(), NULL) != 1)
				return respond(r->ssl, 400, NULL, 0), -1;
			for (unsigned int i = 0; i < mdlen; i++)
				snprintf(key + 2 * i, 3, "%02x", md[i]);
		} else if (field_is(line, (size_t)len, "connection")) {
			v = field_value(line, (size_t)len, 10, &vl);
			close_after = vl == 5 && memcmp(v, "close", 5) == 0;
		}
	}
	if (strncmp(target, "POST /sink ", 11) == 0) {
		char cnt[32];
		int cl;

		if (!has_len)
			return respond(r->ssl, 400, NULL, 0), -1;
		if (rd_take(r, clen, NULL, 0) < 0)
			return -1;
		cl = snprintf(cnt, sizeof(cnt), "%llu", (unsigned long long)clen);
		if (respond(r->ssl, 200, cnt, (size_t)cl) < 0)
			return -1;
	} else if (has_len && clen > 0) {
		if (rd_take(r, clen, NULL, 0) < 0 ||
		    respond(r->ssl, 404, NULL, 0) < 0)
			return -1;
	} else if (strncmp(target, "GET /key ", 9) == 0) {
		if (respond(r->ssl, 200, key, strlen(key)) < 0)
			return -1;
	} else if (strncmp(target, "GET /key?split ", 15) == 0) {
		char head[128];
		int hl = snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\n"
		    "Content-Type: text/plain\r\nContent-Length: %zu\r\n\r\n",
		    strlen(key));

		if (write_all(r->ssl, head, (size_t)hl) < 0 ||
		    write_all(r->ssl, key, strlen(key)) < 0)
			return -1;
	} else if (strncmp(target, "GET /bytes/", 11) == 0) {
		const char *sp = strchr(target + 11, ' ');
		char head[128];
		int hl;

		if (sp == NULL || parse_u64(target + 11, (size_t)(sp - target - 11), &n) < 0)
			return respond(r->ssl, 400, NULL, 0), -1;
		hl = snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\n"
		    "Content-Type: application/octet-stream\r\n"
		    "Content-Length: %llu\r\n\r\n", (unsigned long long)n);
		if (write_all(r->ssl, head, (size_t)hl) < 0)
			return -1;
		while (n > 0) {
			size_t k = n > CHUNK ? CHUNK : (size_t)n;
			if (write_all(r->ssl, filler, k) < 0)
				return -1;
			n -= k;
		}
	} else if (respond(r->ssl, 404, NULL, 0) < 0) {
		return -1;
	}
	return close_after ? -1 : 0;
}

static void *
serve_conn(void *arg)
{
	int fd = (int)(intptr_t)arg;
	struct rd *r = calloc(1, sizeof(*r));
	SSL *ssl = SSL_new(sctx);

	if (r == NULL || ssl == NULL || SSL_set_fd(ssl, fd) != 1)
		goto out;
	r->ssl = ssl;
	if (SSL_accept(ssl) != 1) {
		ERR_clear_error();
		goto out;
	}
	while (serve_one(r) == 0)
		;
	SSL_shutdown(ssl);
out:
	ERR_clear_error();
	SSL_free(ssl);
	free(r);
	close(fd);
	return NULL;
}

static _Noreturn void
cmd_serve(const char *portfile, const char *cert, const char *key)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	pthread_attr_t attr;
	int lfd, one = 1;
	const char *fill;
	FILE *f;

	fill = getenv("TLS_LOAD_FILL");
	memset(filler, fill != NULL && fill[0] != '\0' ? fill[0] : 'd', sizeof(filler));
	if ((sctx = SSL_CTX_new(TLS_server_method())) == NULL ||
	    SSL_CTX_set_min_proto_version(sctx, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_use_certificate_chain_file(sctx, cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(sctx, key, SSL_FILETYPE_PEM) != 1) {
		ssl_err("server certificate");
		exit(1);
	}
	SSL_CTX_set_alpn_select_cb(sctx, alpn_select, NULL);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((lfd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(lfd, 1024) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &sl) < 0) {
		perror("tls-load: listen");
		exit(1);
	}
	if ((f = fopen(portfile, "w")) == NULL) {
		perror("tls-load: port file");
		exit(1);
	}
	fprintf(f, "%u\n", ntohs(sa.sin_port));
	fclose(f);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (;;) {
		pthread_t t;
		int fd = accept(lfd, NULL, NULL);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED ||
			    errno == EMFILE || errno == ENFILE)
				continue;
			perror("tls-load: accept");
			exit(1);
		}
		timeouts(fd);
		if (pthread_create(&t, &attr, serve_conn, (void *)(intptr_t)fd) != 0)
			close(fd);
	}
}

/* ------------------------------------------------------------------ */
/* The client                                                          */

static struct sockaddr_in g_proxy_sa, g_addr_sa;
static bool g_via_proxy;
static const char *g_name;
static unsigned g_port;
static SSL_CTX *cctx;
static const char *g_key, *g_expect;

static void
parse_addr(const char *s, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	size_t n;

	if (colon == NULL || (n = (size_t)(colon - s)) >= sizeof(host)) {
		fprintf(stderr, "tls-load: bad address %s\n", s);
		exit(2);
	}
	memcpy(host, s, n);
	host[n] = '\0';
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)num(colon + 1));
	if (inet_pton(AF_INET, host, &sa->sin_addr) != 1) {
		fprintf(stderr, "tls-load: %s is not an IPv4 literal\n", host);
		exit(2);
	}
}

static void
setup(const char *proxy, const char *addr, const char *name, const char *cafile)
{
	g_via_proxy = strcmp(proxy, "-") != 0;
	if (g_via_proxy)
		parse_addr(proxy, &g_proxy_sa);
	parse_addr(addr, &g_addr_sa);
	g_port = ntohs(g_addr_sa.sin_port);
	g_name = name;
	g_key = getenv("TLS_LOAD_KEY");
	if (g_key != NULL && g_key[0] == '\0')
		g_key = NULL;	/* empty: send none */
	g_expect = getenv("TLS_LOAD_EXPECT");
	if ((cctx = SSL_CTX_new(TLS_client_method())) == NULL ||
	    SSL_CTX_set_min_proto_version(cctx, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_load_verify_locations(cctx, cafile, NULL) != 1 ||
	    SSL_CTX_set_alpn_protos(cctx, (const unsigned char *)"\x08http/1.1", 9) != 0) {
		ssl_err("client context");
		exit(1);
	}
	SSL_CTX_set_verify(cctx, SSL_VERIFY_PEER, NULL);
}

struct cl {
	int fd;
	SSL *ssl;
	struct rd *r;
};

static void
cl_close(struct cl *c)
{
	if (c->ssl != NULL)
		SSL_free(c->ssl);
	if (c->fd >= 0)
		close(c->fd);
	free(c->r);
	c->ssl = NULL;
	c->r = NULL;
	c->fd = -1;
}

/* A verified TLS connection to the upstream, through the proxy's tunnel
 * when there is one; 0, or -1 with a message. */
static int
cl_open(struct cl *c)
{
	const struct sockaddr_in *sa = g_via_proxy ? &g_proxy_sa : &g_addr_sa;
	long v;

	c->ssl = NULL;
	c->r = NULL;
	if ((c->fd = socket(AF_INET, SOCK_STREAM, 0)) < 0) {
		perror("tls-load: socket");
		return -1;
	}
	timeouts(c->fd);
	if (connect(c->fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0) {
		perror("tls-load: connect");
		goto fail;
	}
	if (g_via_proxy) {
		char req[512], h[4096];
		size_t len = 0;
		int rl = snprintf(req, sizeof(req),
		    "CONNECT %s:%u HTTP/1.1\r\nHost: %s:%u\r\n\r\n",
		    g_name, g_port, g_name, g_port);

		if (write(c->fd, req, (size_t)rl) != rl) {
			perror("tls-load: write CONNECT");
			goto fail;
		}
		/* Byte by byte, so that nothing after the head is consumed. */
		for (;;) {
			if (len == sizeof(h) || read(c->fd, h + len, 1) != 1) {
				fprintf(stderr, "tls-load: CONNECT %s:%u: no answer\n",
				    g_name, g_port);
				goto fail;
			}
			len++;
			if (len >= 4 && memcmp(h + len - 4, "\r\n\r\n", 4) == 0)
				break;
		}
		if (len < 12 || memcmp(h, "HTTP/1.", 7) != 0 ||
		    memcmp(h + 8, " 200", 4) != 0) {
			size_t e = 0;

			while (e < len && e < 60 && h[e] >= ' ' && h[e] <= '~')
				e++;
			fprintf(stderr, "tls-load: CONNECT %s:%u: %.*s\n", g_name,
			    g_port, (int)e, h);
			goto fail;
		}
	}
	if ((c->ssl = SSL_new(cctx)) == NULL || (c->r = calloc(1, sizeof(*c->r))) == NULL ||
	    SSL_set_fd(c->ssl, c->fd) != 1 ||
	    SSL_set_tlsext_host_name(c->ssl, g_name) != 1 ||
	    SSL_set1_host(c->ssl, g_name) != 1) {
		ssl_err("client connection");
		goto fail;
	}
	c->r->ssl = c->ssl;
	if (SSL_connect(c->ssl) != 1) {
		if ((v = SSL_get_verify_result(c->ssl)) != X509_V_OK) {
			fprintf(stderr, "tls-load: handshake: certificate: %s\n",
			    X509_verify_cert_error_string(v));
			ERR_clear_error();
		} else {
			ssl_err("handshake");
		}
		goto fail;
	}
	return 0;
fail:
	cl_close(c);
	return -1;
}

/* Read one response: its status, the first BODYSZ - 1 bytes of its body
 * into BODY (terminated) when BODY is not NULL, and the body's length in
 * *BLEN; -1 on a broken response.  Content-Length and chunked bodies (a
 * proxy may re-frame). */
static int
cl_response(struct cl *c, char *body, size_t bodysz, uint64_t *blen)
{
	char line[LINE_MAX_];
	uint64_t clen = 0;
	bool has_len = false, chunked = false;
	int status;
	long len;

	if ((len = rd_line(c->r, line, sizeof(line))) < 12 ||
	    memcmp(line, "HTTP/1.", 7) != 0 || line[8] != ' ' ||
	    line[9] < '1' || line[9] > '5' || line[10] < '0' || line[10] > '9' ||
	    line[11] < '0' || line[11] > '9')
		return -1;
	status = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
	for (;;) {
		size_t vl;
		const char *v;

		if ((len = rd_line(c->r, line, sizeof(line))) < 0)
			return -1;
		if (len == 0)
			break;
		if (field_is(line, (size_t)len, "content-length")) {
			v = field_value(line, (size_t)len, 14, &vl);
			if (parse_u64(v, vl, &clen) < 0)
				return -1;
			has_len = true;
		} else if (field_is(line, (size_t)len, "transfer-encoding")) {
			v = field_value(line, (size_t)len, 17, &vl);
			chunked = vl == 7 && memcmp(v, "chunked", 7) == 0;
		}
	}
	if (body != NULL)
		body[0] = '\0';
	*blen = 0;
	if (chunked) {
		size_t at = 0;

		for (;;) {
			uint64_t sz = 0;
			size_t room;
			long i;

			if ((len = rd_line(c->r, line, sizeof(line))) <= 0)
				return -1;
			for (i = 0; i < len && line[i] != ';'; i++) {
				char h = line[i];
				int d = h >= '0' && h <= '9' ? h - '0' :
				    h >= 'a' && h <= 'f' ? h - 'a' + 10 :
				    h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
				if (d < 0 || sz > UINT64_MAX >> 4)
					return -1;
				sz = sz << 4 | (uint64_t)d;
			}
			if (sz == 0)
				break;
			room = body != NULL ? bodysz - 1 - at : 0;
			if (rd_take(c->r, sz, body ? body + at : NULL, room) < 0 ||
			    rd_line(c->r, line, sizeof(line)) != 0)
				return -1;
			at += sz < room ? (size_t)sz : room;
			*blen += sz;
		}
		while ((len = rd_line(c->r, line, sizeof(line))) > 0)
			;	/* trailer fields */
		if (len < 0)
			return -1;
		if (body != NULL)
			body[at] = '\0';
		return status;
	}
	if (!has_len)
		return -1;	/* read to EOF: not keep-alive, not for us */
	if (rd_take(c->r, clen, body, body ? bodysz - 1 : 0) < 0)
		return -1;
	if (body != NULL)
		body[clen < bodysz - 1 ? clen : bodysz - 1] = '\0';
	*blen = clen;
	return status;
}

static int
request_head(char *req, size_t reqsz, const char *method, const char *path,
    uint64_t clen)
{
	int n = snprintf(req, reqsz, "%s %s HTTP/1.1\r\nHost: %s:%u\r\n"
	    "User-Agent: tls-load\r\nAccept: */*\r\n", method, path, g_name,
	    g_port);

	if (g_key != NULL)
		n += snprintf(req + n, reqsz - (size_t)n, "x-api-key: %s\r\n", g_key);
	if (clen > 0)
		n += snprintf(req + n, reqsz - (size_t)n,
		    "Content-Length: %llu\r\n", (unsigned long long)clen);
	n += snprintf(req + n, reqsz - (size_t)n, "\r\n");
	if (n <= 0 || (size_t)n >= reqsz) {
		fprintf(stderr, "tls-load: request head too long\n");
		exit(2);
	}
	return n;
}

/* GET /key on C: 0 when the answer is a 200 with the expected body; -1
 * with a message otherwise.  The body goes to OUT when it is not NULL. */
static int
get_key(struct cl *c, const char *req, int rl, char *out, size_t outsz)
{
	char body[KEY_MAX + 2];
	uint64_t blen;
	int st;

	if (write_all(c->ssl, req, (size_t)rl) < 0) {
		ssl_err("write");
		return -1;
	}
	if ((st = cl_response(c, body, sizeof(body), &blen)) < 0) {
		ssl_err("response");
		return -1;
	}
	if (st != 200) {
		fprintf(stderr, "tls-load: GET /key: status %d\n", st);
		return -1;
	}
	if (g_expect != NULL && strcmp(body, g_expect) != 0) {
		fprintf(stderr, "tls-load: GET /key: the upstream received an "
		    "x-api-key of SHA-256 \"%.64s\", not the expected one\n", body);
		return -1;
	}
	if (out != NULL)
		snprintf(out, outsz, "%s", body);
	return 0;
}

static int
cmd_probe(void)
{
	struct cl c;
	char req[KEY_MAX + 512], body[KEY_MAX + 2];
	int rl = request_head(req, sizeof(req), "GET", "/key", 0), rc = 1;

	if (cl_open(&c) < 0)
		return 1;
	if (get_key(&c, req, rl, body, sizeof(body)) == 0) {
		printf("%s\n", body);
		rc = 0;
	}
	SSL_shutdown(c.ssl);
	cl_close(&c);
	return rc;
}

/* rps: one thread per connection. */
struct worker {
	pthread_t t;
	struct cl c;
	double *lat;		/* microseconds, one per request */
	size_t n, cap;
	unsigned long errors;
	bool up;
};

static pthread_barrier_t g_start;
static double g_t0, g_t1;
static char g_req[KEY_MAX + 512];
static int g_reqlen;

static void *
worker_run(void *arg)
{
	struct worker *w = arg;

	w->up = cl_open(&w->c) == 0;
	if (!w->up)
		w->errors++;
	pthread_barrier_wait(&g_start);	/* main sets g_t0, g_t1 */
	pthread_barrier_wait(&g_start);
	while (w->up) {
		double t0 = now(), t1;

		if (t0 >= g_t1)
			break;
		if (get_key(&w->c, g_req, g_reqlen, NULL, 0) < 0) {
			w->errors++;
			break;
		}
		t1 = now();
		if (w->n == w->cap) {
			size_t cap = w->cap ? w->cap * 2 : 4096;
			double *l = realloc(w->lat, cap * sizeof(*l));
			if (l == NULL) {
				w->errors++;
				break;
			}
			w->lat = l;
			w->cap = cap;
		}
		w->lat[w->n++] = (t1 - t0) * 1e6;
	}
	if (w->c.ssl != NULL)
		SSL_shutdown(w->c.ssl);
	cl_close(&w->c);
	return NULL;
}

static int
dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int
cmd_rps(unsigned conns, double secs, bool split)
{
	struct worker *w = calloc(conns, sizeof(*w));
	double *all, el;
	size_t total = 0, at = 0;
	unsigned long errors = 0;

	if (w == NULL || conns == 0) {
		fprintf(stderr, "tls-load: rps: no workers\n");
		return 2;
	}
	g_reqlen = request_head(g_req, sizeof(g_req), "GET",
	    split ? "/key?split" : "/key", 0);
	pthread_barrier_init(&g_start, NULL, conns + 1);
	for (unsigned i = 0; i < conns; i++) {
		w[i].c.fd = -1;
		if (pthread_create(&w[i].t, NULL, worker_run, &w[i]) != 0) {
			perror("tls-load: pthread_create");
			exit(1);
		}
	}
	pthread_barrier_wait(&g_start);
	g_t0 = now();
	g_t1 = g_t0 + secs;
	pthread_barrier_wait(&g_start);
	for (unsigned i = 0; i < conns; i++) {
		pthread_join(w[i].t, NULL);
		total += w[i].n;
		errors += w[i].errors;
	}
	el = now() - g_t0;
	if ((all = malloc((total ? total : 1) * sizeof(*all))) == NULL) {
		perror("tls-load: malloc");
		return 1;
	}
	for (unsigned i = 0; i < conns; i++) {
		memcpy(all + at, w[i].lat, w[i].n * sizeof(*all));
		at += w[i].n;
		free(w[i].lat);
	}
	qsort(all, total, sizeof(*all), dcmp);
	if (total == 0)
		printf("0 - - 0\n");
	else
		printf("%.0f %.0f %.0f %zu\n", total / el, all[(total - 1) / 2],
		    all[(size_t)((double)(total - 1) * 0.99)], total);
	if (errors > 0)
		fprintf(stderr, "tls-load: rps: %lu errors\n", errors);
	free(all);
	free(w);
	return errors > 0 || total == 0 ? 1 : 0;
}

static int
cmd_bulk(bool up, uint64_t bytes, double maxsecs)
{
	static char chunk[CHUNK];
	char req[KEY_MAX + 512], path[64];
	struct cl c;
	uint64_t moved = 0, blen;
	double t0, el;
	bool cut = false;
	int rl, st, rc = 1;

	memset(chunk, 'u', sizeof(chunk));
	if (up)
		rl = request_head(req, sizeof(req), "POST", "/sink", bytes);
	else {
		snprintf(path, sizeof(path), "/bytes/%llu", (unsigned long long)bytes);
		rl = request_head(req, sizeof(req), "GET", path, 0);
	}
	if (cl_open(&c) < 0)
		return 1;
	t0 = now();
	if (write_all(c.ssl, req, (size_t)rl) < 0) {
		ssl_err("write");
		goto out;
	}
	if (up) {
		char body[32];

		while (moved < bytes) {
			size_t k = bytes - moved > CHUNK ? CHUNK : (size_t)(bytes - moved);
			if (write_all(c.ssl, chunk, k) < 0) {
				ssl_err("upload");
				goto out;
			}
			moved += k;
			if (now() - t0 > maxsecs) {
				cut = true;
				break;
			}
		}
		if (!cut) {
			if ((st = cl_response(&c, body, sizeof(body), &blen)) != 200) {
				fprintf(stderr, "tls-load: POST /sink: status %d\n", st);
				goto out;
			}
			if (parse_u64(body, strlen(body), &blen) < 0 || blen != bytes) {
				fprintf(stderr, "tls-load: POST /sink: the upstream counted %s\n", body);
				goto out;
			}
		}
	} else {
		char line[LINE_MAX_];
		long len;
		bool has_len = false;

		if ((len = rd_line(c.r, line, sizeof(line))) < 12 ||
		    memcmp(line + 8, " 200", 4) != 0) {
			fprintf(stderr, "tls-load: GET %s: bad status line\n", path);
			goto out;
		}
		while ((len = rd_line(c.r, line, sizeof(line))) > 0)
			if (field_is(line, (size_t)len, "content-length"))
				has_len = true;
		if (len < 0 || !has_len) {
			fprintf(stderr, "tls-load: GET %s: bad head (no Content-Length)\n", path);
			goto out;
		}
		while (moved < bytes) {
			size_t k;

			if (c.r->off == c.r->len && rd_fill(c.r) < 0) {
				ssl_err("download");
				goto out;
			}
			k = c.r->len - c.r->off;
			if (k > bytes - moved)
				k = (size_t)(bytes - moved);
			c.r->off += k;
			moved += k;
			if (now() - t0 > maxsecs) {
				cut = true;
				break;
			}
		}
	}
	el = now() - t0;
	printf("%llu %.3f %.1f\n", (unsigned long long)moved, el, moved / el / 1e6);
	rc = 0;
out:
	if (!cut && rc == 0)
		SSL_shutdown(c.ssl);
	cl_close(&c);
	return rc;
}

static void
usage(void)
{
	fprintf(stderr,
	    "usage: tls-load serve PORTFILE CERT KEY\n"
	    "       tls-load rps|rpssplit PROXY ADDR NAME CAFILE CONNS SECONDS\n"
	    "       tls-load up|down PROXY ADDR NAME CAFILE BYTES MAXSECS\n"
	    "       tls-load probe PROXY ADDR NAME CAFILE\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2)
		usage();
	if (strcmp(argv[1], "serve") == 0) {
		if (argc != 5)
			usage();
		cmd_serve(argv[2], argv[3], argv[4]);
	}
	if (argc < 6)
		usage();
	setup(argv[2], argv[3], argv[4], argv[5]);
	if (strcmp(argv[1], "probe") == 0 && argc == 6)
		return cmd_probe();
	if (strcmp(argv[1], "rps") == 0 && argc == 8)
		return cmd_rps((unsigned)num(argv[6]), (double)num(argv[7]), false);
	if (strcmp(argv[1], "rpssplit") == 0 && argc == 8)
		return cmd_rps((unsigned)num(argv[6]), (double)num(argv[7]), true);
	if ((strcmp(argv[1], "up") == 0 || strcmp(argv[1], "down") == 0) && argc == 8)
		return cmd_bulk(argv[1][0] == 'u', num(argv[6]), (double)num(argv[7]));
	usage();
	return 2;
}
