/*
 * proxy/policy/rtsess.c: the sessions made at run time, and their files in
 * state_dir (see rtsess.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "conf/config.h"
#include "base/filewrite.h"
#include "proxy/policy/rtsess.h"

struct px_rtsess {
	struct cf_extra *v;	/* name and text owned (cast from const) */
	size_t n;
};

struct px_rtsess *
px_rtsess_new(void)
{
	return calloc(1, sizeof(struct px_rtsess));
}

static void
extra_clear(struct cf_extra *e)
{
	free((char *)e->name);
	free((char *)e->text);
}

void
px_rtsess_free(struct px_rtsess *rs)
{
	size_t i;

	if (rs == NULL)
		return;
	for (i = 0; i < rs->n; i++)
		extra_clear(&rs->v[i]);
	free(rs->v);
	free(rs);
}

const struct cf_extra *
px_rtsess_list(const struct px_rtsess *rs, size_t *n)
{
	*n = rs->n;
	return rs->v;
}

int
px_rtsess_find(const struct px_rtsess *rs, const char *name)
{
	size_t i;

	for (i = 0; i < rs->n; i++)
		if (strcmp(rs->v[i].name, name) == 0)
			return (int)i;
	return -1;
}

int
px_rtsess_insert(struct px_rtsess *rs, size_t at, const char *name, const char *text, size_t len)
{
	struct cf_extra *nv;
	char *n, *t;

	if (at > rs->n)
		at = rs->n;
	n = strdup(name);
	t = malloc(len + 1);
	nv = realloc(rs->v, (rs->n + 1) * sizeof(*nv));
	if (nv != NULL)
		rs->v = nv;
	if (n == NULL || t == NULL || nv == NULL) {
		free(n);
		free(t);
		return -ENOMEM;
	}
	memcpy(t, text, len);
	t[len] = '\0';
	memmove(&rs->v[at + 1], &rs->v[at], (rs->n - at) * sizeof(*nv));
	rs->v[at].name = n;
	rs->v[at].text = t;
	rs->v[at].len = len;
	rs->n++;
	return 0;
}

void
px_rtsess_remove(struct px_rtsess *rs, size_t i)
{
	if (i >= rs->n)
		return;
	extra_clear(&rs->v[i]);
	memmove(&rs->v[i], &rs->v[i + 1], (rs->n - i - 1) * sizeof(rs->v[0]));
	rs->n--;
}

int
px_rtsess_name_ok(const char *name)
{
	size_t i, n = strlen(name);

	if (n == 0 || n > 64 || name[0] == '.')
		return 0;
	for (i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
		    (name[i] >= '0' && name[i] <= '9') || name[i] == '-' || name[i] == '_' ||
		    name[i] == '.'))
			return 0;
	return 1;
}

/* STATE_DIR/sessions into OUT; 0 or -ENAMETOOLONG. */
static int
dir_path(const char *state_dir, char *out, size_t size)
{
	if ((size_t)snprintf(out, size, "%s/sessions", state_dir) >= size - 80)
		return -ENAMETOOLONG;
	return 0;
}

/* Nonzero when ST may hold what widens a sandbox: ours, root's or USER's
 * (-1: none), and nobody else may write it. */
static int
trusted_by(const struct stat *st, uid_t user)
{
	return (st->st_uid == geteuid() || st->st_uid == 0 || (user != (uid_t)-1 &&
	    st->st_uid == user)) && (st->st_mode & 022) == 0;
}

static int
trusted(const struct stat *st)
{
	return trusted_by(st, (uid_t)-1);
}

int
px_rtsess_save(const char *state_dir, const char *name, const char *text, size_t len,
    char *why, size_t whysize)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct stat st;
	int rc;

	if (!px_rtsess_name_ok(name)) {
		snprintf(why, whysize, "%s: not a name for a file", name);
		return -EINVAL;
	}
	if (dir_path(state_dir, dir, sizeof(dir)) < 0) {
		snprintf(why, whysize, "%s: path too long", state_dir);
		return -ENAMETOOLONG;
	}
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		rc = -errno;
		snprintf(why, whysize, "cannot make %s: %s", dir, strerror(errno));
		return rc;
	}
	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || !trusted(&st)) {
		snprintf(why, whysize, "%s: not a directory of ours that only we may write", dir);
		return -EPERM;
	}
	snprintf(path, sizeof(path), "%s/%s.ini", dir, name);
	if ((rc = bs_file_replace(path, text, len)) != 0) {
		snprintf(why, whysize, "cannot write %s: %s", path, strerror(-rc));
		return rc;
	}
	return 0;
}

int
px_rtsess_forget(const char *state_dir, const char *name, char *why, size_t whysize)
{
	char dir[PATH_MAX], path[PATH_MAX];
	int rc;

	if (!px_rtsess_name_ok(name) || dir_path(state_dir, dir, sizeof(dir)) < 0) {
		snprintf(why, whysize, "%s: not a name for a file", name);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "%s/%s.ini", dir, name);
	if (unlink(path) != 0 && errno != ENOENT) {
		rc = -errno;
		snprintf(why, whysize, "cannot remove %s: %s", path, strerror(errno));
		return rc;
	}
	return 0;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Read DIR/FILE (NAME.ini) into RS; 0 added, 1 skipped (told), -ENOMEM. */
static int
load_one(struct px_rtsess *rs, const char *dir, const char *file, uid_t user,
    void (*skipped)(void *, const char *, const char *), void *arg)
{
	char name[80], path[PATH_MAX], why[200];
	size_t n = strlen(file) - 4, len = 0;
	struct stat st;
	char *buf = NULL;
	int fd, rc = 1;

	memcpy(name, file, n);
	name[n] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(why, sizeof(why), "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || !trusted_by(&st, user) || st.st_size > PX_RTSESS_MAX_TEXT) {
		snprintf(why, sizeof(why), "%s: %s", path, !S_ISREG(st.st_mode) ? "not a regular file" :
		    !trusted_by(&st, user) ? "owned by another uid, or others may write it" :
		    "larger than 64 KiB");
		goto out;
	}
	if ((buf = malloc((size_t)st.st_size + 1)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (;;) {
		ssize_t r = read(fd, buf + len, (size_t)st.st_size + 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(why, sizeof(why), "%s: %s", path, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if (len > (size_t)st.st_size) {
			snprintf(why, sizeof(why), "%s: changed while being read", path);
			goto out;
		}
	}
	rc = px_rtsess_insert(rs, SIZE_MAX, name, buf, len) == 0 ? 0 : -ENOMEM;
out:
	if (rc == 1 && skipped != NULL)
		skipped(arg, name, why);
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}

int
px_rtsess_load(struct px_rtsess *rs, const char *state_dir, uid_t user,
    void (*skipped)(void *, const char *, const char *), void *arg)
{
	char dir[PATH_MAX];
	struct dirent *de;
	struct stat st;
	char **names = NULL;
	size_t n = 0, i;
	int count = 0, rc;
	DIR *d;

	if (dir_path(state_dir, dir, sizeof(dir)) < 0 || lstat(dir, &st) != 0)
		return 0;
	if (!S_ISDIR(st.st_mode) || !trusted_by(&st, user)) {
		if (skipped != NULL)
			skipped(arg, "*", "the directory is not ours, or others may write it");
		return 0;
	}
	if ((d = opendir(dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		char **nv;

		/* NAME.ini; NAME.ini.tmp is a write under way. */
		if (l <= 4 || strcmp(de->d_name + l - 4, ".ini") != 0)
			continue;
		if ((nv = realloc(names, (n + 1) * sizeof(*nv))) == NULL ||
		    (nv[n] = strdup(de->d_name)) == NULL) {
			if (nv != NULL)
				names = nv;
			count = -ENOMEM;
			goto out;
		}
		names = nv;
		n++;
	}
	if (n > 0)	/* qsort(3) takes no NULL, even for none */
		qsort(names, n, sizeof(*names), name_cmp);
	for (i = 0; i < n; i++) {
		char name[80];
		size_t l = strlen(names[i]) - 4;

		if (l >= sizeof(name) || (memcpy(name, names[i], l), name[l] = '\0',
		    !px_rtsess_name_ok(name))) {
			if (skipped != NULL)
				skipped(arg, names[i], "not a session's name");
			continue;
		}
		if ((rc = load_one(rs, dir, names[i], user, skipped, arg)) < 0) {
			count = rc;
			goto out;
		}
		if (rc == 0)
			count++;
	}
out:
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return count;
}
