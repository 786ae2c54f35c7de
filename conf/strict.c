/*
 * conf/strict.c: StrictModes, the check that nobody but root or the
 * proxy's own user could change the config file (see strict.h and
 * cf_config_load() in config.h).
 */
#include "conf/strict.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "conf/build.h"

static int
trusted(const struct cfs_trust *t, uid_t u)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->uid[i] == u)
			return 1;
	return 0;
}

static const char *
who_writes(mode_t m)
{
	return (m & S_IWGRP) && (m & S_IWOTH) ? "its group and by others" :
	    (m & S_IWGRP) ? "its group" : "others";
}

/*
 * Nonzero when PATH is on a read-only mount: nobody can write it through
 * this view, whatever its mode says.  A Kubernetes ConfigMap volume's root
 * is 0777 (the kubelet's emptyDir), mounted read-only into the container;
 * only the kubelet, outside, writes it.  Only directories get this
 * allowance: another, writable mount of the same file system (a volume the
 * agent's container shares) could still write a group- or world-writable
 * file in place, and a ConfigMap's files are 0644 anyway.  What a writable
 * directory would let another uid put there is a file of its own, which
 * the owner check refuses.
 */
static int
read_only_mount(const char *path)
{
	struct statvfs sv;

	return statvfs(path, &sv) == 0 && (sv.f_flag & ST_RDONLY) != 0;
}

/*
 * Check every directory from the one holding FILE (an absolute path with
 * no symlinks) up to /.  The first one holds the file itself; only above
 * it may a sticky root-owned directory be writable by all (/tmp), because
 * there nobody but its owner can rename or remove the entry below.
 */
static void
check_dirs(struct cf_build *b, const char *file, const struct cfs_trust *t)
{
	char dir[PATH_MAX], *slash;
	struct stat st;
	int first = 1;

	if (strlen(file) >= sizeof(dir))
		return;
	strcpy(dir, file);
	for (;;) {
		slash = strrchr(dir, '/');
		if (slash == NULL)
			return;
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (lstat(dir, &st) != 0) {
			cfb_err(b, 0, "cannot check directory %s: %s", dir, strerror(errno));
			return;
		}
		if (!S_ISDIR(st.st_mode)) {
			cfb_err(b, 0, "%s is not a directory", dir);
		} else if (!trusted(t, st.st_uid)) {
			cfb_err(b, 0, "directory %s is owned by uid %u, not by root or the proxy's own "
			    "user: that uid could replace the config and widen the policy",
			    dir, (unsigned)st.st_uid);
		} else if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && read_only_mount(dir)) {
			/* Writable by its mode, but not on this mount. */
		} else if (first && (st.st_mode & S_ISVTX) && (st.st_mode & (S_IWGRP | S_IWOTH))) {
			cfb_err(b, 0, "directory %s is writable by %s (mode %04o, sticky): anyone may "
			    "create the config's name there while it is gone; keep the config in a "
			    "directory that only root may write", dir, who_writes(st.st_mode),
			    (unsigned)(st.st_mode & 07777));
		} else if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 &&
		    !(!first && (st.st_mode & S_ISVTX) && st.st_uid == 0)) {
			cfb_err(b, 0, "directory %s is writable by %s (mode %04o): they could replace "
			    "the config and widen the policy; chmod go-w %s", dir,
			    who_writes(st.st_mode), (unsigned)(st.st_mode & 07777), dir);
		}
		if (strcmp(dir, "/") == 0)
			return;
		first = 0;
	}
}

/* StrictModes for PATH, open with status FST (see cf_config_load()). */
void
cfs_check_modes(struct cf_build *b, const char *path, const struct stat *fst, const struct cfs_trust *t)
{
	char *real = NULL, *pdir = NULL, *rdir = NULL, *slash;
	struct stat st;
	size_t n;

	real = realpath(path, NULL);
	if (real == NULL) {
		cfb_err(b, 0, "cannot resolve: %s", strerror(errno));
		goto out;
	}
	if (stat(real, &st) != 0 || st.st_dev != fst->st_dev || st.st_ino != fst->st_ino) {
		cfb_err(b, 0, "changed while being checked; try again");
		goto out;
	}
	if (!trusted(t, fst->st_uid))
		cfb_err(b, 0, "owned by uid %u, not by root or the proxy's own user: that uid "
		    "could widen the policy; chown it to root", (unsigned)fst->st_uid);
	if ((fst->st_mode & (S_IWGRP | S_IWOTH)) != 0)
		cfb_err(b, 0, "writable by %s (mode %04o): they could widen the policy; chmod go-w %s",
		    who_writes(fst->st_mode), (unsigned)(fst->st_mode & 07777), real);
	check_dirs(b, real, t);
	/* The directory that holds PATH's own entry, when PATH is a symlink
	 * elsewhere (a ConfigMap's postern.ini -> ..data/postern.ini): whoever
	 * may write there may point the link at another file. */
	slash = strrchr(path, '/');
	if (slash == NULL)
		pdir = strdup(".");
	else if (slash == path)
		pdir = strdup("/");
	else
		pdir = strndup(path, (size_t)(slash - path));
	if (pdir == NULL)
		goto out;
	rdir = realpath(pdir, NULL);
	if (rdir == NULL) {
		cfb_err(b, 0, "cannot resolve directory %s: %s", pdir, strerror(errno));
		goto out;
	}
	slash = strrchr(real, '/');
	n = slash == real ? 1 : (size_t)(slash - real);
	if (strlen(rdir) != n || strncmp(rdir, slash == real ? "/" : real, n) != 0) {
		char *f = NULL;
		if (asprintf(&f, "%s/x", strcmp(rdir, "/") == 0 ? "" : rdir) >= 0)
			check_dirs(b, f, t);
		free(f);
	}
out:
	free(real);
	free(pdir);
	free(rdir);
}
