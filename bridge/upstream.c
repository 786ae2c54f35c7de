/*
 * bridge/upstream.c: the proxy's address and the token preface (see
 * upstream.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "base/tokenfile.h"
#include "base/unix.h"
#include "bridge/addr.h"
#include "bridge/upstream.h"

#define TOKEN_MIN 32
#define TOKEN_MAX 1100
#define PREFACE_WORD "POSTERN-TOKEN "

/* The preface: the word, the credential, CRLF. */
static char preface[sizeof(PREFACE_WORD) + TOKEN_MAX + 2];
static size_t npreface;

int
br_upstream_parse(const char *spec, struct br_upstream *u, const char **why)
{
	struct sockaddr_un sun;
	socklen_t len;
	int err;

	memset(u, 0, sizeof(*u));
	if (strncmp(spec, "tcp:", 4) == 0) {
		if (br_addr_parse(spec + 4, &u->ss, &u->len, why) < 0)
			return -EINVAL;
		u->tcp = 1;
	} else {
		if (strncmp(spec, "unix:", 5) == 0)
			spec += 5;
		if (spec[0] == '\0') {
			*why = "an empty socket path";
			return -EINVAL;
		}
		if ((err = bs_unix_addr(&sun, &len, spec)) < 0) {
			*why = "the path is too long for a UNIX socket";
			return err;
		}
		memcpy(&u->ss, &sun, sizeof(sun));
		u->len = len;
	}
	snprintf(u->name, sizeof(u->name), "%s", spec);
	return 0;
}

int
br_upstream_token(const char *path, char *why, size_t size)
{
	char buf[TOKEN_MAX + 64];
	size_t n, i;
	int loose, rc = -1;

	/* A first line longer than the buffer is judged on the part read. */
	rc = bs_token_file_read(path, buf, sizeof(buf), &n, &loose, why, size);
	if (rc < 0 && rc != -EFBIG)
		goto out;
	rc = -1;
	if (n < TOKEN_MIN || n > TOKEN_MAX) {
		snprintf(why, size, "the first line is %zu bytes: a token is %d to %d", n, TOKEN_MIN,
		    TOKEN_MAX);
		goto out;
	}
	if ((i = bs_token_bad(buf, n, NULL)) < n) {
		snprintf(why, size, "the token has a blank or a byte other than printable "
		    "ASCII at offset %zu", i);
		goto out;
	}
	memcpy(preface, PREFACE_WORD, sizeof(PREFACE_WORD) - 1);
	memcpy(preface + sizeof(PREFACE_WORD) - 1, buf, n);
	memcpy(preface + sizeof(PREFACE_WORD) - 1 + n, "\r\n", 2);
	npreface = sizeof(PREFACE_WORD) - 1 + n + 2;
	/* What the bridge runs shares its uid: no ptrace, no /proc/PID/mem. */
	(void)prctl(PR_SET_DUMPABLE, 0);
	rc = 0;
out:
	explicit_bzero(buf, sizeof(buf));
	return rc;
}

int
br_upstream_preface(const struct br_upstream *u, int fd)
{
	ssize_t k;

	if (!u->tcp || npreface == 0)
		return 0;
	do
		k = send(fd, preface, npreface, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (k < 0 && errno == EINTR);
	if (k < 0)
		return -errno;
	return (size_t)k == npreface ? 0 : -EIO;
}
