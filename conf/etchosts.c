/*
 * conf/etchosts.c: does /etc/hosts list a name (see etchosts.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "conf/etchosts.h"

static int
is_sep(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static char
lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* TOK (N bytes) equals NAME without case, one trailing dot allowed. */
static int
same_name(const char *tok, size_t n, const char *name, size_t nlen)
{
	size_t i;

	if (n == nlen + 1 && tok[nlen] == '.')
		n = nlen;
	if (n != nlen)
		return 0;
	for (i = 0; i < n; i++)
		if (lower(tok[i]) != name[i])
			return 0;
	return 1;
}

int
cf_etchosts_lists(const char *text, size_t len, const char *name)
{
	size_t nlen = strlen(name), i = 0;

	if (nlen == 0)
		return 0;
	while (i < len) {
		size_t end = i, tok;
		int field = 0;
		/* One line, up to '\n' or a comment. */
		while (end < len && text[end] != '\n' && text[end] != '#')
			end++;
		while (i < end) {
			while (i < end && is_sep(text[i]))
				i++;
			tok = i;
			while (i < end && !is_sep(text[i]))
				i++;
			if (i == tok)
				break;
			/* Field 0 is the address; the names follow it. */
			if (field++ > 0 && same_name(text + tok, i - tok, name, nlen))
				return 1;
		}
		i = end;
		while (i < len && text[i] != '\n')
			i++;
		if (i < len)
			i++;
	}
	return 0;
}

int
cf_etchosts_file_lists(const char *path, const char *name)
{
	char buf[65536];
	size_t len = 0;
	ssize_t n;
	int fd, found;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return 0;
	while (len < sizeof(buf)) {
		n = read(fd, buf + len, sizeof(buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	found = cf_etchosts_lists(buf, len, name);
	return found;
}
