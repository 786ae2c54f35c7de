/*
 * tests/unit/test-notice.c: proxy/flow/notice.c's refusals file (postern-sidecar
 * run's $POSTERN_REFUSALS): hostile text escaped, each line once, bounded,
 * and what a file already holds counted by an engine started again.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proxy/flow/notice.h"
#include "tests/unit/tap.h"

static const char more[] =
    "postern: more refusals were left out (this file keeps the first ones only)\n";

/* What FD holds, NUL-terminated (static). */
static const char *
contents(int fd)
{
	static char buf[2 * PX_NOTICE_FILE_BYTES];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static size_t
lines(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		n += *s == '\n';
	return n;
}

/* A file as run opens it: read and append. */
static int
file(void)
{
	int fd = memfd_create("refusals", MFD_CLOEXEC);
	if (fd < 0 || fcntl(fd, F_SETFL, O_APPEND) < 0)
		exit(99);
	return fd;
}

int
main(void)
{
	const char *s;
	char big[600];
	struct stat st;
	int fd, i;

	/* No file: told on stderr only, nothing breaks. */
	px_notice_printf("refused CONNECT a.test:443: host_not_allowed (x)");

	fd = file();
	px_notice_file(fd);
	px_notice_printf("refused GET evil.test:80 path /a\x1b]0;t\x07\nb\r\x7f\xff\xc3\xa9\\x0a\tc: "
	    "host_not_allowed (y)");
	s = contents(fd);
	tap_ok(strcmp(s, "postern: refused GET evil.test:80 path /a\\x1b]0;t\\x07\\x0ab\\x0d\\x7f"
	    "\\xff\\xc3\\xa9\\x0a c: host_not_allowed (y)\n") == 0,
	    "control, non-ASCII and newline bytes are escaped, one line: %s", s);
	px_notice_printf("refused GET evil.test:80 path /a\x1b]0;t\x07\nb\r\x7f\xff\xc3\xa9\\x0a\tc: "
	    "host_not_allowed (y)");
	tap_ok(lines(contents(fd)) == 1, "the same refusal again adds no line");

	/* The line bound: 63 refusals and the line saying more were left out. */
	for (i = 0; i < 100; i++)
		px_notice_printf("refused GET h%d.test:80 path /: host_not_allowed (z)", i);
	s = contents(fd);
	tap_ok(lines(s) == PX_NOTICE_FILE_LINES, "at most %d lines (%zu)", PX_NOTICE_FILE_LINES,
	    lines(s));
	tap_ok(strlen(s) > sizeof(more) && strcmp(s + strlen(s) - (sizeof(more) - 1), more) == 0,
	    "the last says more were left out");
	tap_ok(strstr(s, " h61.test:80") != NULL && strstr(s, " h62.test:80") == NULL,
	    "the first ones are kept");

	/* An engine started again goes on with the file: full stays full. */
	px_notice_file(fd);
	px_notice_printf("refused GET later.test:80 path /: host_not_allowed (z)");
	tap_ok(strcmp(contents(fd), s) == 0, "a full file stays as it is after a restart");
	close(fd);

	/* A restart counts the lines there: no repeat of one. */
	fd = file();
	px_notice_file(fd);
	px_notice_printf("refused CONNECT r.test:443: host_not_allowed (r)");
	px_notice_file(fd);
	px_notice_printf("refused CONNECT r.test:443: host_not_allowed (r)");
	px_notice_printf("refused CONNECT q.test:443: host_not_allowed (q)");
	tap_ok(lines(contents(fd)) == 2, "after a restart, a line already there is not repeated");
	close(fd);

	/* The byte bound: long lines fill the file first. */
	fd = file();
	px_notice_file(fd);
	memset(big, 'p', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	for (i = 0; i < 100; i++)
		px_notice_printf("refused GET b%d.test:80 path /%s\x01%s: host_not_allowed", i, big,
		    big);
	s = contents(fd);
	if (fstat(fd, &st) < 0)
		st.st_size = -1;
	tap_ok(st.st_size >= 0 && st.st_size <= PX_NOTICE_FILE_BYTES &&
	    st.st_size > PX_NOTICE_FILE_BYTES - 4200, "at most %d bytes (%lld)", PX_NOTICE_FILE_BYTES,
	    (long long)st.st_size);
	tap_ok(strcmp(s + strlen(s) - (sizeof(more) - 1), more) == 0,
	    "the last line says more were left out");
	tap_ok(strstr(s, "\\x01") != NULL && strchr(s, '\x01') == NULL,
	    "long lines are escaped too");
	close(fd);

	/* Not a regular file: nothing is written. */
	px_notice_file(STDIN_FILENO);
	px_notice_file(-1);
	px_notice_printf("refused CONNECT n.test:443: host_not_allowed (n)");
	tap_ok(1, "no file: no write");
	return tap_done();
}
