/*
 * base/tokenfile.c: the reading of a token file (see tokenfile.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "base/tokenfile.h"

int
bs_token_file_read(const char *path, char *tok, size_t size, size_t *len, int *loose,
    char *why, size_t wsize)
{
	struct stat st;
	size_t got = 0, n;
	ssize_t k;
	int fd, rc;

	*len = 0;
	*loose = 0;
	/* A Kubernetes Secret volume's files are symlinks: followed. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) != 0) {
		rc = -errno;
		snprintf(why, wsize, "cannot read: %s", strerror(-rc));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		snprintf(why, wsize, "not a regular file");
		goto out;
	}
	*loose = (st.st_mode & (S_IRGRP | S_IROTH)) != 0;
	while (got < size) {
		k = read(fd, tok + got, size - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			rc = -errno;
			snprintf(why, wsize, "cannot read: %s", strerror(-rc));
			goto out;
		}
		if (k == 0)
			break;
		got += (size_t)k;
	}
	/* The first line, its end and trailing blanks cut. */
	for (n = 0; n < got && tok[n] != '\n'; n++)
		;
	rc = 0;
	if (n == got && got == size && size > 0) {
		rc = -EFBIG;
		snprintf(why, wsize, "the first line is longer than %zu bytes", size - 1);
	}
	while (n > 0 && (tok[n - 1] == ' ' || tok[n - 1] == '\t' || tok[n - 1] == '\r'))
		n--;
	*len = n;
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

size_t
bs_token_bad(const char *t, size_t len, const char *also)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((unsigned char)t[i] <= 0x20 || (unsigned char)t[i] >= 0x7f ||
		    (also != NULL && strchr(also, t[i]) != NULL))
			break;
	return i;
}
