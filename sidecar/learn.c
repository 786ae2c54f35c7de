/*
 * sidecar/learn.c: run --learn, once CMD has exited (see learn.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/config.h"
#include "conf/decide.h"
#include "sidecar/learn.h"
#include "sidecar/log.h"

/* The engine's block is a few lines per item, at most PX_LEARN_MAX items
 * per session: far below this. */
#define SC_LEARN_MAX (4u << 20)

int
sc_learn_open(void)
{
	int fd = memfd_create("postern-learn", MFD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* FD's whole content, NUL-terminated, malloc'd; NULL with errno. */
static char *
slurp(int fd, size_t *lenp)
{
	char *buf = NULL, *nb;
	size_t len = 0, cap = 0;
	ssize_t n;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return NULL;
	for (;;) {
		if (len + 4096 + 1 > cap) {
			if (cap >= SC_LEARN_MAX) {
				free(buf);
				errno = EFBIG;
				return NULL;
			}
			cap = cap ? cap * 2 : 8192;
			if ((nb = realloc(buf, cap)) == NULL) {
				free(buf);
				return NULL;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return NULL;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (buf == NULL && (buf = malloc(1)) == NULL)
		return NULL;
	buf[len] = '\0';
	*lenp = len;
	return buf;
}

/* Does the item of N bytes at P read back as one rule for one host? */
static int
item_ok(const char *p, size_t n)
{
	char item[1024];

	if (n >= sizeof(item) || memchr(p, '\0', n) != NULL)
		return 0;
	memcpy(item, p, n);
	item[n] = '\0';
	return cf_suggest_check(item, CF_MODE_CONNECT, NULL, 0, NULL, 0, -1);
}

/*
 * Is the line at P (LEN bytes, without its newline) one to pass on: a
 * blank line, a section header, a comment whose every --allow '...'
 * passes item_ok(), or "allow_hosts = ITEM" whose ITEM does?  The engine
 * served CMD's requests; whatever it left is checked again here before it
 * becomes a config or a flag a person copies.
 */
static int
keep_line(const char *p, size_t len)
{
	static const char key[] = "allow_hosts = ", flag[] = "--allow '";
	const char *end = p + len, *q;

	if (len == 0)
		return 1;
	if (p[0] == '[')
		return memchr(p, ']', len) == end - 1;
	if (p[0] == '#') {
		for (q = p; (q = memmem(q, (size_t)(end - q), flag, sizeof(flag) - 1)) != NULL; ) {
			const char *close;
			q += sizeof(flag) - 1;
			close = memchr(q, '\'', (size_t)(end - q));
			if (close == NULL || !item_ok(q, (size_t)(close - q)))
				return 0;
			q = close + 1;
		}
		return 1;
	}
	if (len <= sizeof(key) - 1 || strncmp(p, key, sizeof(key) - 1) != 0)
		return 0;
	return item_ok(p + sizeof(key) - 1, len - (sizeof(key) - 1));
}

/*
 * Write to F the lines of BLOCK that keep_line() passes, less a line equal
 * to SKIP (when not NULL); returns how many it left out.
 */
static unsigned
put_block(FILE *f, const char *block, const char *skip)
{
	const char *p = block, *nl;
	unsigned left = 0;

	for (; *p != '\0'; p = nl != NULL ? nl + 1 : p + strlen(p)) {
		size_t len;

		nl = strchr(p, '\n');
		len = nl != NULL ? (size_t)(nl - p) : strlen(p);
		if (skip != NULL && strlen(skip) == len && strncmp(p, skip, len) == 0)
			continue;
		if (!keep_line(p, len)) {
			left++;
			continue;
		}
		fwrite(p, 1, len, f);
		fputc('\n', f);
	}
	return left;
}

/*
 * Write to F the text for CONFIG: the engine's BLOCK as it is, or, for the
 * built-in default (CONFIG NULL), the default's text first and the block's
 * items inside its [defaults] (a section given twice is an error), so that
 * the file is a whole config.  A line that is no comment, section or item
 * that reads back as one rule is left out, and said so.
 */
static void
compose(FILE *f, const char *block, const char *config)
{
	unsigned left;

	if (config != NULL) {
		fprintf(f, "# for %s: add these items to the section below in it\n", config);
		left = put_block(f, block, NULL);
	} else {
		fputs("# the built-in config (postern-sidecar run without -c), and what run --learn learned\n", f);
		fputs(cf_default_text(), f);
		fputc('\n', f);
		/* The built-in text ends in its [defaults]: the items go on
		 * there. */
		left = put_block(f, block, "[defaults]");
	}
	if (left > 0) {
		fprintf(f, "# %u line%s left out: not one rule for one host\n", left, left == 1 ? "" : "s");
		sc_logx("--learn: %u learned line%s left out: not one rule for one host", left,
		    left == 1 ? "" : "s");
	}
}

/* Every "allow_hosts = ITEM" of TEXT that keep_line() passes as --allow
 * flags, on one line. */
static void
flags(FILE *f, const char *text)
{
	static const char key[] = "allow_hosts = ";
	const char *p = text, *nl, *q;
	int n = 0;

	for (; *p != '\0'; p = nl != NULL ? nl + 1 : p + strlen(p)) {
		size_t len;

		nl = strchr(p, '\n');
		len = nl != NULL ? (size_t)(nl - p) : strlen(p);
		if (strncmp(p, key, sizeof(key) - 1) != 0 || !keep_line(p, len))
			continue;
		fputs(n++ == 0 ? "postern: or, as flags:" : "", f);
		fputs(" --allow '", f);
		for (q = p + sizeof(key) - 1; q < p + len; q++) {
			if (*q == '\'')
				fputs("'\\''", f);
			else
				fputc(*q, f);
		}
		fputc('\'', f);
	}
	if (n > 0)
		fputc('\n', f);
}

/* W on F as one shell word: as it is when it holds nothing the shell
 * reads, else in single quotes. */
static void
shell_word(FILE *f, const char *w)
{
	const char *q;

	if (*w != '\0' && strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789/._+,:@%-") == strlen(w)) {
		fputs(w, f);
		return;
	}
	fputc('\'', f);
	for (q = w; *q != '\0'; q++) {
		if (*q == '\'')
			fputs("'\\''", f);
		else
			fputc(*q, f);
	}
	fputc('\'', f);
}

static int
write_file(const char *file, const char *text, size_t len, const char *config)
{
	char tmp[4096];
	struct stat st;
	int fd = -1, err = 0, existed = stat(file, &st) == 0;
	size_t off = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", file, (long)getpid()) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		sc_logerr(err, "--learn: cannot create %s", tmp);
		return err;
	}
	/* 0644 whatever the umask: a config the proxy's user must read. */
	if (fchmod(fd, 0644) < 0)
		err = -errno;
	while (err == 0 && off < len) {
		ssize_t w = write(fd, text + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			err = -errno;
		else
			off += (size_t)w;
	}
	if (err == 0 && fsync(fd) < 0)
		err = -errno;
	if (close(fd) < 0 && err == 0)
		err = -errno;
	/* Renamed into place whole: a proxy watching FILE never reads half. */
	if (err == 0 && rename(tmp, file) < 0)
		err = -errno;
	if (err != 0) {
		sc_logerr(err, "--learn: cannot write %s", file);
		unlink(tmp);
		return err;
	}
	fprintf(stderr, "postern: the learned %s is in %s%s\n", config != NULL ? "block" : "config",
	    file, existed ? " (it replaced the file that was there)" : "");
	/* The file run will read: FILE itself, or CONFIG once the block is
	 * added to it.  Run's own check: postern-proxy --check would hold
	 * the file to its own rules (a listener, StrictModes). */
	if (config != NULL) {
		fputs("postern: add its items to ", stderr);
		shell_word(stderr, config);
		fputc('\n', stderr);
		file = config;
	}
	fputs("postern: check it with: postern-sidecar run --check -c ", stderr);
	shell_word(stderr, file);
	fputs("\npostern: use it with: postern-sidecar run -c ", stderr);
	shell_word(stderr, file);
	fputs(" -- CMD\n", stderr);
	return 0;
}

int
sc_learn_finish(int fd, const char *file, const char *config)
{
	char *block, *text = NULL;
	size_t blen = 0, tlen = 0;
	FILE *f;
	int rc = 0;

	block = slurp(fd, &blen);
	if (block == NULL) {
		rc = -errno;
		sc_logerr(rc, "--learn: cannot read what the proxy engine learned");
		return rc;
	}
	if (blen == 0) {
		sc_logx("--learn: the proxy engine left nothing (did it stop cleanly?)");
		free(block);
		return -ENODATA;
	}
	if ((f = open_memstream(&text, &tlen)) == NULL) {
		free(block);
		return -ENOMEM;
	}
	compose(f, block, config);
	if (fclose(f) != 0) {
		free(text);
		free(block);
		return -ENOMEM;
	}
	if (file != NULL) {
		rc = write_file(file, text, tlen, config);
	} else {
		fputs("postern: learned (report mode): this config block allows what was refused\n", stderr);
		fputs(text, stderr);
		flags(stderr, block);
		fflush(stderr);
	}
	free(text);
	free(block);
	return rc;
}
