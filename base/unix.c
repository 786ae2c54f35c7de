/*
 * base/unix.c: UNIX socket addresses (see unix.h).
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "base/unix.h"

int
bs_unix_addr(struct sockaddr_un *sun, socklen_t *len, const char *path)
{
	size_t plen = strlen(path);

	memset(sun, 0, sizeof(*sun));
	if (plen >= sizeof(sun->sun_path))
		return -ENAMETOOLONG;
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path, path, plen + 1);
	if (len != NULL)
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen + 1);
	return 0;
}
