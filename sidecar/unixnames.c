/*
 * sidecar/unixnames.c: pathnames from /proc/net/unix (see unixnames.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "sidecar/unixnames.h"

/* The table of a busy desktop is a few hundred KiB; past this we stop
 * reading rather than grow without bound. */
#define SC_UNIXNAMES_MAX (16u << 20)

/* Skip one field of non-space bytes and the single space after it, inside
 * [*p, end).  Returns 0, or -1 when the field is empty or the line ends. */
static int
sc_skip_field(const char **p, const char *end)
{
	const char *q = *p;

	while (q < end && *q == ' ')
		q++;
	if (q == end || *q == '\n')
		return -1;
	while (q < end && *q != ' ' && *q != '\n')
		q++;
	*p = q;
	return 0;
}

int
sc_unixnames_parse(const char *buf, size_t len, sc_unixnames_fn fn, void *arg)
{
	char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
	const char *p = buf, *end = buf + len, *eol, *q;
	size_t n;
	int i, rc;

	/* The header line names the columns; it has no socket. */
	eol = memchr(p, '\n', len);
	if (eol == NULL)
		return 0;
	p = eol + 1;
	while (p < end) {
		eol = memchr(p, '\n', (size_t)(end - p));
		if (eol == NULL)
			eol = end;
		q = p;
		for (i = 0; i < 7; i++)
			if (sc_skip_field(&q, eol) < 0)
				break;
		/* Exactly one space separates the inode from the path, which
		 * runs to the end of the line (it may hold spaces). */
		if (i == 7 && eol - q >= 2 && q[0] == ' ' && q[1] == '/') {
			n = (size_t)(eol - q - 1);
			if (n < sizeof(path) && memchr(q + 1, '\0', n) == NULL) {
				memcpy(path, q + 1, n);
				path[n] = '\0';
				rc = fn(path, n, arg);
				if (rc != 0)
					return rc;
			}
		}
		p = eol + 1;
	}
	return 0;
}

int
sc_unixnames_read(const char *path, sc_unixnames_fn fn, void *arg)
{
	size_t len = 0, cap = 65536;
	char *buf = NULL, *nb;
	ssize_t n;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		if (len == cap || buf == NULL) {
			if (buf != NULL)
				cap *= 2;
			if (cap > SC_UNIXNAMES_MAX) {
				rc = -EFBIG;
				goto out;
			}
			nb = realloc(buf, cap);
			if (nb == NULL) {
				rc = -ENOMEM;
				goto out;
			}
			buf = nb;
		}
		/* cppcheck-suppress nullPointerArithmeticRedundantCheck ; allocated just above */
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	rc = sc_unixnames_parse(buf, len, fn, arg);
out:
	free(buf);
	close(fd);
	return rc;
}
