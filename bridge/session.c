/*
 * bridge/session.c: the session info the proxy gives the bridge, and the
 * certificate bundle made from it (see session.h for the protocol).  The
 * answer comes from the proxy's socket and is parsed as hostile: through
 * one bounds-checked cursor, no <ctype.h>, no sscanf, every cap checked
 * before anything is copied.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/cursor.h"
#include "base/unix.h"
#include "bridge/forward.h"
#include "bridge/session.h"
#include "bridge/upstream.h"

const char *const br_session_ca_vars[] = {
	"SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE",
	"CURL_CA_BUNDLE", "GIT_SSL_CAINFO", "PIP_CERT", "CARGO_HTTP_CAINFO",
	"AWS_CA_BUNDLE", NULL,
};

struct br_session {
	size_t nenv;
	char **names;
	char **values;
	char *ca;
};

#define VERSION_LINE "postern-session 1"
#define PEM_BEGIN "-----BEGIN CERTIFICATE-----"
#define PEM_END "-----END CERTIFICATE-----"
/* RFC 7468 §2 says 64 per line; be lenient up to this. */
#define PEM_LINE_MAX 128

static bool
name_start(unsigned char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || ch == '_';
}

static bool
name_char(unsigned char ch)
{
	return name_start(ch) || (ch >= '0' && ch <= '9');
}

static bool
b64_char(unsigned char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
	    (ch >= '0' && ch <= '9') || ch == '+' || ch == '/' || ch == '=';
}

static bool
line_is(const unsigned char *p, size_t n, const char *s)
{
	return strlen(s) == n && memcmp(p, s, n) == 0;
}

/*
 * The next line at C: [*P, *P + *N) without its LF, which is consumed.
 * Returns false (nothing consumed) when no LF is left: the body ends in
 * the middle of a line.
 */
static bool
next_line(struct bs_cursor *c, const unsigned char **p, size_t *n)
{
	size_t k;

	bs_cur_tag(c);
	*p = c->data + c->off;
	k = bs_cur_skip_until(c, "\n");
	if (bs_cur_peek(c) != '\n') {
		bs_cur_rollback(c);
		return false;
	}
	c->off++;
	*n = k;
	return true;
}

static char *
dup_bytes(const unsigned char *p, size_t n)
{
	char *s = malloc(n + 1);

	if (s != NULL) {
		memcpy(s, p, n);
		s[n] = '\0';
	}
	return s;
}

/* "env NAME VALUE" after "env ": [P, P+N). */
static int
parse_env(struct br_session *s, const unsigned char *p, size_t n, const char **why)
{
	size_t nl, vl, i;
	const unsigned char *v;

	for (nl = 0; nl < n && p[nl] != ' '; nl++)
		;
	if (nl == 0 || nl > BR_SESSION_NAME_MAX || !name_start(p[0])) {
		*why = "an env line's NAME is not a variable name";
		return -EINVAL;
	}
	for (i = 1; i < nl; i++) {
		if (!name_char(p[i])) {
			*why = "an env line's NAME is not a variable name";
			return -EINVAL;
		}
	}
	if (nl == n) {
		*why = "an env line has no VALUE";
		return -EINVAL;
	}
	v = p + nl + 1;
	vl = n - nl - 1;
	if (vl == 0 || vl > BR_SESSION_VALUE_MAX) {
		*why = "an env line's VALUE is empty or longer than 4096 bytes";
		return -EINVAL;
	}
	for (i = 0; i < vl; i++) {
		/* Printable, no space: one field, nothing a shell or log splits. */
		if (v[i] < 0x21 || v[i] > 0x7e) {
			*why = "an env line's VALUE has a space or a byte outside printable ASCII";
			return -EINVAL;
		}
	}
	for (i = 0; i < s->nenv; i++) {
		if (strlen(s->names[i]) == nl && memcmp(s->names[i], p, nl) == 0) {
			*why = "an env line names a variable given before";
			return -EINVAL;
		}
	}
	if (s->nenv == BR_SESSION_ENV_MAX) {
		*why = "more than 256 env lines";
		return -EINVAL;
	}
	s->names[s->nenv] = dup_bytes(p, nl);
	s->values[s->nenv] = dup_bytes(v, vl);
	if (s->names[s->nenv] == NULL || s->values[s->nenv] == NULL) {
		free(s->names[s->nenv]);
		free(s->values[s->nenv]);
		s->names[s->nenv] = s->values[s->nenv] = NULL;
		return -ENOMEM;
	}
	s->nenv++;
	return 0;
}

/* The rest of the body after "ca": one or more whole certificate blocks. */
static int
parse_pem(struct bs_cursor *c, const char **why)
{
	const unsigned char *p;
	size_t n, i, blocks = 0, lines;

	*why = "the CA after \"ca\" is not whole PEM certificate blocks";
	while (bs_cur_left(c) > 0) {
		if (!next_line(c, &p, &n) || !line_is(p, n, PEM_BEGIN))
			return -EINVAL;
		for (lines = 0;; lines++) {
			if (!next_line(c, &p, &n))
				return -EINVAL;
			if (line_is(p, n, PEM_END))
				break;
			if (n == 0 || n > PEM_LINE_MAX)
				return -EINVAL;
			for (i = 0; i < n; i++)
				if (!b64_char(p[i]))
					return -EINVAL;
		}
		if (lines == 0)
			return -EINVAL;
		if (++blocks > BR_SESSION_CERTS_MAX) {
			*why = "more than 16 certificates after \"ca\"";
			return -EINVAL;
		}
	}
	if (blocks == 0)
		return -EINVAL;
	return 0;
}

int
br_session_parse(const char *body, size_t len, struct br_session **out,
    const char **why)
{
	struct br_session *s;
	struct bs_cursor c;
	const unsigned char *p;
	const char *w = NULL, *dummy;
	size_t n, i, pem_at;
	int err = -ENOMEM;

	if (why == NULL)
		why = &dummy;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		goto out;
	s->names = calloc(BR_SESSION_ENV_MAX, sizeof(*s->names));
	s->values = calloc(BR_SESSION_ENV_MAX, sizeof(*s->values));
	if (s->names == NULL || s->values == NULL)
		goto out;
	err = -EINVAL;
	bs_cur_init(&c, body, len);
	if (!next_line(&c, &p, &n)) {
		w = "the body has no first line";
		goto out;
	}
	if (!line_is(p, n, VERSION_LINE)) {
		w = memchr(p, '\r', n) != NULL ? "a line ends in CR LF (only LF ends a line)" :
		    n > 16 && memcmp(p, "postern-session ", 16) == 0 ?
		    "the body is of a version this bridge does not know" :
		    "the body does not start with \"postern-session 1\"";
		goto out;
	}
	while (bs_cur_left(&c) > 0) {
		if (!next_line(&c, &p, &n)) {
			w = "the body ends in the middle of a line";
			goto out;
		}
		for (i = 0; i < n; i++) {
			if (p[i] < 0x20 || p[i] > 0x7e) {
				w = p[i] == '\r' ? "a line ends in CR LF (only LF ends a line)" :
				    "a line has a byte outside printable ASCII";
				goto out;
			}
		}
		if (line_is(p, n, "ca")) {
			pem_at = c.off;
			err = parse_pem(&c, &w);
			if (err < 0)
				goto out;
			s->ca = dup_bytes(c.data + pem_at, len - pem_at);
			if (s->ca == NULL) {
				err = -ENOMEM;
				goto out;
			}
			break;
		}
		if (n > 4 && memcmp(p, "env ", 4) == 0) {
			err = parse_env(s, p + 4, n - 4, &w);
			if (err < 0)
				goto out;
			err = -EINVAL;
			continue;
		}
		/* A keyword of a newer proxy: skipped, if it is one. */
		if (n == 0 || !(p[0] >= 'a' && p[0] <= 'z')) {
			w = "a line does not start with a keyword";
			goto out;
		}
		for (i = 1; i < n && p[i] != ' '; i++) {
			if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= '0' && p[i] <= '9') ||
			    p[i] == '-')) {
				w = "a line does not start with a keyword";
				goto out;
			}
		}
		if (line_is(p, i, "env") || line_is(p, i, "ca") ||
		    line_is(p, i, "postern-session")) {
			w = "a known keyword's line is malformed";
			goto out;
		}
	}
	err = 0;
	*out = s;
	s = NULL;
out:
	if (err == -EINVAL)
		*why = w;
	br_session_free(s);
	return err;
}

static char
lower(unsigned char ch)
{
	return ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : (char)ch;
}

/* Is the header line [P, P+N) field NAME (lower case)?  Sets *V, *VN to
 * its value without the optional whitespace around it (RFC 9110 §5.5). */
static bool
field(const unsigned char *p, size_t n, const char *name, const unsigned char **v,
    size_t *vn)
{
	size_t k = strlen(name), i;

	if (n <= k || p[k] != ':')
		return false;
	for (i = 0; i < k; i++)
		if (lower(p[i]) != name[i])
			return false;
	i = k + 1;
	while (i < n && (p[i] == ' ' || p[i] == '\t'))
		i++;
	while (n > i && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	*v = p + i;
	*vn = n - i;
	return true;
}

int
br_session_response(const char *buf, size_t len, int *status,
    struct br_session **out, const char **why)
{
	struct bs_reply r;
	struct bs_cursor c;
	const unsigned char *p, *v;
	const char *dummy;
	size_t n, vn;
	uint64_t cl = 0;
	bool have_cl = false;
	int rc;

	if (why == NULL)
		why = &dummy;
	rc = bs_reply_parse(buf, len, &r);
	if (rc < 0) {
		*why = "the answer is not an HTTP response";
		return -EINVAL;
	}
	if (rc == 0) {
		/* Closed before a whole head: no session info, as from a proxy
		 * that does not speak this. */
		*status = 0;
		return 0;
	}
	*status = r.status;
	if (r.status != 200)
		return 0;
	/* The header lines, between the status line and the empty line. */
	bs_cur_init(&c, buf, r.head_len - 2);
	bs_cur_skip_until(&c, "\r");
	c.off += 2;
	while (bs_cur_left(&c) > 0) {
		/* bs_reply_parse() ended each line at CRLF: a bare LF inside
		 * one would split it differently here, so it is refused. */
		p = c.data + c.off;
		n = bs_cur_skip_until(&c, "\r\n");
		if (bs_cur_left(&c) < 2 || c.data[c.off] != '\r' || c.data[c.off + 1] != '\n') {
			*why = "the answer's head has a bare CR or LF";
			return -EINVAL;
		}
		c.off += 2;
		if (field(p, n, "content-length", &v, &vn)) {
			/* RFC 9112 §6.3: more than one is an unrecoverable error. */
			if (have_cl || bs_num_parse((const char *)v, vn,
			    BR_SESSION_RESPONSE_MAX, 0, &cl) < 0) {
				*why = "the 200 answer's Content-Length is missing, repeated or not a number";
				return -EINVAL;
			}
			have_cl = true;
		} else if (field(p, n, "transfer-encoding", &v, &vn)) {
			*why = "the 200 answer has a Transfer-Encoding (the proxy sends a Content-Length)";
			return -EINVAL;
		}
	}
	if (!have_cl) {
		*why = "the 200 answer has no Content-Length";
		return -EINVAL;
	}
	if (len - r.head_len < cl) {
		*why = "the 200 answer's body is cut short";
		return -EINVAL;
	}
	if (len - r.head_len > cl) {
		*why = "the 200 answer has bytes after its body";
		return -EINVAL;
	}
	rc = br_session_parse(buf + r.head_len, (size_t)cl, out, why);
	return rc < 0 ? rc : 1;
}

static long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
br_session_fetch(const char *sock, int timeout_ms, char **bufp, size_t *lenp)
{
	return br_session_get(sock, BR_SESSION_REQUEST, timeout_ms, bufp, lenp);
}

int
br_session_get(const char *sock, const char *request, int timeout_ms, char **bufp,
    size_t *lenp)
{
	size_t reqlen = strlen(request);
	struct br_upstream up;
	const char *why;
	struct timeval tv;
	struct pollfd pfd;
	char *buf = NULL, *nb;
	size_t len = 0, cap = 0, sent = 0;
	long deadline = now_ms() + timeout_ms, left;
	ssize_t k;
	int fd = -1, err;

	err = br_upstream_parse(sock, &up, &why);
	if (err < 0)
		goto out;
	fd = socket(up.ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	/* connect(2) on a UNIX socket waits for room in the backlog at most
	 * this long; every later wait is a poll(2) against the deadline. */
	tv.tv_sec = timeout_ms / 1000;
	tv.tv_usec = (timeout_ms % 1000) * 1000;
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&up.ss, up.len) < 0) {
		err = errno == EINPROGRESS || errno == EAGAIN ? -ETIMEDOUT : -errno;
		goto out;
	}
	/* A tcp: upstream's token first (upstream.h). */
	if ((err = br_upstream_preface(&up, fd)) < 0)
		goto out;
	while (sent < reqlen) {
		k = send(fd, request + sent, reqlen - sent, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			err = errno == EAGAIN ? -ETIMEDOUT : -errno;
			goto out;
		}
		sent += (size_t)k;
	}
	for (;;) {
		left = deadline - now_ms();
		if (left <= 0) {
			err = -ETIMEDOUT;
			goto out;
		}
		pfd.fd = fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto out;
		}
		if (pfd.revents == 0)
			continue;
		if (len == cap) {
			/* The cap is checked before more is buffered. */
			if (cap >= BR_SESSION_RESPONSE_MAX + 1) {
				err = -EFBIG;
				goto out;
			}
			cap = cap ? cap * 2 : 16384;
			if (cap > BR_SESSION_RESPONSE_MAX + 1)
				cap = BR_SESSION_RESPONSE_MAX + 1;
			nb = realloc(buf, cap);
			if (nb == NULL) {
				err = -ENOMEM;
				goto out;
			}
			buf = nb;
		}
		k = recv(fd, buf + len, cap - len, MSG_DONTWAIT);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k < 0) {
			/* A reset after a complete answer is still that answer. */
			if (errno == ECONNRESET && len > 0)
				break;
			err = -errno;
			goto out;
		}
		if (k == 0)
			break;
		len += (size_t)k;
	}
	if (len > BR_SESSION_RESPONSE_MAX) {
		err = -EFBIG;
		goto out;
	}
	*bufp = buf;
	*lenp = len;
	buf = NULL;
	err = 0;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return err;
}

size_t
br_session_nenv(const struct br_session *s)
{
	return s->nenv;
}

void
br_session_env(const struct br_session *s, size_t i, const char **name,
    const char **value)
{
	*name = s->names[i];
	*value = s->values[i];
}

const char *
br_session_ca(const struct br_session *s)
{
	return s->ca;
}

void
br_session_free(struct br_session *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->nenv; i++) {
		free(s->names[i]);
		free(s->values[i]);
	}
	free(s->names);
	free(s->values);
	free(s->ca);
	free(s);
}

static int
write_all(int fd, const char *p, size_t n)
{
	ssize_t k;

	while (n > 0) {
		k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Copy the roots file at PATH to OUT.  Returns 1 when it was copied (with
 * *LAST its last byte), 0 when it cannot be opened as a regular file, or
 * a negative errno when writing failed (or reading failed midway). */
static int
copy_roots(const char *path, int out, char *last)
{
	char buf[65536];
	struct stat st;
	ssize_t k;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return 0;
	/* A FIFO or a device would block or never end. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	for (;;) {
		k = read(fd, buf, sizeof(buf));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			err = -errno;
			break;
		}
		if (k == 0)
			break;
		err = write_all(out, buf, (size_t)k);
		if (err < 0)
			break;
		*last = buf[k - 1];
	}
	close(fd);
	return err < 0 ? err : 1;
}

int
br_bundle_write(const char *roots, const char *tmpdir, const char *ca_pem,
    char *path, size_t size, const char **used)
{
	static const char *const system_roots[] = {
		"/etc/ssl/certs/ca-certificates.crt",  /* Debian, Ubuntu, Alpine, Arch */
		"/etc/pki/tls/certs/ca-bundle.crt",    /* Fedora, RHEL */
		"/etc/ssl/cert.pem",                   /* Alpine's and the BSDs' name */
	};
	char dir[PATH_MAX];
	const char *u = NULL;
	char last = '\n';
	size_t i;
	int dfd = -1, fd = -1, err, rc = 0;
	bool made = false, file = false;

	if (tmpdir == NULL || tmpdir[0] == '\0')
		tmpdir = "/tmp";
	if ((size_t)snprintf(dir, sizeof(dir), "%s/postern-ca.XXXXXX", tmpdir) >= sizeof(dir) ||
	    strlen(dir) + sizeof("/ca-bundle.pem") > size) {
		err = -ENAMETOOLONG;
		goto out;
	}
	if (mkdtemp(dir) == NULL) {
		err = -errno;
		goto out;
	}
	made = true;
	snprintf(path, size, "%s/ca-bundle.pem", dir);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* Readable by every uid in the sandbox, whatever the umask. */
	if (dfd < 0 || fchmod(dfd, 0755) < 0) {
		err = -errno;
		goto out;
	}
	fd = openat(dfd, "ca-bundle.pem",
	    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	file = true;
	if (fchmod(fd, 0644) < 0) {
		err = -errno;
		goto out;
	}
	if (roots != NULL && roots[0] != '\0') {
		rc = copy_roots(roots, fd, &last);
		if (rc < 0) {
			err = rc;
			goto out;
		}
		if (rc == 1)
			u = roots;
	}
	for (i = 0; u == NULL && i < sizeof(system_roots) / sizeof(system_roots[0]); i++) {
		rc = copy_roots(system_roots[i], fd, &last);
		if (rc < 0) {
			err = rc;
			goto out;
		}
		if (rc == 1)
			u = system_roots[i];
	}
	/* PEM blocks must start on a line of their own. */
	if (last != '\n' && (err = write_all(fd, "\n", 1)) < 0)
		goto out;
	err = write_all(fd, ca_pem, strlen(ca_pem));
	if (err < 0)
		goto out;
	err = close(fd) < 0 ? -errno : 0;
	fd = -1;
	if (err < 0)
		goto out;
	*used = u;
out:
	if (fd >= 0)
		close(fd);
	if (err < 0) {
		if (file)
			(void)unlinkat(dfd, "ca-bundle.pem", 0);
		if (made)
			(void)rmdir(dir);
	}
	if (dfd >= 0)
		close(dfd);
	return err;
}

void
br_bundle_remove(const char *path)
{
	char dir[PATH_MAX];
	char *slash;

	if (path == NULL || path[0] == '\0' || strlen(path) >= sizeof(dir))
		return;
	(void)unlink(path);
	memcpy(dir, path, strlen(path) + 1);
	slash = strrchr(dir, '/');
	if (slash != NULL && slash != dir) {
		*slash = '\0';
		(void)rmdir(dir);
	}
}
