/*
 * proxy/proto/decider.c: the decider protocol's question and answer (see
 * decider.h), with jansson.  An answer comes from another program: it is
 * bounded, parsed strictly, and its reason is made safe to show.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "base/cursor.h"
#include "proxy/proto/decider.h"

/* S with every byte outside printable ASCII, and '%' itself, as %XX. */
static json_t *
safe_str(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i, n = strlen(s), o = 0;
	json_t *j;
	char *t;

	if ((t = malloc(n * 3 + 1)) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch < 0x20 || ch > 0x7e || ch == '%') {
			t[o++] = '%';
			t[o++] = hex[ch >> 4];
			t[o++] = hex[ch & 15];
		} else {
			t[o++] = (char)ch;
		}
	}
	t[o] = '\0';
	j = json_stringn(t, o);
	free(t);
	return j;
}

/* Set KEY of O to the string S (when not NULL).  0, or -1 out of memory. */
static int
put_str(json_t *o, const char *key, const char *s)
{
	json_t *v;

	if (s == NULL)
		return 0;
	if ((v = safe_str(s)) == NULL)
		return -1;
	return json_object_set_new(o, key, v);
}

/* Set KEY of O to the number N. */
static int
put_int(json_t *o, const char *key, json_int_t n)
{
	json_t *v = json_integer(n);

	return v == NULL ? -1 : json_object_set_new(o, key, v);
}

char *
px_decider_question_json(const struct px_decider_question *q, size_t *len)
{
	json_t *o = json_object(), *r = NULL;
	char *text = NULL, *out;
	int bad = o == NULL;

	bad = bad || put_int(o, "id", (json_int_t)q->id) != 0 ||
	    put_str(o, "session", q->session) != 0 ||
	    (q->uid >= 0 && put_int(o, "uid", q->uid) != 0) ||
	    (q->pid >= 0 && put_int(o, "pid", q->pid) != 0) ||
	    put_str(o, "kind", q->kind) != 0 ||
	    put_str(o, "method", q->method) != 0 ||
	    put_str(o, "host", q->host) != 0 ||
	    put_int(o, "port", q->port) != 0 ||
	    put_str(o, "path", q->path) != 0 ||
	    put_str(o, "sni", q->sni) != 0 ||
	    put_str(o, "allowlist", q->allowed ? "allow" : "deny") != 0 ||
	    put_str(o, "allowlist_reason", q->reason) != 0;
	if (!bad && q->rule_text != NULL) {
		bad = (r = json_object()) == NULL || put_str(r, "text", q->rule_text) != 0 ||
		    put_str(r, "file", q->rule_file) != 0 || put_int(r, "line", q->rule_line) != 0 ||
		    json_object_set(o, "rule", r) != 0;
	}
	if (!bad)
		text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(r);
	json_decref(o);
	if (text == NULL)
		return NULL;
	*len = strlen(text) + 1;
	if ((out = malloc(*len + 1)) != NULL) {
		memcpy(out, text, *len - 1);
		out[*len - 1] = '\n';
		out[*len] = '\0';
	}
	free(text);
	return out;
}

int
px_decider_answer_parse(const char *buf, size_t len, struct px_decider_answer *a,
    const char **why)
{
	json_t *o, *v;
	json_error_t err;
	json_int_t n;
	const char *s;
	size_t i, k;
	int rc = -1;

	memset(a, 0, sizeof(*a));
	*why = NULL;
	if (len > PX_DECIDER_LINE_MAX) {
		*why = "the answer is too long";
		return -1;
	}
	o = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &err);
	if (o == NULL) {
		*why = "the answer is not JSON";
		return -1;
	}
	if (!json_is_object(o)) {
		*why = "the answer is not a JSON object";
		goto out;
	}
	v = json_object_get(o, "id");
	if (!json_is_integer(v) || (n = json_integer_value(v)) < 1) {
		*why = "the answer has no id (an integer from 1)";
		goto out;
	}
	a->id = (uint64_t)n;
	v = json_object_get(o, "decision");
	s = json_is_string(v) ? json_string_value(v) : NULL;
	if (s != NULL && strcmp(s, "allow") == 0 && json_string_length(v) == 5)
		a->allow = 1;
	else if (s != NULL && strcmp(s, "deny") == 0 && json_string_length(v) == 4)
		a->allow = 0;
	else {
		*why = "the answer's decision is neither \"allow\" nor \"deny\"";
		goto out;
	}
	if ((v = json_object_get(o, "reason")) != NULL) {
		if (!json_is_string(v)) {
			*why = "the answer's reason is not a string";
			goto out;
		}
		s = json_string_value(v);
		k = json_string_length(v);
		for (i = 0; i < k && i < PX_DECIDER_REASON_MAX; i++) {
			unsigned char ch = (unsigned char)s[i];
			a->reason[i] = ch >= 0x20 && ch <= 0x7e ? (char)ch : '?';
		}
		a->reason[i] = '\0';
	}
	if ((v = json_object_get(o, "ttl")) != NULL) {
		if (!json_is_integer(v) || (n = json_integer_value(v)) < 0) {
			*why = "the answer's ttl is not an integer from 0";
			goto out;
		}
		a->ttl = n > PX_DECIDER_TTL_MAX ? PX_DECIDER_TTL_MAX : (unsigned)n;
	}
	rc = 0;
out:
	json_decref(o);
	return rc;
}

/* The end of the line starting at P, inside BUF's LEN bytes: the offset
 * of its "\r\n", or LEN when there is none. */
static size_t
line_end(const char *buf, size_t len, size_t p)
{
	size_t i;

	for (i = p; i + 1 < len; i++)
		if (buf[i] == '\r' && buf[i + 1] == '\n')
			return i;
	return len;
}

int
px_decider_http_body(const char *buf, size_t len, int eof, const char **body,
    size_t *body_len, const char **why)
{
	static const char cl[] = "content-length:";
	size_t p, e, head_end = 0, want = (size_t)-1;
	uint64_t v;
	int first = 1;

	*why = NULL;
	if (len > PX_DECIDER_LINE_MAX) {
		*why = "the answer is too long";
		return -1;
	}
	for (p = 0;;) {
		e = line_end(buf, len, p);
		if (e == len) {
			if (eof) {
				*why = "the HTTP answer ended in its head";
				return -1;
			}
			return 0;
		}
		if (first) {
			/* "HTTP/1.x 200[ reason]" */
			if (e - p < 12 || memcmp(buf + p, "HTTP/1.", 7) != 0 || buf[p + 8] != ' ' ||
			    (e - p > 12 && buf[p + 12] != ' ')) {
				*why = "the HTTP answer has a bad status line";
				return -1;
			}
			if (memcmp(buf + p + 9, "200", 3) != 0) {
				*why = "the HTTP answer's status is not 200";
				return -1;
			}
			first = 0;
		} else if (e == p) {
			head_end = e + 2;
			break;
		} else if (e - p > sizeof(cl) - 1 && strncasecmp(buf + p, cl, sizeof(cl) - 1) == 0) {
			size_t a = p + sizeof(cl) - 1, z = e;

			while (a < z && (buf[a] == ' ' || buf[a] == '\t'))
				a++;
			while (z > a && (buf[z - 1] == ' ' || buf[z - 1] == '\t'))
				z--;
			if (want != (size_t)-1 || bs_num_parse(buf + a, z - a, PX_DECIDER_LINE_MAX, 0, &v) != 0) {
				*why = "the HTTP answer has a bad Content-Length";
				return -1;
			}
			want = (size_t)v;
		}
		p = e + 2;
	}
	if (want == (size_t)-1) {
		if (!eof)
			return 0;
		want = len - head_end;
	}
	if (len - head_end < want) {
		if (eof) {
			*why = "the HTTP answer ended before its body";
			return -1;
		}
		return 0;
	}
	*body = buf + head_end;
	*body_len = want;
	return 1;
}
