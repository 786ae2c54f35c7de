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

/*
 * Write to F the text for CONFIG: the engine's BLOCK as it is, or, for the
 * built-in default (CONFIG NULL), the default's text first and the block's
 * items inside its [defaults] (a section given twice is an error), so that
 * the file is a whole config.
 */
static void
compose(FILE *f, const char *block, const char *config)
{
	static const char hdr[] = "[defaults]\n";
	const char *p = block, *nl;

	if (config != NULL) {
		fprintf(f, "# for %s: add these items to the section below in it\n", config);
		fputs(block, f);
		return;
	}
	fputs("# the built-in config (postern-sidecar run without -c), and what run --learn learned\n", f);
	fputs(cf_default_text(), f);
	fputc('\n', f);
	for (; *p != '\0'; p = nl != NULL ? nl + 1 : p + strlen(p)) {
		nl = strchr(p, '\n');
		/* The built-in text ends in its [defaults]: the items go on
		 * there. */
		if (strncmp(p, hdr, sizeof(hdr) - 1) == 0)
			continue;
		fwrite(p, 1, nl != NULL ? (size_t)(nl - p + 1) : strlen(p), f);
	}
}

/* Every "allow_hosts = ITEM" of TEXT as --allow flags, on one line. */
static void
flags(FILE *f, const char *text)
{
	static const char key[] = "allow_hosts = ";
	const char *p = text, *nl, *q;
	int n = 0;

	for (; *p != '\0'; p = nl != NULL ? nl + 1 : p + strlen(p)) {
		nl = strchr(p, '\n');
		if (strncmp(p, key, sizeof(key) - 1) != 0)
			continue;
		fputs(n++ == 0 ? "postern: or, as flags:" : "", f);
		fputs(" --allow '", f);
		for (q = p + sizeof(key) - 1; q < (nl != NULL ? nl : p + strlen(p)); q++) {
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

static int
write_file(const char *file, const char *text, size_t len)
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
	fprintf(stderr, "postern: the learned config is in %s%s; check it with postern-proxy "
	    "--check -c %s, use it with postern-sidecar run -c %s\n", file,
	    existed ? " (it replaced the file that was there)" : "", file, file);
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
		rc = write_file(file, text, tlen);
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
