/*
 * base/sockmsg.c: the socket maker's messages and path rule (see
 * sockmsg.h).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "base/sockmsg.h"

#define REQ_MAGIC 0x51534d50u   /* "PMSQ" */
#define REP_MAGIC 0x52534d50u   /* "PMSR" */

int
bs_sockpath_normal(const char *path, const char **why)
{
	const char *p, *c;
	size_t len;

	len = strnlen(path, BS_SOCKMSG_PATH);
	if (len >= BS_SOCKMSG_PATH) {
		*why = "the path does not fit a UNIX socket address";
		return -EINVAL;
	}
	if (path[0] != '/' || len < 2) {
		*why = "the path is not absolute, or is /";
		return -EINVAL;
	}
	/* Each component, from just after its '/': not empty, not ".",
	 * not "..". */
	for (p = path + 1;; p = c + 1) {
		c = strchr(p, '/');
		len = c != NULL ? (size_t)(c - p) : strlen(p);
		if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.')) {
			*why = "the path is not normal (an empty, \".\" or \"..\" component)";
			return -EINVAL;
		}
		if (c == NULL)
			break;
	}
	return 0;
}

int
bs_sockpath_under(const char *path, const char *root, const char **why)
{
	size_t rlen;

	if (bs_sockpath_normal(path, why) < 0)
		return -EINVAL;
	if (bs_sockpath_normal(root, why) < 0) {
		*why = "the socket directory is not a normal absolute path";
		return -EINVAL;
	}
	rlen = strlen(root);
	if (strncmp(path, root, rlen) != 0 || path[rlen] != '/' || path[rlen + 1] == '\0') {
		*why = "the path is not under socket_dir";
		return -EINVAL;
	}
	return 0;
}

static void
put32(unsigned char **p, uint32_t v)
{
	memcpy(*p, &v, 4);
	*p += 4;
}

static uint32_t
get32(const unsigned char **p)
{
	uint32_t v;

	memcpy(&v, *p, 4);
	*p += 4;
	return v;
}

/* Copy the NUL-terminated S (in an array of SIZE) into OUT, zero-padded. */
static void
put_text(unsigned char **p, const char *s, size_t size)
{
	size_t len = strnlen(s, size - 1);

	memset(*p, 0, size);
	memcpy(*p, s, len);
	*p += size;
}

/* Read a text field of SIZE bytes: LEN bytes with no NUL, then only
 * zeros.  Returns 0 or -EINVAL. */
static int
get_text(const unsigned char **p, uint32_t len, char *out, size_t size)
{
	size_t i;

	if (len >= size)
		return -EINVAL;
	for (i = 0; i < size; i++)
		if (((*p)[i] == '\0') != (i >= len))
			return -EINVAL;
	memcpy(out, *p, size);
	*p += size;
	return 0;
}

void
bs_sockreq_encode(const struct bs_sockreq *req, unsigned char *buf)
{
	unsigned char *p = buf;

	put32(&p, REQ_MAGIC);
	put32(&p, req->seq);
	put32(&p, req->op);
	put32(&p, req->owner);
	put32(&p, req->group);
	put32(&p, req->mode);
	put32(&p, (uint32_t)strnlen(req->path, BS_SOCKMSG_PATH - 1));
	put_text(&p, req->path, BS_SOCKMSG_PATH);
}

int
bs_sockreq_decode(const void *buf, size_t len, struct bs_sockreq *req, const char **why)
{
	const unsigned char *p = buf;
	uint32_t plen;

	*why = "the request is not the size of one";
	if (len != BS_SOCKREQ_LEN)
		return -EINVAL;
	*why = "the request has a bad magic";
	if (get32(&p) != REQ_MAGIC)
		return -EINVAL;
	req->seq = get32(&p);
	req->op = get32(&p);
	req->owner = get32(&p);
	req->group = get32(&p);
	req->mode = get32(&p);
	plen = get32(&p);
	*why = "the request has an unknown op";
	if (req->op != BS_SOCK_BIND && req->op != BS_SOCK_UNLINK && req->op != BS_SOCK_PERMS)
		return -EINVAL;
	*why = "the request has a mode beyond 0777";
	if (req->mode > 0777)
		return -EINVAL;
	*why = "a bind request must name the owner and the group";
	if (req->op == BS_SOCK_BIND && (req->owner == BS_SOCK_KEEP || req->group == BS_SOCK_KEEP))
		return -EINVAL;
	*why = "the request's path has a bad length or stray bytes";
	if (plen == 0 || get_text(&p, plen, req->path, sizeof(req->path)) < 0)
		return -EINVAL;
	return bs_sockpath_normal(req->path, why);
}

void
bs_sockrep_encode(const struct bs_sockrep *rep, unsigned char *buf)
{
	unsigned char *p = buf;

	put32(&p, REP_MAGIC);
	put32(&p, rep->seq);
	put32(&p, rep->err);
	put32(&p, rep->made_dir);
	put32(&p, rep->uid);
	put32(&p, rep->gid);
	put32(&p, rep->mode);
	put32(&p, (uint32_t)strnlen(rep->why, BS_SOCKMSG_WHY - 1));
	put_text(&p, rep->why, BS_SOCKMSG_WHY);
}

int
bs_sockrep_decode(const void *buf, size_t len, struct bs_sockrep *rep)
{
	const unsigned char *p = buf;
	uint32_t wlen;

	if (len != BS_SOCKREP_LEN || get32(&p) != REP_MAGIC)
		return -EINVAL;
	rep->seq = get32(&p);
	rep->err = get32(&p);
	rep->made_dir = get32(&p);
	rep->uid = get32(&p);
	rep->gid = get32(&p);
	rep->mode = get32(&p);
	wlen = get32(&p);
	if (rep->made_dir > 1 || rep->mode > 0777 || rep->err > 4095)
		return -EINVAL;
	return get_text(&p, wlen, rep->why, sizeof(rep->why));
}
