/*
 * proxy/proto/ocsf.c: an audit line as an OCSF record (see ocsf.h).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proxy/proto/ocsf.h"

#define FIELDS_MAX 64

/* One field of the flat line: its key and its value as written (a string
 * with its quotes, still escaped). */
struct field {
	const char *key, *val;
	size_t klen, vlen;
	int is_str, used;
};

struct rec {
	struct field f[FIELDS_MAX];
	size_t n;
};

/* The fields of LINE; -1 when it is not a flat object. */
static int
split(const char *p, const char *end, struct rec *r)
{
	r->n = 0;
	if (p == end || *p++ != '{')
		return -1;
	while (p < end && *p != '}') {
		struct field *f;

		if (r->n == FIELDS_MAX || (r->n > 0 && *p++ != ','))
			return -1;
		f = &r->f[r->n++];
		memset(f, 0, sizeof(*f));
		if (p == end || *p++ != '"')
			return -1;
		f->key = p;
		while (p < end && *p != '"')
			p++;
		if (p == end)
			return -1;
		f->klen = (size_t)(p - f->key);
		p++;
		if (p == end || *p++ != ':')
			return -1;
		f->val = p;
		if (p < end && *p == '"') {
			f->is_str = 1;
			for (p++; p < end && *p != '"'; p++)
				if (*p == '\\' && ++p == end)
					return -1;
			if (p == end)
				return -1;
			p++;
		} else {
			/* A number, null, true or false: nothing nested. */
			while (p < end && ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
			    *p == '-' || *p == '.' || *p == '+'))
				p++;
		}
		f->vlen = (size_t)(p - f->val);
		if (f->vlen == 0)
			return -1;
	}
	return p + 1 == end && *p == '}' ? 0 : -1;
}

static struct field *
get(struct rec *r, const char *key)
{
	size_t i, n = strlen(key);

	for (i = 0; i < r->n; i++)
		if (r->f[i].klen == n && memcmp(r->f[i].key, key, n) == 0)
			return &r->f[i];
	return NULL;
}

/* A string field's text without its quotes, when it needs no unescaping. */
static int
str_is(const struct field *f, const char *s)
{
	size_t n = strlen(s);

	return f != NULL && f->is_str && f->vlen == n + 2 && memcmp(f->val + 1, s, n) == 0;
}

struct out {
	char *p;
	size_t len, size;
	int over;
};

static void
put(struct out *o, const char *s, size_t n)
{
	if (o->over || o->len + n > o->size) {
		o->over = 1;
		return;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
}

static void
puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static void
putnum(struct out *o, long long v)
{
	char n[24];
	int k = snprintf(n, sizeof(n), "%lld", v);

	put(o, n, (size_t)k);
}

/* ,"KEY":VALUE as the line had it; the field is then used. */
static void
copy(struct out *o, struct field *f, const char *key, int *first)
{
	if (f == NULL)
		return;
	if (!*first)
		put(o, ",", 1);
	*first = 0;
	put(o, "\"", 1);
	puts_(o, key);
	put(o, "\":", 2);
	put(o, f->val, f->vlen);
	f->used = 1;
}

/* YYYY-MM-DDTHH:MM:SS.mmmZ in quotes, as milliseconds since 1970. */
static int
time_ms(const struct field *f, long long *ms)
{
	const char *s;
	struct tm tm;
	int i;

	if (f == NULL || !f->is_str || f->vlen != 26)
		return -1;
	s = f->val + 1;
	for (i = 0; i < 23; i++)
		if ((i == 4 || i == 7) ? s[i] != '-' : i == 10 ? s[i] != 'T' :
		    (i == 13 || i == 16) ? s[i] != ':' : i == 19 ? s[i] != '.' :
		    (s[i] < '0' || s[i] > '9'))
			return -1;
	if (s[23] != 'Z')
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = atoi(s) - 1900;
	tm.tm_mon = atoi(s + 5) - 1;
	tm.tm_mday = atoi(s + 8);
	tm.tm_hour = atoi(s + 11);
	tm.tm_min = atoi(s + 14);
	tm.tm_sec = atoi(s + 17);
	*ms = (long long)timegm(&tm) * 1000 + atoi(s + 20);
	return 0;
}

/* The OCSF HTTP Activity's activity for a method. */
static int
http_activity(const struct field *m, const char **name)
{
	static const struct { const char *m; int id; } t[] = {
		{ "CONNECT", 1 }, { "DELETE", 2 }, { "GET", 3 }, { "HEAD", 4 }, { "OPTIONS", 5 },
		{ "POST", 6 }, { "PUT", 7 }, { "TRACE", 8 },
	};
	static const char *const names[] = { "Unknown", "Connect", "Delete", "Get", "Head", "Options",
		"Post", "Put", "Trace" };
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (str_is(m, t[i].m)) {
			*name = names[t[i].id];
			return t[i].id;
		}
	*name = "Other";
	return 99;
}

/* "ADDR:PORT" or "[ADDR]:PORT" of a peer into {"ip":..,"port":..}; other
 * peers (a UNIX socket's) by name. */
static void
endpoint_peer(struct out *o, struct field *f)
{
	const char *s, *colon, *end;
	size_t i;

	if (f == NULL || !f->is_str)
		return;
	s = f->val + 1;
	end = f->val + f->vlen - 1;
	colon = NULL;
	for (i = 0; s + i < end; i++)
		if (s[i] == ':')
			colon = s + i;
	if (colon != NULL && colon + 1 < end && strncmp(s, "unix:", 5) != 0) {
		const char *a = s, *ae = colon;
		const char *q;

		if (*a == '[' && ae > a + 1 && ae[-1] == ']') {
			a++;
			ae--;
		}
		for (q = colon + 1; q < end && *q >= '0' && *q <= '9'; q++)
			;
		if (q == end && end - colon - 1 <= 5) {
			puts_(o, ",\"src_endpoint\":{\"ip\":\"");
			put(o, a, (size_t)(ae - a));
			puts_(o, "\",\"port\":");
			put(o, colon + 1, (size_t)(end - colon - 1));
			puts_(o, "}");
			f->used = 1;
			return;
		}
	}
	puts_(o, ",\"src_endpoint\":{\"name\":");
	put(o, f->val, f->vlen);
	puts_(o, "}");
	f->used = 1;
}

size_t
px_ocsf_line(const char *line, size_t len, char *outbuf, size_t outsz, const char *version)
{
	struct rec r;
	struct out o = { outbuf, 0, outsz, 0 };
	struct field *ev, *method, *decision, *host, *port, *addr, *path, *f;
	const char *cls_name, *act_name;
	long long ms;
	int cls, act, deny, allow, first, http;
	size_t i;

	if (len < 3 || line[len - 1] != '\n' || split(line, line + len - 1, &r) != 0)
		return 0;
	ev = get(&r, "event");
	if (time_ms(get(&r, "time"), &ms) != 0 || ev == NULL || !ev->is_str)
		return 0;
	get(&r, "time")->used = 1;
	method = get(&r, "method");
	decision = get(&r, "decision");
	host = get(&r, "host");
	port = get(&r, "port");
	addr = get(&r, "address");
	path = get(&r, "path");
	deny = str_is(decision, "deny");
	allow = str_is(decision, "allow");
	/* An HTTP request is HTTP Activity; a tunnel (CONNECT, SOCKS) and
	 * anything else is Network Activity. */
	http = str_is(ev, "request") || str_is(ev, "reflect") ||
	    (method != NULL && method->is_str && !str_is(method, "CONNECT") && host != NULL);
	if (http) {
		cls = 4002;
		cls_name = "HTTP Activity";
		act = http_activity(method, &act_name);
	} else {
		cls = 4001;
		cls_name = "Network Activity";
		if (str_is(ev, "close")) {
			act = 2;
			act_name = "Close";
		} else if (deny) {
			act = 5;
			act_name = "Refuse";
		} else if (allow) {
			act = 1;
			act_name = "Open";
		} else {
			act = 99;
			act_name = "Other";
		}
	}

	puts_(&o, "{\"time\":");
	putnum(&o, ms);
	puts_(&o, ",\"category_uid\":4,\"category_name\":\"Network Activity\",\"class_uid\":");
	putnum(&o, cls);
	puts_(&o, ",\"class_name\":\"");
	puts_(&o, cls_name);
	puts_(&o, "\",\"activity_id\":");
	putnum(&o, act);
	puts_(&o, ",\"activity_name\":\"");
	puts_(&o, act_name);
	puts_(&o, "\",\"type_uid\":");
	putnum(&o, (long long)cls * 100 + act);
	puts_(&o, deny ? ",\"severity_id\":3,\"severity\":\"Medium\"" :
	    ",\"severity_id\":1,\"severity\":\"Informational\"");
	if (deny)
		puts_(&o, ",\"status_id\":2,\"status\":\"Failure\",\"action_id\":2,\"action\":\"Denied\","
		    "\"disposition_id\":2,\"disposition\":\"Blocked\"");
	else if (allow)
		puts_(&o, ",\"status_id\":1,\"status\":\"Success\",\"action_id\":1,\"action\":\"Allowed\","
		    "\"disposition_id\":1,\"disposition\":\"Allowed\"");
	if ((f = get(&r, "detail")) != NULL) {
		first = 0;
		copy(&o, f, "message", &first);
	}
	endpoint_peer(&o, get(&r, "peer"));
	if (host != NULL || port != NULL || (addr != NULL && addr->is_str)) {
		puts_(&o, ",\"dst_endpoint\":{");
		first = 1;
		copy(&o, host, "hostname", &first);
		copy(&o, port, "port", &first);
		if (addr != NULL && addr->is_str)
			copy(&o, addr, "ip", &first);
		puts_(&o, "}");
	}
	if (addr != NULL)
		addr->used = 1;
	if (http) {
		puts_(&o, ",\"http_request\":{");
		first = 1;
		copy(&o, method, "http_method", &first);
		if (!first)
			puts_(&o, ",");
		puts_(&o, "\"url\":{");
		first = 1;
		if (host != NULL)
			copy(&o, host, "hostname", &first);
		copy(&o, path, "path", &first);
		copy(&o, port, "port", &first);
		puts_(&o, "}}");
		if ((f = get(&r, "status")) != NULL) {
			puts_(&o, ",\"http_response\":{");
			first = 1;
			copy(&o, f, "code", &first);
			puts_(&o, "}");
		}
	}
	if (get(&r, "bytes_up") != NULL || get(&r, "bytes_down") != NULL) {
		puts_(&o, ",\"traffic\":{");
		first = 1;
		copy(&o, get(&r, "bytes_up"), "bytes_out", &first);
		copy(&o, get(&r, "bytes_down"), "bytes_in", &first);
		puts_(&o, "}");
	}
	if ((f = get(&r, "duration_ms")) != NULL) {
		first = 0;
		copy(&o, f, "duration", &first);
	}
	puts_(&o, ",\"metadata\":{\"product\":{\"name\":\"postern\",\"vendor_name\":\"postern\",\"version\":\"");
	puts_(&o, version);
	puts_(&o, "\"},\"version\":\"" PX_OCSF_VERSION "\"}");
	/* Last, so that the chain's fields land in it: the rest as it was. */
	puts_(&o, ",\"unmapped\":{");
	first = 1;
	for (i = 0; i < r.n; i++) {
		char key[64];

		f = &r.f[i];
		if (f->used || f->klen >= sizeof(key))
			continue;
		memcpy(key, f->key, f->klen);
		key[f->klen] = '\0';
		copy(&o, f, key, &first);
	}
	puts_(&o, "}}\n");
	return o.over ? 0 : o.len;
}
