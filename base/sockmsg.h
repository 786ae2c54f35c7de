/*
 * base/sockmsg.h: the messages between postern-proxy and its socket maker
 * (proxy/core/sockmaker.h), and the rule for the paths the maker serves.
 * A message is one datagram of a fixed size on a SOCK_SEQPACKET pair, its
 * fields in host byte order (both ends are the same binary on the same
 * machine).  The maker treats every request as hostile: it is decoded
 * here with every length and value checked, and nothing else.  libc only.
 */
#ifndef POSTERN_BASE_SOCKMSG_H
#define POSTERN_BASE_SOCKMSG_H

#include <stddef.h>
#include <stdint.h>

/* Room for a path with its NUL: sockaddr_un's sun_path. */
#define BS_SOCKMSG_PATH 108
/* Room for a reason with its NUL. */
#define BS_SOCKMSG_WHY 160

#define BS_SOCKREQ_LEN (7 * 4 + BS_SOCKMSG_PATH)
#define BS_SOCKREP_LEN (8 * 4 + BS_SOCKMSG_WHY)

/* What a request asks. */
enum {
	/* Make missing directories, replace a stale socket, bind, give the
	 * file OWNER, GROUP and MODE, listen(2); the reply carries the
	 * descriptor. */
	BS_SOCK_BIND = 1,
	/* Remove PATH if it is a socket. */
	BS_SOCK_UNLINK = 2,
	/* Give the socket PATH OWNER, GROUP (BS_SOCK_KEEP: unchanged) and
	 * MODE. */
	BS_SOCK_PERMS = 3,
};
#define BS_SOCK_KEEP 0xffffffffu

struct bs_sockreq {
	uint32_t seq;                   /* echoed in the reply */
	uint32_t op;                    /* BS_SOCK_* */
	uint32_t owner, group, mode;    /* mode: 0 to 0777 */
	char path[BS_SOCKMSG_PATH];     /* NUL-terminated */
};

struct bs_sockrep {
	uint32_t seq;
	uint32_t err;                   /* 0, or an errno */
	uint32_t made_dir;              /* BIND: the socket's own directory was made */
	uint32_t uid, gid, mode;        /* the file as it now is (BIND, PERMS) */
	char why[BS_SOCKMSG_WHY];       /* NUL-terminated; "" when err is 0 */
};

/*
 * Whether PATH is absolute and normal: no empty, "." or ".." component
 * (so no "//" and no trailing '/'), not "/" itself, and short enough for
 * sun_path with its NUL.  Returns 0, or -EINVAL with *WHY set to a short
 * reason.
 */
int bs_sockpath_normal(const char *path, const char **why);

/*
 * Whether the maker may touch PATH: it is normal (bs_sockpath_normal())
 * and lies strictly below ROOT (itself normal), with at least one
 * component after it.  Returns 0 or -EINVAL with *WHY set.
 */
int bs_sockpath_under(const char *path, const char *root, const char **why);

/* Encode REQ into BUF (BS_SOCKREQ_LEN bytes).  PATH must be NUL-terminated
 * within its array; the bytes after its NUL are written as zeros. */
void bs_sockreq_encode(const struct bs_sockreq *req, unsigned char *buf);

/*
 * Decode the LEN bytes at BUF into *REQ.  A request is exactly
 * BS_SOCKREQ_LEN bytes with the magic, a known op, a mode of 0 to 0777, a
 * path of 1 to BS_SOCKMSG_PATH - 1 bytes with no NUL, zeros after it, and
 * normal (bs_sockpath_normal()); BIND names both ids.  Returns 0, or
 * -EINVAL with *WHY set (and *REQ unusable).  Where the path lies is the
 * caller's to check (bs_sockpath_under()).
 */
int bs_sockreq_decode(const void *buf, size_t len, struct bs_sockreq *req, const char **why);

void bs_sockrep_encode(const struct bs_sockrep *rep, unsigned char *buf);

/* Decode a reply, checked as a request is.  Returns 0 or -EINVAL. */
int bs_sockrep_decode(const void *buf, size_t len, struct bs_sockrep *rep);

#endif
