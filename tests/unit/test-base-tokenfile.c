/*
 * tests/unit/test-base-tokenfile.c: the reading of a token file
 * (base/tokenfile.h), over files in a temporary directory.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "base/tokenfile.h"
#include "tests/unit/tap.h"

static char dir[] = "/tmp/test-base-tokenfile.XXXXXX";

#define T32 "0123456789abcdefghijklmnopqrstuv"

/* Write LEN bytes of TEXT to DIR/NAME with MODE; its path in a static buffer. */
static const char *
put(const char *name, const char *text, size_t len, mode_t mode)
{
	static char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
		perror(path);
		exit(99);
	}
	fchmod(fd, mode);
	close(fd);
	return path;
}

/* Read PATH into a 64-byte buffer; its return, the line in LINE. */
static int
rd(const char *path, char *line, size_t *len, int *loose, char *why)
{
	char tok[64];
	int rc;

	why[0] = '\0';
	rc = bs_token_file_read(path, tok, sizeof(tok), len, loose, why, 256);
	memcpy(line, tok, *len);
	line[*len] = '\0';
	return rc;
}

int
main(void)
{
	char line[65], why[256], big[80];
	size_t len;
	int loose, rc;

	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 99;
	}

	rc = rd(put("a", T32 "\nsecond line\n", 45, 0600), line, &len, &loose, why);
	tap_cmp_int(rc, "==", 0, "a token file is read");
	tap_cmp_str(line, T32, "only its first line");
	tap_cmp_int(loose, "==", 0, "a 0600 file is not loose");

	rc = rd(put("b", T32 " \t\r\n", 36, 0640), line, &len, &loose, why);
	tap_cmp_int(rc, "==", 0, "CR LF and trailing blanks");
	tap_cmp_str(line, T32, "are cut");
	tap_cmp_int(loose, "==", 1, "a 0640 file is loose");
	rd(put("c", T32, 32, 0604), line, &len, &loose, why);
	tap_cmp_int(loose, "==", 1, "a 0604 file is loose");
	rc = rd(put("d", T32, 32, 0400), line, &len, &loose, why);
	tap_cmp_int(rc, "==", 0, "no line end is needed");
	tap_cmp_str(line, T32, "the whole file is the line");

	memset(big, 'x', sizeof(big));
	rc = rd(put("e", big, 64, 0600), line, &len, &loose, why);
	tap_cmp_int(rc, "==", -EFBIG, "a line filling the buffer is too long");
	tap_cmp_str(why, "the first line is longer than 63 bytes", "and says so");
	tap_cmp_int(len, "==", 64, "the part held is given");
	big[63] = '\n';
	rc = rd(put("f", big, 80, 0600), line, &len, &loose, why);
	tap_cmp_int(rc, "==", 0, "a 63-byte line fits");
	tap_cmp_int(len, "==", 63, "and is whole");

	rc = rd(dir, line, &len, &loose, why);
	tap_cmp_int(rc, "==", -EINVAL, "a directory is refused");
	tap_cmp_str(why, "not a regular file", "and says so");
	put("g", T32, 32, 0600);
	snprintf(big, sizeof(big), "%s/missing", dir);
	rc = rd(big, line, &len, &loose, why);
	tap_cmp_int(rc, "==", -ENOENT, "a missing file is refused");
	tap_cmp_str(why, "cannot read: No such file or directory", "and says so");

	tap_cmp_int(bs_token_bad(T32, 32, ":"), "==", 32, "a token has no bad byte");
	tap_cmp_int(bs_token_bad("ab:cd", 5, ":"), "==", 2, "':' is bad when asked");
	tap_cmp_int(bs_token_bad("ab:cd", 5, NULL), "==", 5, "and only then");
	tap_cmp_int(bs_token_bad("ab cd", 5, NULL), "==", 2, "a blank is bad");
	tap_cmp_int(bs_token_bad("ab\tcd", 5, NULL), "==", 2, "a tab is bad");
	tap_cmp_int(bs_token_bad("abc\x7f", 4, NULL), "==", 3, "DEL is bad");
	tap_cmp_int(bs_token_bad("a\xc3\xa9", 3, NULL), "==", 1, "non-ASCII is bad");
	tap_cmp_int(bs_token_bad("a\0b", 3, NULL), "==", 1, "NUL is bad");

	snprintf(big, sizeof(big), "rm -rf %s", dir);
	if (system(big) != 0)
		tap_diag("cannot remove %s", dir);
	return tap_done();
}
