/*
 * base/reply.c: an HTTP/1.x response head (RFC 9112), parsed for
 * postern's own clients.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "base/cursor.h"
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

/* A byte an X-Postern-Reason value may hold. */
static bool
is_code_byte(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    (ch >= '0' && ch <= '9') || ch == '_';
}

/* Move C to the next CRLF (only CRLF ends a line here).  Returns 1 there,
 * 0 at the end when there is none yet. */
static int
to_crlf(struct bs_cursor *c)
{
	for (;;) {
		bs_cur_skip_until(c, "\r");
		if (bs_cur_peek_at(c, 1) == '\n')
			return 1;
		if (bs_cur_consume(c, 1) < 0)
			return 0;
	}
}

int
bs_reply_parse(const char *buf, size_t len, struct bs_reply *out)
{
	static const char proto[] = "HTTP/1.";
	static const char field[] = "x-postern-reason";
	struct bs_cursor c, v;
	struct bs_reply r;
	size_t line, k;
	int i, ch, rc;

	memset(&r, 0, sizeof(r));
	bs_cur_init(&c, buf, len);
	/* RFC 9112 §4: status-line = HTTP-version SP status-code SP [reason].
	 * Its fixed part (to the byte after the code) decides at once. */
	rc = bs_cur_expect(&c, proto, sizeof(proto) - 1);
	if (rc == -EINVAL)
		return -EINVAL;
	if (rc < 0 || bs_cur_left(&c) < 6)
		return 0;
	ch = bs_cur_peek(&c);
	if (ch < '0' || ch > '9' || bs_cur_peek_at(&c, 1) != ' ')
		return -EINVAL;
	bs_cur_consume(&c, 2);
	for (i = 0; i < 3; i++) {
		ch = bs_cur_peek(&c);
		if (ch < '0' || ch > '9')
			return -EINVAL;
		r.status = r.status * 10 + (ch - '0');
		bs_cur_consume(&c, 1);
	}
	ch = bs_cur_peek(&c);
	if (r.status < 100 || (ch != ' ' && ch != '\r'))
		return -EINVAL;
	/* Line by line to the empty one, the status line first. */
	bs_cur_set_pos(&c, 0);
	for (;;) {
		line = bs_cur_pos(&c);
		if (!to_crlf(&c))
			return 0;
		if (bs_cur_pos(&c) == line)
			break;
		if (line > 0 && field_is(buf + line, bs_cur_pos(&c) - line, field)) {
			/* RFC 9110 §5.5: optional whitespace around the value. */
			bs_cur_init(&v, buf + line, bs_cur_pos(&c) - line);
			bs_cur_consume(&v, sizeof(field) - 1 + 1);	/* NAME ":" */
			bs_cur_skip(&v, " \t");
			for (k = 0; k + 1 < sizeof(r.reason) && is_code_byte(bs_cur_peek(&v)); k++) {
				r.reason[k] = (char)bs_cur_peek(&v);
				bs_cur_consume(&v, 1);
			}
			r.reason[k] = '\0';
		}
		bs_cur_consume(&c, 2);
	}
	r.head_len = bs_cur_pos(&c) + 2;
	*out = r;
	return 1;
}
