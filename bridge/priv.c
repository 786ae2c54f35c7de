/*
 * bridge/priv.c: dropping capabilities, and telling kernel root apart from
 * a namespace's root (see priv.h).  The C library only: no libcap.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/cursor.h"
#include "bridge/priv.h"

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif
/* Capability numbers are below 64 in every kernel that has the v3 ABI. */
#define CAP_PROBE_MAX 63
/* The overflow ids of Linux and of gVisor when procfs does not show them. */
#define OVERFLOW_DEFAULT 65534

/*
 * Files whose owner is kernel uid and gid 0 in every namespace (sysctls
 * of no namespace): the first that exists.  gVisor's procfs has no
 * overflowuid, but has vm/overcommit_memory.
 */
static const char *const root_owned[] = {
	"/proc/sys/kernel/overflowuid",
	"/proc/sys/vm/overcommit_memory",
	NULL
};

/*
 * Read a small /proc file into BUF (NUL-terminated).  Returns the length,
 * or -1 when it cannot be read or does not fit.
 */
static ssize_t
read_small(const char *path, char *buf, size_t size)
{
	ssize_t n, len = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while ((size_t)len < size - 1) {
		n = read(fd, buf + len, size - 1 - (size_t)len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	if ((size_t)len == size - 1)
		return -1;
	buf[len] = '\0';
	return len;
}

/*
 * One decimal number at *P (kernel text: digits only, no sign), skipping
 * leading blanks.  Returns 0 and advances *P, or -EINVAL.
 */
static int
parse_ulong(const char **p, unsigned long *out)
{
	struct bs_cursor c;
	uint64_t v;

	bs_cur_init(&c, *p, strlen(*p));
	bs_cur_skip(&c, " \t");
	if (bs_cur_num(&c, 0xffffffffUL, &v) < 0)
		return -EINVAL;
	*p += c.off;
	*out = (unsigned long)v;
	return 0;
}

int
br_priv_map_outside(const char *map, unsigned long id, unsigned long *out)
{
	unsigned long in, outside, count;
	const char *p = map;

	while (*p != '\0') {
		if (parse_ulong(&p, &in) < 0 || parse_ulong(&p, &outside) < 0 ||
		    parse_ulong(&p, &count) < 0)
			return -EINVAL;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != '\n' && *p != '\0')
			return -EINVAL;
		if (*p == '\n')
			p++;
		if (id >= in && id - in < count) {
			*out = outside + (id - in);
			return 0;
		}
	}
	return -ENOENT;
}

bool
br_priv_is_root(unsigned long id, unsigned long root, unsigned long overflow,
    const char *map)
{
	unsigned long outside;

	/*
	 * Kernel id 0 is mapped into this namespace, as ROOT: ids map one to
	 * one, so ID is kernel 0 exactly when it is ROOT.  This holds however
	 * deeply the namespaces nest (bwrap nests two).
	 */
	if (root != overflow)
		return id == root;
	/*
	 * Kernel id 0 shows as the overflow id: it is unmapped here (or
	 * mapped onto the overflow id itself).  An id that is not the
	 * overflow id is mapped, so it is something else.
	 */
	if (id != overflow)
		return false;
	/*
	 * ID is the overflow id too: it may be unmapped (anything, kernel 0
	 * included) or a real 65534.  Only the map can say, one level up.
	 */
	if (map == NULL || br_priv_map_outside(map, id, &outside) < 0)
		return true;
	return outside == 0;
}

/*
 * The overflow id in FILE (/proc/sys/kernel/overflow[ug]id), or -1.  A
 * procfs without the file (gVisor's) uses the default, which nothing
 * there can change.
 */
static long
read_overflow(const char *file)
{
	char num[32];
	const char *p = num;
	unsigned long v;

	if (read_small(file, num, sizeof(num)) < 0)
		return errno == ENOENT ? OVERFLOW_DEFAULT : -1;
	if (parse_ulong(&p, &v) < 0)
		return -1;
	return (long)v;
}

/*
 * Whether PATH is on a procfs.  gVisor's procfs answers statfs(2) for its
 * root alone (ENOSYS below it): there, /proc stands for PATH.
 */
static bool
on_procfs(const char *path)
{
	struct statfs sfs;

	if (statfs(path, &sfs) < 0 && (errno != ENOSYS || statfs("/proc", &sfs) < 0))
		return false;
	return sfs.f_type == PROC_SUPER_MAGIC;
}

/* Write a reason into WHY (LEN bytes), when there is a WHY. */
__attribute__((format(printf, 3, 4))) static void
say(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (why == NULL || len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

bool
br_priv_kernel_root(char *why, size_t len)
{
	char uidmap[4096], gidmap[4096];
	const char *um, *gm;
	uid_t ruid, euid, suid;
	gid_t rgid, egid, sgid, groups[1024];
	struct stat st;
	long ovu, ovg;
	int n, i, k;

	if (why != NULL && len > 0)
		why[0] = '\0';
	/*
	 * Without procfs the maps cannot be read either: nothing tells a
	 * namespace's root from the host's, so assume the worst.
	 */
	for (k = 0; root_owned[k] != NULL; k++)
		if (stat(root_owned[k], &st) == 0)
			break;
	ovu = read_overflow("/proc/sys/kernel/overflowuid");
	ovg = read_overflow("/proc/sys/kernel/overflowgid");
	if (root_owned[k] == NULL || !on_procfs(root_owned[k]) || ovu < 0 || ovg < 0) {
		say(why, len, "cannot tell whether it would be the host's root: "
		    "no procfs at /proc (mount one)");
		return true;
	}
	if (getresuid(&ruid, &euid, &suid) < 0 || getresgid(&rgid, &egid, &sgid) < 0) {
		say(why, len, "cannot read its own uid and gid: %s", strerror(errno));
		return true;
	}
	um = read_small("/proc/self/uid_map", uidmap, sizeof(uidmap)) < 0 ? NULL : uidmap;
	gm = read_small("/proc/self/gid_map", gidmap, sizeof(gidmap)) < 0 ? NULL : gidmap;
	if (br_priv_is_root(ruid, st.st_uid, (unsigned long)ovu, um) ||
	    br_priv_is_root(euid, st.st_uid, (unsigned long)ovu, um) ||
	    br_priv_is_root(suid, st.st_uid, (unsigned long)ovu, um)) {
		say(why, len, "uid %lu is the host's uid 0 (or cannot be told "
		    "apart from it)", (unsigned long)euid);
		return true;
	}
	if (br_priv_is_root(rgid, st.st_gid, (unsigned long)ovg, gm) ||
	    br_priv_is_root(egid, st.st_gid, (unsigned long)ovg, gm) ||
	    br_priv_is_root(sgid, st.st_gid, (unsigned long)ovg, gm)) {
		say(why, len, "gid %lu is the host's gid 0 (or cannot be told "
		    "apart from it)", (unsigned long)egid);
		return true;
	}
	n = getgroups((int)(sizeof(groups) / sizeof(groups[0])), groups);
	if (n < 0) {
		say(why, len, "cannot read its supplementary groups: %s", strerror(errno));
		return true;
	}
	for (i = 0; i < n; i++) {
		/*
		 * The launcher's groups that this namespace does not map
		 * all show as the overflow gid and cannot be told apart (nor
		 * dropped here: setgroups is denied in such a namespace).
		 * They are the launcher's to clear (setpriv --clear-groups);
		 * kernel gid 0 among them is caught only when it is mapped.
		 */
		if ((unsigned long)groups[i] == (unsigned long)ovg)
			continue;
		if (br_priv_is_root(groups[i], st.st_gid, (unsigned long)ovg, gm)) {
			say(why, len, "supplementary group %lu is the host's gid 0",
			    (unsigned long)groups[i]);
			return true;
		}
	}
	return false;
}

/* The kernel's last capability, or -1 when it cannot be read. */
static int
cap_last(void)
{
	char buf[32];
	const char *p = buf;
	unsigned long v;

	if (read_small("/proc/sys/kernel/cap_last_cap", buf, sizeof(buf)) < 0 ||
	    parse_ulong(&p, &v) < 0 || v > CAP_PROBE_MAX)
		return -1;
	return (int)v;
}

int
br_priv_drop_bounding(int *left)
{
	int last, cap, n = 0;

	/*
	 * Without /proc, probe upwards until the kernel says the number is
	 * no capability.
	 */
	last = cap_last();
	for (cap = 0; cap <= (last >= 0 ? last : CAP_PROBE_MAX); cap++) {
		int in = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);

		if (in < 0 && errno == EINVAL)
			break;
		if (in == 1 && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
			if (errno != EPERM)
				return -errno;
			n++;
		}
	}
	/* EINVAL: a kernel before 4.3 has no ambient set to clear. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 &&
	    errno != EINVAL)
		return -errno;
	if (left != NULL)
		*left = n;
	return 0;
}

int
br_priv_drop(int *bset_left)
{
	struct __user_cap_header_struct hdr;
	struct __user_cap_data_struct data[2];
	int last, cap, left = 0, i, err;

	/* The bounding set first: dropping from it needs CAP_SETPCAP, which
	 * the capset below gives up. */
	err = br_priv_drop_bounding(&left);
	if (err < 0)
		return err;
	last = cap_last();
	memset(&hdr, 0, sizeof(hdr));
	memset(data, 0, sizeof(data));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	hdr.pid = 0;
	if (syscall(SYS_capset, &hdr, data) < 0)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;

	/* Read everything back: a set that is not empty is a failure. */
	memset(&hdr, 0, sizeof(hdr));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	if (syscall(SYS_capget, &hdr, data) < 0)
		return -errno;
	for (i = 0; i < 2; i++)
		if (data[i].effective != 0 || data[i].permitted != 0 ||
		    data[i].inheritable != 0)
			return -EPERM;
	for (cap = 0; cap <= (last >= 0 ? last : CAP_PROBE_MAX); cap++) {
		int in = prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0);

		if (in < 0)
			break;
		if (in != 0)
			return -EPERM;
	}
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return -EPERM;
	if (bset_left != NULL)
		*bset_left = left;
	return 0;
}

/* Write TEXT to the /proc file PATH in one write(2), as id maps want. */
static int
write_small(const char *path, const char *text)
{
	size_t len = strlen(text);
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -EIO;
	close(fd);
	return err;
}

int
br_priv_unroot(bool *moved, bool *mapped)
{
	char uidmap[4096], gidmap[4096], line[64];
	unsigned long uid, gid;
	gid_t egid;
	int err;

	*moved = *mapped = false;
	if (geteuid() != 0 || getuid() != 0)
		return 0;
	egid = getegid();
	if (read_small("/proc/self/uid_map", uidmap, sizeof(uidmap)) < 0 ||
	    read_small("/proc/self/gid_map", gidmap, sizeof(gidmap)) < 0 ||
	    br_priv_map_outside(uidmap, 0, &uid) < 0 ||
	    br_priv_map_outside(gidmap, (unsigned long)egid, &gid) < 0)
		return 0;
	/* The host's root (--allow-root), or a root that is root outside
	 * too: no other identity to become. */
	if (uid == 0 || gid == 0)
		return 0;
	if (unshare(CLONE_NEWUSER) < 0)
		return -errno;
	*moved = true;
	/* A process that is not dumpable sees its own /proc files as the
	 * host root's, and could not write them. */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
		return -errno;
	/* Mapping onto uid 0 outside needs CAP_SETFCAP there when we
	 * unshared (user_namespaces(7)): without it, stay unmapped. */
	snprintf(line, sizeof(line), "%lu 0 1\n", uid);
	err = write_small("/proc/self/uid_map", line);
	if (err == -EPERM)
		return 0;
	if (err < 0)
		return err;
	/* Without CAP_SETGID outside, gid_map is writable only after this. */
	err = write_small("/proc/self/setgroups", "deny\n");
	if (err < 0)
		return err;
	snprintf(line, sizeof(line), "%lu %lu 1\n", gid, (unsigned long)egid);
	err = write_small("/proc/self/gid_map", line);
	if (err < 0)
		return err;
	if ((unsigned long)geteuid() != uid || (unsigned long)getegid() != gid)
		return -EPERM;
	*mapped = true;
	return 0;
}
