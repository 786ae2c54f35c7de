/*
 * conf/token.c: session tokens (see token.h).
 */
#include "conf/token.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "conf/config.h"

/* More than a token's line: a longer file is refused unread. */
#define TOKEN_FILE_MAX 4096

int
cf_token_ok(const char *t, size_t len)
{
	size_t i;

	if (len < CF_TOKEN_MIN || len > CF_TOKEN_MAX)
		return 0;
	for (i = 0; i < len; i++)
		if ((unsigned char)t[i] <= 0x20 || (unsigned char)t[i] >= 0x7f || t[i] == ':')
			return 0;
	return 1;
}

void
cf_token_digest(const char *t, size_t len, unsigned char md[32])
{
	unsigned int n = 32;

	if (EVP_Digest(t, len, md, &n, EVP_sha256(), NULL) != 1)
		/* Never equal to a real digest's use: refuse all. */
		memset(md, 0xff, 32);
}

int
cf_token_read(const char *path, unsigned char md[32], int *loose, char *why, size_t size)
{
	char buf[TOKEN_FILE_MAX + 1];
	struct stat st;
	size_t len = 0, n, i;
	ssize_t k;
	int fd, rc = -1;

	*loose = 0;
	/* A Kubernetes Secret volume's files are symlinks: followed. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(why, size, "cannot read: %s", strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, size, "not a regular file");
		goto out;
	}
	*loose = (st.st_mode & (S_IRGRP | S_IROTH)) != 0;
	while (len < sizeof(buf)) {
		k = read(fd, buf + len, sizeof(buf) - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			snprintf(why, size, "cannot read: %s", strerror(errno));
			goto out;
		}
		if (k == 0)
			break;
		len += (size_t)k;
	}
	/* The first line, its end and trailing blanks cut. */
	for (n = 0; n < len && buf[n] != '\n'; n++)
		;
	if (n == len && len > TOKEN_FILE_MAX) {
		snprintf(why, size, "the first line is longer than %d bytes", TOKEN_FILE_MAX);
		goto out;
	}
	while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\t' || buf[n - 1] == '\r'))
		n--;
	if (n < CF_TOKEN_MIN) {
		snprintf(why, size, "the token (the file's first line) is %zu bytes, at least %d are "
		    "needed (e.g. head -c 32 /dev/urandom | base64 | tr -d '=+/:')", n, CF_TOKEN_MIN);
		goto out;
	}
	if (n > CF_TOKEN_MAX) {
		snprintf(why, size, "the token is %zu bytes, at most %d", n, CF_TOKEN_MAX);
		goto out;
	}
	for (i = 0; i < n; i++)
		if ((unsigned char)buf[i] <= 0x20 || (unsigned char)buf[i] >= 0x7f || buf[i] == ':')
			break;
	if (i < n) {
		snprintf(why, size, "the token has a byte other than printable ASCII at offset %zu "
		    "(no blanks, no ':', nothing else on the first line)", i);
		goto out;
	}
	cf_token_digest(buf, n, md);
	rc = 0;
out:
	OPENSSL_cleanse(buf, sizeof(buf));
	if (fd >= 0)
		close(fd);
	return rc;
}
