/*
 * tests/fuzz/fuzz-sockmsg.c: the socket maker's request and reply decoders
 * and its path rule (base/sockmsg.c).  The maker runs with capabilities
 * and every request comes from the proxy, which it must not trust.
 * Invariants checked: a request or reply accepted encodes back to exactly
 * the input bytes (the decoders accept one spelling of each message); an
 * accepted request has a known op, a mode within 0777, and a normal path
 * that fits sun_path; a path accepted under the root starts with the root
 * and a '/' and holds no ".." component.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/sockmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ROOT "/run/postern"

static void
check_under(const char *path)
{
	const char *why;

	if (bs_sockpath_under(path, ROOT, &why) != 0)
		return;
	if (strncmp(path, ROOT "/", sizeof(ROOT)) != 0 || strstr(path, "/../") != NULL ||
	    strstr(path, "//") != NULL || strlen(path) >= BS_SOCKMSG_PATH)
		abort();
	if (strlen(path) >= 3 && strcmp(path + strlen(path) - 3, "/..") == 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char back[BS_SOCKREQ_LEN > BS_SOCKREP_LEN ? BS_SOCKREQ_LEN : BS_SOCKREP_LEN];
	struct bs_sockreq req;
	struct bs_sockrep rep;
	const char *why = NULL;
	char *buf, *s;

	if (size > 4096)
		return 0;
	/* An exact-size copy, so ASan sees any read past the message. */
	buf = malloc(size ? size : 1);
	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	if (bs_sockreq_decode(buf, size, &req, &why) == 0) {
		if (size != BS_SOCKREQ_LEN || req.mode > 0777 ||
		    (req.op != BS_SOCK_BIND && req.op != BS_SOCK_UNLINK && req.op != BS_SOCK_PERMS) ||
		    memchr(req.path, '\0', sizeof(req.path)) == NULL || req.path[0] != '/')
			abort();
		bs_sockreq_encode(&req, back);
		if (memcmp(back, buf, size) != 0)
			abort();
		check_under(req.path);
	} else if (why == NULL)
		abort();
	if (bs_sockrep_decode(buf, size, &rep) == 0) {
		if (size != BS_SOCKREP_LEN || memchr(rep.why, '\0', sizeof(rep.why)) == NULL)
			abort();
		bs_sockrep_encode(&rep, back);
		if (memcmp(back, buf, size) != 0)
			abort();
	}
	/* The input as a path. */
	if ((s = malloc(size + 1)) != NULL) {
		memcpy(s, data, size);
		s[size] = '\0';
		check_under(s);
		free(s);
	}
	free(buf);
	return 0;
}
