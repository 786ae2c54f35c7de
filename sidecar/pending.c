/*
 * sidecar/pending.c: the pending list and HTTP head parsers (see
 * pending.h), on the shared bounded cursor (base/cursor.h).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "base/cursor.h"
#include "sidecar/pending.h"

#define SC_JSON_DEPTH 16

static void
sc_ws(struct bs_cursor *c)
{
	bs_cur_skip(c, " \t\r\n");
}

static int
sc_take(struct bs_cursor *c, int ch)
{
	sc_ws(c);
	if (bs_cur_peek(c) != ch)
		return -EINVAL;
	c->off++;
	return 0;
}

static int
sc_hex(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/*
 * A JSON string (RFC 8259 §7) at C, copied into OUT (SIZE > 0; NULL: only
 * skipped) as printable ASCII: an escape that stands for anything else,
 * and every byte outside 0x20-0x7e, becomes '?' (a name is shown on a
 * terminal, where an escape sequence would be obeyed).  Truncated to fit:
 * 1 then, else 0.
 */
static int
sc_str(struct bs_cursor *c, char *out, size_t size)
{
	size_t n = 0;
	int ch, k, v, cut = 0;

	if (sc_take(c, '"') < 0)
		return -EINVAL;
	for (;;) {
		ch = bs_cur_peek(c);
		if (ch < 0)
			return -EINVAL;
		c->off++;
		if (ch == '"')
			break;
		if (ch == '\\') {
			ch = bs_cur_peek(c);
			if (ch < 0)
				return -EINVAL;
			c->off++;
			switch (ch) {
			case '"': case '\\': case '/':
				break;
			case 'b': case 'f': case 'n': case 'r': case 't':
				ch = '?';
				break;
			case 'u':
				for (k = 0, v = 0; k < 4; k++) {
					int h = sc_hex(bs_cur_peek(c));
					if (h < 0)
						return -EINVAL;
					c->off++;
					v = v * 16 + h;
				}
				ch = v;
				break;
			default:
				return -EINVAL;
			}
		}
		if (ch < 0x20 || ch > 0x7e)
			ch = '?';
		if (out != NULL && n + 1 < size)
			out[n++] = (char)ch;
		else if (out != NULL)
			cut = 1;
	}
	if (out != NULL)
		out[n] = '\0';
	return cut;
}

static int
sc_num(struct bs_cursor *c, uint64_t *out)
{
	sc_ws(c);
	return bs_cur_num(c, UINT64_MAX / 2, out);
}

/* Skip one value of any type. */
static int
sc_skip(struct bs_cursor *c, int depth)
{
	int ch, first;

	if (depth > SC_JSON_DEPTH)
		return -EINVAL;
	sc_ws(c);
	ch = bs_cur_peek(c);
	if (ch == '"')
		return sc_str(c, NULL, 0);
	if (ch == '{' || ch == '[') {
		int close = ch == '{' ? '}' : ']';
		c->off++;
		for (first = 1;; first = 0) {
			sc_ws(c);
			if (bs_cur_peek(c) == close) {
				c->off++;
				return 0;
			}
			if (!first && sc_take(c, ',') < 0)
				return -EINVAL;
			if (close == '}' && (sc_str(c, NULL, 0) < 0 || sc_take(c, ':') < 0))
				return -EINVAL;
			if (sc_skip(c, depth + 1) < 0)
				return -EINVAL;
		}
	}
	/* A number, true, false or null: the bytes a bare value is made of. */
	if (bs_cur_skip(c, "0123456789+-.eEtruefalsn") == 0)
		return -EINVAL;
	return 0;
}

static int
sc_entry(struct bs_cursor *c, struct sc_pending *p, int *has_id)
{
	char key[32];
	uint64_t v;
	int first, k;

	memset(p, 0, sizeof(*p));
	*has_id = 0;
	if (sc_take(c, '{') < 0)
		return -EINVAL;
	for (first = 1;; first = 0) {
		sc_ws(c);
		if (bs_cur_peek(c) == '}') {
			c->off++;
			return 0;
		}
		if (!first && sc_take(c, ',') < 0)
			return -EINVAL;
		if (sc_str(c, key, sizeof(key)) < 0 || sc_take(c, ':') < 0)
			return -EINVAL;
		sc_ws(c);
		if (bs_cur_peek(c) == '"') {
			char *dst = NULL;
			size_t size = 0;
			if (strcmp(key, "session") == 0)
				dst = p->session, size = sizeof(p->session);
			else if (strcmp(key, "host") == 0)
				dst = p->host, size = sizeof(p->host);
			else if (strcmp(key, "method") == 0)
				dst = p->method, size = sizeof(p->method);
			else if (strcmp(key, "path") == 0)
				dst = p->path, size = sizeof(p->path);
			if ((k = sc_str(c, dst, size)) < 0)
				return -EINVAL;
			if (k > 0 && dst != NULL)
				p->cut = 1;
			continue;
		}
		if (bs_cur_peek(c) >= '0' && bs_cur_peek(c) <= '9') {
			if (sc_num(c, &v) < 0)
				return -EINVAL;
			if (strcmp(key, "id") == 0)
				p->id = v, *has_id = 1;
			else if (strcmp(key, "port") == 0)
				p->port = v <= 65535 ? (unsigned)v : 0;
			else if (strcmp(key, "waiting") == 0)
				p->waiting = v;
			else if (strcmp(key, "path_cut") == 0)
				p->path_cut = v;
			else if (strcmp(key, "expires_in_ms") == 0)
				p->expires_in_ms = v;
			/* A fraction or exponent is not ours to read. */
			if (bs_cur_skip(c, "0123456789.eE+-") > 0 && strcmp(key, "id") == 0)
				*has_id = 0;
			continue;
		}
		if (sc_skip(c, 2) < 0)
			return -EINVAL;
	}
}

int
sc_pending_parse(const char *body, size_t len, struct sc_pending *out, size_t max)
{
	struct bs_cursor c;
	char key[32];
	int first, found = 0, has_id;
	size_t n = 0;

	bs_cur_init(&c, body, len);
	if (sc_take(&c, '{') < 0)
		return -EINVAL;
	for (first = 1;; first = 0) {
		sc_ws(&c);
		if (bs_cur_peek(&c) == '}') {
			c.off++;
			break;
		}
		if (!first && sc_take(&c, ',') < 0)
			return -EINVAL;
		if (sc_str(&c, key, sizeof(key)) < 0 || sc_take(&c, ':') < 0)
			return -EINVAL;
		if (strcmp(key, "pending") != 0 || found) {
			if (sc_skip(&c, 1) < 0)
				return -EINVAL;
			continue;
		}
		found = 1;
		if (sc_take(&c, '[') < 0)
			return -EINVAL;
		for (int efirst = 1;; efirst = 0) {
			struct sc_pending one;
			sc_ws(&c);
			if (bs_cur_peek(&c) == ']') {
				c.off++;
				break;
			}
			if (!efirst && sc_take(&c, ',') < 0)
				return -EINVAL;
			if (sc_entry(&c, &one, &has_id) < 0)
				return -EINVAL;
			if (has_id && n < max)
				out[n++] = one;
		}
	}
	return found ? (int)n : -EINVAL;
}
