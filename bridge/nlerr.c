/*
 * bridge/nlerr.c: libnl's error codes as errno (see nlerr.h).
 */
#include "config.h"

#include <errno.h>

#include <netlink/errno.h>

#include "bridge/nlerr.h"

int
br_nlerr(int nle)
{
	switch (nle < 0 ? -nle : nle) {
	case NLE_EXIST:
		return -EEXIST;
	case NLE_PERM:
		return -EPERM;
	case NLE_NOACCESS:
		return -EACCES;
	case NLE_NOMEM:
		return -ENOMEM;
	case NLE_AGAIN:
		return -EAGAIN; /* no answer in time */
	case NLE_AF_NOSUPPORT:
		return -EAFNOSUPPORT;
	case NLE_PROTO_MISMATCH:
		return -EPROTONOSUPPORT; /* no such netlink family in this kernel */
	case NLE_OBJ_NOTFOUND:
		return -ENOENT;
	case NLE_NODEV:
		return -ENODEV;
	case NLE_OPNOTSUPP:
		return -EOPNOTSUPP;
	case NLE_INVAL:
		return -EINVAL;
	case NLE_RANGE:
		return -ERANGE;
	case NLE_MSG_TRUNC:
	case NLE_MSG_TOOSHORT:
		return -EBADMSG;
	case NLE_DUMP_INTR:
		return -EINTR; /* the objects changed while they were dumped */
	default:
		return -EIO;
	}
}
