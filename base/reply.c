/*
 * base/reply.c: an HTTP/1.x response head (RFC 9112), parsed for
 * postern's own clients.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "base/reply.h"

static char
lower(char ch)
{
	return ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
}

/* Does the line [P, P+LEN) start with field name NAME and a colon? */
static bool
field_is(const char *p, size_t len, const char *name)
{
	size_t n = strlen(name), i;

	if (len <= n || p[n] != ':')
		return false;
	for (i = 0; i < n; i++)
		if (lower(p[i]) != name[i])
			return false;
	return true;
}

int
bs_reply_parse(const char *buf, size_t len, struct bs_reply *out)
{
	static const char proto[] = "HTTP/1.";
	struct bs_reply r;
	size_t i, n, line, end, k;

	memset(&r, 0, sizeof(r));
	/* RFC 9112 §4: status-line = HTTP-version SP status-code SP [reason]. */
	n = len < 7 ? len : 7;
	if (memcmp(buf, proto, n) != 0)
		return -EINVAL;
	if (len < 13)
		return 0;
	if (buf[7] < '0' || buf[7] > '9' || buf[8] != ' ')
		return -EINVAL;
	for (i = 9; i < 12; i++) {
		if (buf[i] < '0' || buf[i] > '9')
			return -EINVAL;
		r.status = r.status * 10 + (buf[i] - '0');
	}
	if (r.status < 100 || (buf[12] != ' ' && buf[12] != '\r'))
		return -EINVAL;
	/* Line by line to the empty one; only CRLF ends a line here. */
	line = 0;
	for (;;) {
		for (end = line; end + 1 < len && !(buf[end] == '\r' && buf[end + 1] == '\n'); end++)
			;
		if (end + 1 >= len)
			return 0;
		if (end == line)
			break;
		if (line > 0 && field_is(buf + line, end - line, "x-postern-reason")) {
			/* RFC 9110 §5.5: optional whitespace around the value. */
			i = line + sizeof("x-postern-reason:") - 1;
			while (i < end && (buf[i] == ' ' || buf[i] == '\t'))
				i++;
			for (k = 0; i < end && k + 1 < sizeof(r.reason); i++, k++) {
				char ch = buf[i];

				if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
				    (ch >= '0' && ch <= '9') || ch == '_'))
					break;
				r.reason[k] = ch;
			}
			r.reason[k] = '\0';
		}
		line = end + 2;
	}
	r.head_len = end + 2;
	*out = r;
	return 1;
}

