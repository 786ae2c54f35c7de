/*
 * conf/config.c: inih -> validate -> immutable snapshot (see config.h).
 *
 * inih is fed through our own line reader, which gives us exact line
 * numbers for every key (the system inih is built without
 * INI_HANDLER_LINENO), refuses lines longer than inih's buffer (inih would
 * otherwise parse the rest of such a line as a line of its own: the tail of
 * a long allow_hosts list would become a new key), and lets us report every
 * malformed line, not only the first.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <ini.h>
#include <openssl/evp.h>

#include "conf/config.h"
#include "conf/ranges.h"

#define MAX_CONFIG_BYTES (1024 * 1024)
#define MAX_SESSION_NAME 64

struct cf_config {
	int refs;
	char *path;
	char hash[13];
	struct cf_proxy_settings proxy;
	struct cf_session *sessions; /* [0] is "default" */
	size_t nsessions;
	struct cf_rule **rules;      /* every rule, by id */
	size_t nrules;
	struct cf_listen *listens;   /* every listener of every session */
	size_t nlistens;
	struct cf_pin *pins;         /* [hosts] */
	size_t npins;
};

/* ---- small helpers ---------------------------------------------------- */

static int
diag_add(char ***v, size_t *n, const char *fmt, va_list ap)
{
	char *s = NULL, **nv;

	if (vasprintf(&s, fmt, ap) < 0)
		return -ENOMEM;
	nv = realloc(*v, (*n + 1) * sizeof(*nv));
	if (nv == NULL) {
		free(s);
		return -ENOMEM;
	}
	nv[(*n)++] = s;
	*v = nv;
	return 0;
}

void
cf_diag_free(struct cf_diag *d)
{
	size_t i;

	if (d == NULL)
		return;
	for (i = 0; i < d->nerrors; i++)
		free(d->errors[i]);
	for (i = 0; i < d->nwarnings; i++)
		free(d->warnings[i]);
	free(d->errors);
	free(d->warnings);
	memset(d, 0, sizeof(*d));
}

/* Untrusted text shown in a message: printable ASCII only, truncated. */
static void
show(char *out, size_t size, const char *s)
{
	size_t o = 0;

	for (; *s != '\0' && o + 5 < size; s++) {
		unsigned char c = (unsigned char)*s;
		if (c >= 0x20 && c < 0x7f) {
			out[o++] = (char)c;
		} else {
			snprintf(out + o, size - o, "\\x%02x", c);
			o += 4;
		}
	}
	if (*s != '\0' && o + 4 <= size) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

/* ---- the builder that inih's callbacks fill ----------------------------- */

struct key_seen {
	char *section;
	char *key;
	int line;
};

struct sess_build {
	char *name;
	int line;
	struct cf_listen *listen;
	size_t nlisten;
	struct cf_rule *allow;
	size_t nallow;
	struct cf_rule *deny;
	size_t ndeny;
	/* max_connections and max_connections_per_uid as written (0: not
	 * given) and their lines. */
	unsigned max_conns, max_uid;
	int max_conns_line, max_uid_line;
	/* The shares in force, worked out in build(). */
	unsigned eff_max, eff_uid;
};

struct builder {
	const char *file;
	struct cf_diag *diag;
	int nerrors;
	/* Reader state. */
	const char *text;
	size_t len, pos;
	int line;
	char cursect[128];
	int cursect_ok;
	/* Sections seen, for duplicates. */
	int proxy_line, defaults_line;
	struct key_seen *seen;
	size_t nseen;
	/* Results. */
	struct cf_proxy_settings proxy;
	struct cf_listen *plisten;
	size_t nplisten;
	struct sess_build defaults;
	struct sess_build *sess;
	size_t nsess;
	int hosts_line;
	struct cf_pin *pins;
	size_t npins;
};

__attribute__((format(printf, 3, 4))) static void
err_at(struct builder *b, int line, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;

	b->nerrors++;
	if (b->diag == NULL)
		return;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (msg == NULL)
		return;
	if (line > 0) {
		char *full = NULL;
		if (asprintf(&full, "%s:%d: %s", b->file, line, msg) >= 0) {
			free(msg);
			msg = full;
		}
	} else {
		char *full = NULL;
		if (asprintf(&full, "%s: %s", b->file, msg) >= 0) {
			free(msg);
			msg = full;
		}
	}
	{
		char **nv = realloc(b->diag->errors, (b->diag->nerrors + 1) * sizeof(*nv));
		if (nv == NULL) {
			free(msg);
			return;
		}
		nv[b->diag->nerrors++] = msg;
		b->diag->errors = nv;
	}
}

__attribute__((format(printf, 2, 3))) static void
warn_cfg(struct cf_diag *d, const char *fmt, ...)
{
	va_list ap;

	if (d == NULL)
		return;
	va_start(ap, fmt);
	diag_add(&d->warnings, &d->nwarnings, fmt, ap);
	va_end(ap);
}

static int
is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/*
 * inih's reader: hand it one physical line at a time, counting lines and
 * checking each line's shape so that every malformed line is reported with
 * its number.
 */
static char *
reader(char *str, int num, void *stream)
{
	struct builder *b = stream;
	const char *start, *nl, *p, *e;
	size_t linelen, copy;

	if (b->pos >= b->len)
		return NULL;
	start = b->text + b->pos;
	nl = memchr(start, '\n', b->len - b->pos);
	linelen = nl ? (size_t)(nl - start) + 1 : b->len - b->pos;
	b->pos += linelen;
	b->line++;

	/* inih's buffer holds num - 1 bytes; a longer line must not be split. */
	if (linelen + 1 > (size_t)num) {
		err_at(b, b->line, "line longer than %d characters (split a long list over several allow_hosts lines)",
		    num - 2);
		str[0] = '\n';
		str[1] = '\0';
		return str;
	}
	for (p = start; p < start + linelen; p++) {
		if (*p == '\0') {
			err_at(b, b->line, "NUL byte in line");
			str[0] = '\n';
			str[1] = '\0';
			return str;
		}
	}
	/*
	 * Leading blanks are dropped before inih sees the line: inih would
	 * take an indented line as the continuation of the previous value,
	 * so an indented "allow_hosts = x" would silently become part of
	 * another key's value.  Here it is simply a line of its own.
	 */
	p = start;
	while (p < start + linelen && is_blank(*p) && *p != '\r')
		p++;
	copy = linelen - (size_t)(p - start);
	memcpy(str, p, copy);
	str[copy] = '\0';

	/* Shape check, mirroring inih: blank, comment, [section] or
	 * key = value; anything else is reported with its line. */
	p = start;
	e = start + linelen;
	if (b->line == 1 && linelen >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
		p += 3;
	while (p < e && is_blank(*p))
		p++;
	if (p == e || *p == '\n' || *p == ';' || *p == '#')
		return str;
	if (*p == '[') {
		const char *close = memchr(p, ']', (size_t)(e - p));
		size_t n;
		if (close == NULL) {
			err_at(b, b->line, "section header without ] (%.*s)", (int)(e - p - (nl ? 1 : 0)), p);
			b->cursect_ok = 0;
			return str;
		}
		n = (size_t)(close - p - 1);
		if (n >= sizeof(b->cursect))
			n = sizeof(b->cursect) - 1;
		memcpy(b->cursect, p + 1, n);
		b->cursect[n] = '\0';
		b->cursect_ok = 1;
		return str;
	}
	{
		const char *eq = p;
		while (eq < e && *eq != '=' && *eq != ':')
			eq++;
		if (eq == e) {
			char buf[80];
			char tmp[200];
			size_t n = (size_t)(e - p);
			if (n >= sizeof(tmp))
				n = sizeof(tmp) - 1;
			memcpy(tmp, p, n);
			tmp[n] = '\0';
			if (n > 0 && tmp[n - 1] == '\n')
				tmp[--n] = '\0';
			show(buf, sizeof(buf), tmp);
			err_at(b, b->line, "not a \"key = value\" line (%s)", buf);
		}
	}
	return str;
}

static const char *
section_kind(const char *section, const char **name)
{
	*name = NULL;
	if (strcmp(section, "proxy") == 0)
		return "proxy";
	if (strcmp(section, "defaults") == 0)
		return "defaults";
	if (strcmp(section, "hosts") == 0)
		return "hosts";
	if (strncmp(section, "session ", 8) == 0) {
		*name = section + 8;
		return "session";
	}
	return NULL;
}

static int
valid_session_name(const char *n)
{
	size_t i, len = strlen(n);

	if (len == 0 || len > MAX_SESSION_NAME)
		return 0;
	for (i = 0; i < len; i++) {
		char c = n[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'))
			return 0;
	}
	return strcmp(n, "default") != 0;
}

static struct sess_build *
find_sess(struct builder *b, const char *name)
{
	size_t i;

	for (i = 0; i < b->nsess; i++)
		if (strcmp(b->sess[i].name, name) == 0)
			return &b->sess[i];
	return NULL;
}

/* Remember SECTION/KEY; returns the line of an earlier occurrence, or 0. */
static int
seen_before(struct builder *b, const char *section, const char *key)
{
	size_t i;
	struct key_seen *nv;

	for (i = 0; i < b->nseen; i++)
		if (strcmp(b->seen[i].section, section) == 0 && strcmp(b->seen[i].key, key) == 0)
			return b->seen[i].line;
	nv = realloc(b->seen, (b->nseen + 1) * sizeof(*nv));
	if (nv == NULL)
		return 0;
	b->seen = nv;
	nv[b->nseen].section = strdup(section);
	nv[b->nseen].key = strdup(key);
	nv[b->nseen].line = b->line;
	if (nv[b->nseen].section == NULL || nv[b->nseen].key == NULL) {
		free(nv[b->nseen].section);
		free(nv[b->nseen].key);
		return 0;
	}
	b->nseen++;
	return 0;
}

/* ---- value parsers ------------------------------------------------------ */

static int
parse_uint(const char *s, size_t len, unsigned long long max, unsigned long long *out)
{
	unsigned long long v = 0;
	size_t i;

	if (len == 0 || (len > 1 && s[0] == '0'))
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long long)(s[i] - '0');
		if (v > max)
			return -ERANGE;
	}
	*out = v;
	return 0;
}

/* "500ms", "10s", "15m", "1h": a positive number with a unit, at most 30
 * days. */
static int
parse_duration(const char *s, unsigned *ms, const char **why)
{
	size_t len = strlen(s), n = 0;
	unsigned long long v, mult;

	while (n < len && s[n] >= '0' && s[n] <= '9')
		n++;
	if (n == 0) {
		*why = "a duration is a number with a unit: 500ms, 10s, 15m, 1h";
		return -EINVAL;
	}
	if (strcmp(s + n, "ms") == 0)
		mult = 1;
	else if (strcmp(s + n, "s") == 0)
		mult = 1000;
	else if (strcmp(s + n, "m") == 0)
		mult = 60 * 1000;
	else if (strcmp(s + n, "h") == 0)
		mult = 3600 * 1000;
	else {
		*why = s[n] == '\0' ? "a duration needs a unit: ms, s, m or h" :
		    "unknown duration unit (ms, s, m, h)";
		return -EINVAL;
	}
	if (parse_uint(s, n, 30ULL * 24 * 3600 * 1000, &v) != 0 || v == 0 ||
	    v * mult > 30ULL * 24 * 3600 * 1000) {
		*why = "duration must be above zero, at most 30 days, without leading zeros";
		return -EINVAL;
	}
	*ms = (unsigned)(v * mult);
	return 0;
}

/* "32768", "32k", "1m". */
static int
parse_size(const char *s, size_t *out, const char **why)
{
	size_t len = strlen(s), n = len;
	unsigned long long v, mult = 1;

	if (len > 0 && (s[len - 1] == 'k' || s[len - 1] == 'K')) {
		mult = 1024;
		n--;
	} else if (len > 0 && (s[len - 1] == 'm' || s[len - 1] == 'M')) {
		mult = 1024 * 1024;
		n--;
	}
	if (parse_uint(s, n, 1ULL << 30, &v) != 0 || v == 0) {
		*why = "a size is a positive number, optionally with k or m";
		return -EINVAL;
	}
	*out = (size_t)(v * mult);
	return 0;
}

/* A uid or gid: decimal, 0 to 2^31-1, as the user key takes them. */
static int
parse_id(const char *s, size_t len, unsigned long long *v)
{
	if (len == 1 && s[0] == '0') {
		*v = 0;
		return 0;
	}
	return parse_uint(s, len, 0x7fffffff, v);
}

/* The options after a UNIX listener's path: "owner=UID group=GID
 * mode=OCTAL", separated by blanks. */
static int
listen_options(const char *p, struct cf_listen *l, const char **why)
{
	for (;;) {
		const char *w, *eq;
		size_t n, klen;
		unsigned long long v;
		while (is_blank(*p))
			p++;
		if (*p == '\0')
			return 0;
		w = p;
		while (*p != '\0' && !is_blank(*p))
			p++;
		n = (size_t)(p - w);
		eq = memchr(w, '=', n);
		klen = eq ? (size_t)(eq - w) : n;
		if (eq != NULL && klen == 5 && memcmp(w, "owner", 5) == 0) {
			if (l->has_owner) {
				*why = "owner= is given twice";
				return -EINVAL;
			}
			if (parse_id(eq + 1, n - 6, &v) != 0) {
				*why = "owner= takes a numeric uid (there is no /etc/passwd in a scratch image)";
				return -EINVAL;
			}
			l->has_owner = 1;
			l->owner = (uid_t)v;
		} else if (eq != NULL && klen == 5 && memcmp(w, "group", 5) == 0) {
			if (l->has_group) {
				*why = "group= is given twice";
				return -EINVAL;
			}
			if (parse_id(eq + 1, n - 6, &v) != 0) {
				*why = "group= takes a numeric gid (there is no /etc/group in a scratch image)";
				return -EINVAL;
			}
			l->has_group = 1;
			l->group = (gid_t)v;
		} else if (eq != NULL && klen == 4 && memcmp(w, "mode", 4) == 0) {
			const char *d = eq + 1;
			size_t dn = n - 5, i;
			unsigned m = 0;
			if (l->has_mode) {
				*why = "mode= is given twice";
				return -EINVAL;
			}
			/* Three octal digits, or four with a leading 0: 0660, 660. */
			for (i = 0; i < dn && i < 8; i++) {
				if (d[i] < '0' || d[i] > '7') {
					*why = "mode= takes three or four octal digits, like 0660";
					return -EINVAL;
				}
				m = m * 8 + (unsigned)(d[i] - '0');
			}
			if (dn >= 8 || m > 0777) {
				*why = "mode= takes permission bits only, at most 0777 (no setuid, setgid or sticky bit)";
				return -EINVAL;
			}
			if (dn < 3 || dn > 4) {
				*why = "mode= takes three or four octal digits, like 0660";
				return -EINVAL;
			}
			l->has_mode = 1;
			l->mode = (mode_t)m;
		} else {
			*why = "unknown listener option (a UNIX listener takes owner=UID, group=GID, mode=OCTAL)";
			return -EINVAL;
		}
	}
}

int
cf_listen_parse(const char *s, struct cf_listen *l, const char **why)
{
	memset(l, 0, sizeof(*l));
	if (strncmp(s, "unix:", 5) == 0) {
		const char *path = s + 5;
		size_t n = 0;
		/* The path ends at the first blank; what follows are options. */
		while (path[n] != '\0' && !is_blank(path[n]))
			n++;
		if (n == 0 || path[0] != '/') {
			*why = "a UNIX socket path must be absolute";
			return -EINVAL;
		}
		if (n >= sizeof(l->path)) {
			*why = "UNIX socket path too long";
			return -EINVAL;
		}
		l->kind = CF_LISTEN_UNIX;
		memcpy(l->path, path, n);
		l->path[n] = '\0';
		l->mode = 0660;
		if (listen_options(path + n, l, why) != 0)
			return -EINVAL;
	} else if (strncmp(s, "tcp:", 4) == 0) {
		struct cf_host h;
		uint16_t port = 0;
		size_t n = 0;
		while (s[4 + n] != '\0' && !is_blank(s[4 + n]))
			n++;
		if (s[4 + n] != '\0') {
			*why = "owner=, group= and mode= apply to unix: listeners only";
			return -EINVAL;
		}
		if (cf_authority_parse(s + 4, strlen(s + 4), 0, &h, &port, why) != 0)
			return -EINVAL;
		if (h.kind == CF_HOST_NAME) {
			*why = "a TCP listener needs a numeric address (tcp:127.0.0.1:3128)";
			return -EINVAL;
		}
		if (port == 0) {
			*why = "a TCP listener needs a port";
			return -EINVAL;
		}
		l->kind = CF_LISTEN_TCP;
		if (h.kind == CF_HOST_IPV4) {
			struct sockaddr_in *sin = (struct sockaddr_in *)&l->addr;
			sin->sin_family = AF_INET;
			sin->sin_port = htons(port);
			sin->sin_addr = h.addr.v4;
			l->addrlen = sizeof(*sin);
		} else {
			struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&l->addr;
			sin6->sin6_family = AF_INET6;
			sin6->sin6_port = htons(port);
			sin6->sin6_addr = h.addr.v6;
			l->addrlen = sizeof(*sin6);
		}
	} else {
		*why = "a listener is unix:PATH or tcp:ADDR:PORT";
		return -EINVAL;
	}
	l->text = strdup(s);
	if (l->text == NULL)
		return -ENOMEM;
	return 0;
}

static int
listen_same(const struct cf_listen *a, const struct cf_listen *b)
{
	if (a->kind != b->kind)
		return 0;
	if (a->kind == CF_LISTEN_UNIX)
		return strcmp(a->path, b->path) == 0;
	return a->addrlen == b->addrlen && memcmp(&a->addr, &b->addr, a->addrlen) == 0;
}

static int
add_listen(struct builder *b, struct cf_listen **v, size_t *n, const char *value)
{
	struct cf_listen l, *nv;
	const char *why = NULL;

	if (cf_listen_parse(value, &l, &why) != 0) {
		char buf[120];
		show(buf, sizeof(buf), value);
		err_at(b, b->line, "%s (%s)", why ? why : "bad listener", buf);
		return -EINVAL;
	}
	l.file = b->file;
	l.line = b->line;
	nv = realloc(*v, (*n + 1) * sizeof(*nv));
	if (nv == NULL) {
		free(l.text);
		return -ENOMEM;
	}
	nv[(*n)++] = l;
	*v = nv;
	return 0;
}

/* A comma-separated list of items, each one rule. */
static void
add_rules(struct builder *b, struct sess_build *s, enum cf_rule_type type, const char *value,
    const char *file, int line)
{
	const char *p = value;

	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		struct cf_rule r, **vp, *nv;
		size_t *np;
		const char *why = NULL;
		size_t i, nonblank = 0;

		for (i = 0; i < len; i++)
			nonblank += !is_blank(p[i]);
		if (nonblank == 0) {
			err_at(b, line, "empty item in list (%s)", value);
		} else if (cf_rule_parse(p, len, type, &r, &why) != 0) {
			char item[200], buf[120];
			const char *q = p;
			size_t n, qlen = len;
			while (qlen > 0 && is_blank(*q))
				q++, qlen--;
			while (qlen > 0 && is_blank(q[qlen - 1]))
				qlen--;
			n = qlen < sizeof(item) - 1 ? qlen : sizeof(item) - 1;
			memcpy(item, q, n);
			item[n] = '\0';
			show(buf, sizeof(buf), item);
			if (file == b->file) {
				err_at(b, line, "%s (%s)", why ? why : "bad pattern", buf);
			} else {
				const char *saved = b->file;
				b->file = file;
				err_at(b, line, "%s (%s)", why ? why : "bad pattern", buf);
				b->file = saved;
			}
		} else {
			r.file = file;
			r.line = line;
			if (r.taken_as != NULL) {
				char buf[120], tbuf[120];
				show(buf, sizeof(buf), r.text);
				show(tbuf, sizeof(tbuf), r.taken_as);
				if (line > 0)
					warn_cfg(b->diag, "%s:%d: %s taken as %s", file, line, buf, tbuf);
				else
					warn_cfg(b->diag, "%s: %s taken as %s", file, buf, tbuf);
			}
			vp = type == CF_RULE_ALLOW ? &s->allow : &s->deny;
			np = type == CF_RULE_ALLOW ? &s->nallow : &s->ndeny;
			nv = realloc(*vp, (*np + 1) * sizeof(*nv));
			if (nv == NULL) {
				cf_rule_clear(&r);
				err_at(b, line, "out of memory");
				return;
			}
			nv[(*np)++] = r;
			*vp = nv;
		}
		if (comma == NULL)
			break;
		p = comma + 1;
	}
}

static const char *const proxy_keys[] = {
	"listen", "admin", "admin_group", "user", "log", "dns_servers", "sni",
	"connect_timeout", "idle_timeout", "header_timeout", "max_connections",
	"max_headers", "max_header_bytes", "revoke", NULL,
};

/*
 * One [hosts] line, "NAME = ADDR[, ADDR]...": NAME a host name (never an
 * address or a wildcard), each ADDR a canonical IPv4 or IPv6 literal (bare
 * or bracketed, no zone).  A name given twice is an error, not a merge: the
 * admin must see which line is in force.
 */
static void
add_pin(struct builder *b, const char *key, const char *value, const char *shown)
{
	struct cf_host h;
	struct cf_pin pin, *nv;
	const char *why = NULL, *p = value;
	char skey[120];
	size_t i;

	show(skey, sizeof(skey), key);
	memset(&pin, 0, sizeof(pin));
	if (cf_host_parse(key, strlen(key), CF_HOST_NO_IP, &h, &why) != 0 || h.kind != CF_HOST_NAME) {
		err_at(b, b->line, "[hosts] pins a host name: %s (%s)", why ? why : "not a name", skey);
		return;
	}
	memcpy(pin.name, h.name, sizeof(pin.name));
	for (i = 0; i < b->npins; i++)
		if (strcmp(b->pins[i].name, pin.name) == 0) {
			err_at(b, b->line, "%s is pinned twice (first on line %d)", skey, b->pins[i].line);
			return;
		}
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char tmp[INET6_ADDRSTRLEN + 3];
		struct sockaddr_storage *ss;
		while (len > 0 && is_blank(*p))
			p++, len--;
		while (len > 0 && is_blank(p[len - 1]))
			len--;
		if (len > 2 && p[0] == '[' && p[len - 1] == ']')
			p++, len -= 2;
		if (len == 0 || len >= sizeof(tmp)) {
			err_at(b, b->line, "[hosts] %s = ADDRESS, ADDRESS, ...: an empty or overlong address (%s)",
			    skey, shown);
			return;
		}
		if (pin.naddrs == CF_PIN_MAX_ADDRS) {
			err_at(b, b->line, "[hosts] pins at most %d addresses to a name (%s)", CF_PIN_MAX_ADDRS, skey);
			return;
		}
		memcpy(tmp, p, len);
		tmp[len] = '\0';
		ss = &pin.addrs[pin.naddrs];
		if (memchr(tmp, ':', len) != NULL) {
			struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
			if (inet_pton(AF_INET6, tmp, &sin6->sin6_addr) != 1) {
				err_at(b, b->line, "[hosts] %s: not an IPv6 address (%s)", skey, shown);
				return;
			}
			sin6->sin6_family = AF_INET6;
		} else {
			struct sockaddr_in *sin = (struct sockaddr_in *)ss;
			if (cf_host_parse(tmp, len, 0, &h, &why) != 0 || h.kind != CF_HOST_IPV4) {
				err_at(b, b->line, "[hosts] %s: not a canonical IPv4 address (%s)", skey, shown);
				return;
			}
			sin->sin_family = AF_INET;
			sin->sin_addr = h.addr.v4;
		}
		pin.naddrs++;
		if (comma == NULL)
			break;
		p = comma + 1;
	}
	pin.line = b->line;
	nv = realloc(b->pins, (b->npins + 1) * sizeof(*nv));
	if (nv == NULL) {
		err_at(b, b->line, "out of memory");
		return;
	}
	nv[b->npins++] = pin;
	b->pins = nv;
}

static const char *const session_keys[] = { "allow_hosts", "deny_hosts", "listen",
	"max_connections", "max_connections_per_uid", NULL };

/*
 * The key of KNOWN nearest to KEY by edit distance (Levenshtein), when it
 * is near enough to be a typo: at most 2 edits and fewer than half the
 * key's length, so that "bogus" is not taken for "log".  NULL otherwise.
 */
static const char *
nearest_key(const char *key, const char *const *known)
{
	size_t n = strlen(key), i, j, m;
	unsigned row[64], prev, tmp, best_d = 3;
	const char *best = NULL;

	if (n == 0 || n >= sizeof(row) / sizeof(row[0]))
		return NULL;
	for (; *known != NULL; known++) {
		m = strlen(*known);
		for (j = 0; j <= n; j++)
			row[j] = (unsigned)j;
		for (i = 1; i <= m; i++) {
			prev = row[0];
			row[0] = (unsigned)i;
			for (j = 1; j <= n; j++) {
				unsigned cost = (*known)[i - 1] == key[j - 1] ? 0 : 1;
				tmp = row[j];
				row[j] = prev + cost;
				if (tmp + 1 < row[j])
					row[j] = tmp + 1;
				if (row[j - 1] + 1 < row[j])
					row[j] = row[j - 1] + 1;
				prev = tmp;
			}
		}
		if (row[n] < best_d && 2 * row[n] < n) {
			best_d = row[n];
			best = *known;
		}
	}
	return best;
}

static int
handler(void *user, const char *section, const char *key, const char *value)
{
	struct builder *b = user;
	const char *sname = NULL, *kind = section_kind(section, &sname);
	const char *why = NULL;
	char shown[120], skey[80];
	int prev;

	show(shown, sizeof(shown), value);
	if (kind != NULL && strcmp(kind, "hosts") == 0) {
		add_pin(b, key, value, shown);
		return 1;
	}
	show(skey, sizeof(skey), key);
	key = skey; /* only ever shown or compared from here on */
	if (section[0] == '\0') {
		err_at(b, b->line, "key outside any section (%s)", key);
		return 1;
	}
	if (kind == NULL)
		return 1; /* reported once at the section header */

	if (strcmp(key, "listen") != 0 && strcmp(key, "allow_hosts") != 0 &&
	    strcmp(key, "deny_hosts") != 0) {
		prev = seen_before(b, section, key);
		if (prev != 0) {
			err_at(b, b->line, "%s is given twice (first on line %d)", key, prev);
			return 1;
		}
	}

	if (strcmp(kind, "proxy") == 0) {
		struct cf_proxy_settings *p = &b->proxy;
		unsigned long long v;

		if (strcmp(key, "listen") == 0) {
			add_listen(b, &b->plisten, &b->nplisten, value);
		} else if (strcmp(key, "admin") == 0) {
			struct cf_listen *one = NULL;
			size_t n = 0;
			if (add_listen(b, &one, &n, value) == 0) {
				if (one[0].kind != CF_LISTEN_UNIX) {
					err_at(b, b->line, "the admin socket must be unix:PATH (%s)", shown);
					free(one[0].text);
				} else if (one[0].has_owner || one[0].has_group || one[0].has_mode) {
					err_at(b, b->line, "the admin socket takes no owner=, group= or mode= "
					    "(it is 0600, or 0660 with admin_group) (%s)", shown);
					free(one[0].text);
				} else {
					p->admin = one[0];
				}
			}
			free(one);
		} else if (strcmp(key, "admin_group") == 0) {
			if (parse_uint(value, strlen(value), 0x7fffffff, &v) != 0 &&
			    strcmp(value, "0") != 0)
				err_at(b, b->line, "admin_group must be a numeric gid (%s)", shown);
			else {
				p->has_admin_group = 1;
				p->admin_group = strcmp(value, "0") == 0 ? 0 : (gid_t)v;
			}
		} else if (strcmp(key, "user") == 0) {
			/* Numeric: there is no /etc/passwd in a scratch image. */
			const char *colon = strchr(value, ':');
			size_t ulen = colon ? (size_t)(colon - value) : strlen(value);
			unsigned long long g;
			int ok = parse_uint(value, ulen, 0x7fffffff, &v) == 0 ||
			    (ulen == 1 && value[0] == '0' && (v = 0, 1));
			if (ok && colon != NULL)
				ok = parse_uint(colon + 1, strlen(colon + 1), 0x7fffffff, &g) == 0 ||
				    (strcmp(colon + 1, "0") == 0 && (g = 0, 1));
			else
				g = v;
			if (!ok)
				err_at(b, b->line, "user must be a numeric uid or uid:gid (%s)", shown);
			else {
				p->has_user = 1;
				p->user = (uid_t)v;
				p->group = (gid_t)g;
			}
		} else if (strcmp(key, "log") == 0) {
			if (strcmp(value, "stderr") != 0 && value[0] != '/')
				err_at(b, b->line, "log is \"stderr\" or an absolute file path (%s)", shown);
			else {
				free(p->log);
				p->log = strdup(value);
			}
		} else if (strcmp(key, "dns_servers") == 0) {
			/* Each server: an IP literal with an optional port, handed to
			 * c-ares as is after this check. */
			const char *q = value;
			int bad = 0;
			for (;;) {
				const char *comma = strchr(q, ',');
				size_t len = comma ? (size_t)(comma - q) : strlen(q);
				struct cf_host h;
				uint16_t port;
				while (len > 0 && is_blank(*q))
					q++, len--;
				while (len > 0 && is_blank(q[len - 1]))
					len--;
				if (cf_authority_parse(q, len, 0, &h, &port, &why) != 0 ||
				    h.kind == CF_HOST_NAME) {
					bad = 1;
					break;
				}
				if (comma == NULL)
					break;
				q = comma + 1;
			}
			if (bad)
				err_at(b, b->line, "dns_servers is a list of IP addresses with optional ports (%s)", shown);
			else {
				char *csv = malloc(strlen(value) + 1), *o = csv;
				const char *r;
				if (csv != NULL) {
					for (r = value; *r; r++)
						if (!is_blank(*r))
							*o++ = *r;
					*o = '\0';
				}
				free(p->dns_servers);
				p->dns_servers = csv;
			}
		} else if (strcmp(key, "sni") == 0) {
			if (strcmp(value, "match") == 0)
				p->sni = CF_SNI_MATCH;
			else if (strcmp(value, "strict") == 0)
				p->sni = CF_SNI_STRICT;
			else if (strcmp(value, "off") == 0)
				p->sni = CF_SNI_OFF;
			else
				err_at(b, b->line, "sni is match, strict or off (%s)", shown);
		} else if (strcmp(key, "connect_timeout") == 0 || strcmp(key, "idle_timeout") == 0 ||
		    strcmp(key, "header_timeout") == 0) {
			unsigned ms;
			if (parse_duration(value, &ms, &why) != 0)
				err_at(b, b->line, "%s: %s (%s)", key, why, shown);
			else if (key[0] == 'c')
				p->connect_timeout_ms = ms;
			else if (key[0] == 'i')
				p->idle_timeout_ms = ms;
			else
				p->header_timeout_ms = ms;
		} else if (strcmp(key, "max_connections") == 0) {
			if (parse_uint(value, strlen(value), 1000000, &v) != 0 || v == 0)
				err_at(b, b->line, "max_connections must be 1-1000000 (%s)", shown);
			else
				p->max_connections = (unsigned)v;
		} else if (strcmp(key, "max_headers") == 0) {
			if (parse_uint(value, strlen(value), 10000, &v) != 0 || v == 0)
				err_at(b, b->line, "max_headers must be 1-10000 (%s)", shown);
			else
				p->max_headers = (unsigned)v;
		} else if (strcmp(key, "max_header_bytes") == 0) {
			size_t sz;
			if (parse_size(value, &sz, &why) != 0 || sz < 1024 || sz > 1024 * 1024)
				err_at(b, b->line, "max_header_bytes must be 1k-1m (%s)", shown);
			else
				p->max_header_bytes = sz;
		} else if (strcmp(key, "revoke") == 0) {
			if (strcmp(value, "yes") == 0)
				p->revoke = 1;
			else if (strcmp(value, "no") == 0)
				p->revoke = 0;
			else
				err_at(b, b->line, "revoke is yes or no (%s)", shown);
		} else if (strcmp(key, "allow_hosts") == 0 || strcmp(key, "deny_hosts") == 0 ||
		    strcmp(key, "max_connections_per_uid") == 0) {
			err_at(b, b->line, "%s belongs in [defaults] or a [session NAME], not in [proxy]", key);
		} else {
			const char *near = nearest_key(key, proxy_keys);
			err_at(b, b->line, "unknown key in [proxy] (%s)%s%s%s", key,
			    near ? "; did you mean " : "", near ? near : "", near ? "?" : "");
		}
		return 1;
	}

	{
		struct sess_build *s = strcmp(kind, "defaults") == 0 ? &b->defaults : find_sess(b, sname);
		if (s == NULL)
			return 1; /* the section header was refused */
		if (strcmp(key, "allow_hosts") == 0)
			add_rules(b, s, CF_RULE_ALLOW, value, b->file, b->line);
		else if (strcmp(key, "deny_hosts") == 0)
			add_rules(b, s, CF_RULE_DENY, value, b->file, b->line);
		else if (strcmp(key, "listen") == 0 && s != &b->defaults)
			add_listen(b, &s->listen, &s->nlisten, value);
		else if (strcmp(key, "listen") == 0)
			err_at(b, b->line, "listen belongs in [proxy] or a [session NAME], not in [defaults]");
		else if (strcmp(key, "max_connections") == 0 ||
		    strcmp(key, "max_connections_per_uid") == 0) {
			unsigned long long v;
			if (parse_uint(value, strlen(value), 1000000, &v) != 0 || v == 0)
				err_at(b, b->line, "%s must be 1-1000000 (%s)", key, shown);
			else if (key[15] == '\0')
				s->max_conns = (unsigned)v, s->max_conns_line = b->line;
			else
				s->max_uid = (unsigned)v, s->max_uid_line = b->line;
		} else {
			const char *const *k;
			for (k = proxy_keys; *k; k++)
				if (strcmp(*k, key) == 0)
					break;
			if (*k != NULL)
				err_at(b, b->line, "%s belongs in [proxy] (%s)", key, section);
			else {
				const char *near = nearest_key(key, session_keys);
				if (near == NULL)
					near = nearest_key(key, proxy_keys);
				err_at(b, b->line, "unknown key in [%s] (%s)%s%s%s", section, key,
				    near ? "; did you mean " : "", near ? near : "", near ? "?" : "");
			}
		}
	}
	return 1;
}

/* Sections are checked as the reader meets their headers, so that an
 * unknown or duplicate section is reported once, with its line. */
static void
check_sections(struct builder *b)
{
	const char *p = b->text, *e = b->text + b->len;
	int line = 0;

	while (p < e) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		const char *le = nl ? nl : e, *q = p;
		line++;
		if (line == 1 && le - q >= 3 && memcmp(q, "\xEF\xBB\xBF", 3) == 0)
			q += 3;
		while (q < le && is_blank(*q))
			q++;
		if (q < le && *q == '[' && (le - q) < 200) {
			const char *close = memchr(q, ']', (size_t)(le - q));
			if (close != NULL) {
				char sect[200], shown[120];
				const char *sname, *kind;
				size_t n = (size_t)(close - q - 1);
				memcpy(sect, q + 1, n);
				sect[n] = '\0';
				show(shown, sizeof(shown), sect);
				kind = section_kind(sect, &sname);
				if (kind == NULL) {
					static const char *const sections[] = { "proxy", "defaults", "hosts", NULL };
					const char *near = nearest_key(sect, sections);
					err_at(b, line, "unknown section [%s] (known: [proxy], [defaults], [session NAME], [hosts])%s%s%s",
					    shown, near ? "; did you mean [" : "", near ? near : "", near ? "]?" : "");
				} else if (strcmp(kind, "hosts") == 0) {
					if (b->hosts_line)
						err_at(b, line, "[hosts] given twice (first on line %d)", b->hosts_line);
					else
						b->hosts_line = line;
				} else if (strcmp(kind, "proxy") == 0) {
					if (b->proxy_line)
						err_at(b, line, "[proxy] given twice (first on line %d)", b->proxy_line);
					else
						b->proxy_line = line;
				} else if (strcmp(kind, "defaults") == 0) {
					if (b->defaults_line)
						err_at(b, line, "[defaults] given twice (first on line %d)", b->defaults_line);
					else
						b->defaults_line = line;
				} else if (!valid_session_name(sname)) {
					err_at(b, line, "bad session name: letters, digits, '-', '_', '.', at most 64, not \"default\" (%s)", shown);
				} else if (find_sess(b, sname) != NULL) {
					show(shown, sizeof(shown), sname);
					err_at(b, line, "duplicate session %s (first on line %d)", shown,
					    find_sess(b, sname)->line);
				} else {
					struct sess_build *nv = realloc(b->sess, (b->nsess + 1) * sizeof(*nv));
					if (nv != NULL) {
						b->sess = nv;
						memset(&nv[b->nsess], 0, sizeof(nv[0]));
						nv[b->nsess].name = strdup(sname);
						nv[b->nsess].line = line;
						if (nv[b->nsess].name != NULL)
							b->nsess++;
					}
				}
			}
		}
		p = nl ? nl + 1 : e;
	}
}

static void
proxy_settings_clear(struct cf_proxy_settings *p)
{
	free(p->admin.text);
	free(p->log);
	free(p->dns_servers);
}

static void
sess_build_clear(struct sess_build *s)
{
	size_t i;

	for (i = 0; i < s->nlisten; i++)
		free(s->listen[i].text);
	for (i = 0; i < s->nallow; i++)
		cf_rule_clear(&s->allow[i]);
	for (i = 0; i < s->ndeny; i++)
		cf_rule_clear(&s->deny[i]);
	free(s->listen);
	free(s->allow);
	free(s->deny);
	free(s->name);
}

static void
builder_clear(struct builder *b)
{
	size_t i;

	for (i = 0; i < b->nseen; i++) {
		free(b->seen[i].section);
		free(b->seen[i].key);
	}
	free(b->seen);
	for (i = 0; i < b->nplisten; i++)
		free(b->plisten[i].text);
	free(b->plisten);
	sess_build_clear(&b->defaults);
	for (i = 0; i < b->nsess; i++)
		sess_build_clear(&b->sess[i]);
	free(b->sess);
	free(b->pins);
	proxy_settings_clear(&b->proxy);
}

/* ---- building the snapshot --------------------------------------------- */

static void
config_destroy(struct cf_config *c)
{
	size_t i;

	for (i = 0; i < c->nrules; i++) {
		cf_rule_clear(c->rules[i]);
		free(c->rules[i]);
	}
	free(c->rules);
	for (i = 0; i < c->nsessions; i++) {
		free(c->sessions[i].name);
		free(c->sessions[i].allow);
		free(c->sessions[i].deny);
	}
	free(c->sessions);
	for (i = 0; i < c->nlistens; i++)
		free(c->listens[i].text);
	free(c->listens);
	free(c->pins);
	proxy_settings_clear(&c->proxy);
	free(c->path);
	free(c);
}

/* Move the rules of SB into C's rule store and return them as pointers. */
static int
take_rules(struct cf_config *c, struct cf_rule *v, size_t n, const char *section,
    const struct cf_rule ***out, size_t *nout, const struct cf_rule *const *pre, size_t npre)
{
	const struct cf_rule **list;
	size_t i;

	list = calloc(npre + n + 1, sizeof(*list));
	if (list == NULL)
		return -ENOMEM;
	for (i = 0; i < npre; i++)
		list[i] = pre[i];
	for (i = 0; i < n; i++) {
		struct cf_rule *r = malloc(sizeof(*r)), **nv;
		if (r == NULL) {
			free(list);
			return -ENOMEM;
		}
		*r = v[i];
		memset(&v[i], 0, sizeof(v[i]));
		r->section = section;
		r->id = (unsigned)c->nrules;
		nv = realloc(c->rules, (c->nrules + 1) * sizeof(*nv));
		if (nv == NULL) {
			cf_rule_clear(r);
			free(r);
			free(list);
			return -ENOMEM;
		}
		c->rules = nv;
		c->rules[c->nrules++] = r;
		list[npre + i] = r;
	}
	*out = list;
	*nout = npre + n;
	return 0;
}

static void
warn_rules(const struct cf_session *s, struct cf_diag *diag)
{
	size_t i, j;

	for (i = 0; i < s->nallow; i++) {
		const struct cf_rule *a = s->allow[i];
		for (j = 0; j < s->ndeny; j++) {
			const struct cf_rule *d = s->deny[j];
			if (cf_rule_shadows(d, a)) {
				warn_cfg(diag, "%s:%d: allow rule \"%s\" is shadowed in session %s by deny rule \"%s\" (%s:%d): it allows nothing",
				    a->file, a->line, a->text, s->name, d->text, d->file, d->line);
				break;
			}
		}
		for (j = 0; j < i; j++) {
			if (strcmp(s->allow[j]->text, a->text) == 0) {
				warn_cfg(diag, "%s:%d: allow rule \"%s\" duplicates %s:%d in session %s",
				    a->file, a->line, a->text, s->allow[j]->file, s->allow[j]->line, s->name);
				break;
			}
		}
	}
}

/* NAME is not a [session] of the file: say so, and which ones it has. */
static void
err_no_session(struct builder *b, const char *name)
{
	char list[512], shown[80];
	size_t i, used = 0;
	int n;

	list[0] = '\0';
	for (i = 0; i < b->nsess && used < sizeof(list); i++) {
		n = snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "",
		    b->sess[i].name);
		if (n < 0)
			break;
		used += (size_t)n;
	}
	show(shown, sizeof(shown), name);
	if (b->nsess == 0)
		err_at(b, 0, "no [session %s]: the file has no [session] sections", shown);
	else
		err_at(b, 0, "no [session %s]; its sessions: %s", shown, list);
}

/*
 * The connection shares of session NAME built from SB: its own
 * max_connections and max_connections_per_uid, else those of [defaults]
 * (DEF; NULL for the default session, which is [defaults]), else a quarter
 * of [proxy] max_connections and half of that per uid.  A quarter, so that
 * one session never holds every connection (the rest serve the others);
 * half per uid, so that two sandboxes that share one socket under two uids
 * never starve each other.  A share above the limit it is part of is an
 * error rather than clamped: it would say that one session may take
 * everything, which the file's writer should see.
 */
static void
work_out_shares(struct builder *b, struct sess_build *sb, const struct sess_build *def,
    const char *name)
{
	unsigned global = b->proxy.max_connections;
	const struct sess_build *umax = sb->max_conns ? sb : def && def->max_conns ? def : NULL;
	const struct sess_build *uuid = sb->max_uid ? sb : def && def->max_uid ? def : NULL;

	sb->eff_max = umax ? umax->max_conns : global / 4 > 0 ? global / 4 : 1;
	sb->eff_uid = uuid ? uuid->max_uid : sb->eff_max / 2 > 0 ? sb->eff_max / 2 : 1;
	if (sb->max_conns > global)
		err_at(b, sb->max_conns_line, "max_connections %u is more than [proxy] "
		    "max_connections %u: one session could take every connection",
		    sb->max_conns, global);
	if (uuid != NULL && sb->eff_uid > sb->eff_max && sb->eff_max <= global)
		err_at(b, uuid->max_uid_line, "max_connections_per_uid %u is more than the "
		    "max_connections %u of session %s", sb->eff_uid, sb->eff_max, name);
}

static struct cf_config *
build(struct builder *b, const char *path, const char *text, size_t len,
    const struct cf_overrides *ov)
{
	struct cf_config *c = NULL;
	struct sess_build *served = NULL;
	size_t i, j, k;
	static const char cmdline[] = "<command line>";

	/* Overrides are applied as if written in [defaults] / [proxy]. */
	if (ov != NULL) {
		for (i = 0; i < ov->n_extra_allow; i++) {
			int saved = b->line;
			b->line = 0;
			add_rules(b, &b->defaults, CF_RULE_ALLOW, ov->extra_allow[i], cmdline, 0);
			b->line = saved;
		}
		if (ov->serve_session != NULL) {
			served = find_sess(b, ov->serve_session);
			if (served == NULL)
				err_no_session(b, ov->serve_session);
		}
		if ((ov->replace_listen && ov->n_extra_listen > 0) || served != NULL) {
			for (i = 0; i < b->nplisten; i++)
				free(b->plisten[i].text);
			b->nplisten = 0;
		}
		/* One session served, on our listeners alone: the file's own
		 * listeners are another deployment's (a host proxy's). */
		for (i = 0; served != NULL && i < b->nsess; i++) {
			for (j = 0; j < b->sess[i].nlisten; j++)
				free(b->sess[i].listen[j].text);
			b->sess[i].nlisten = 0;
		}
		for (i = 0; i < ov->n_extra_listen; i++) {
			int saved = b->line;
			b->line = 0;
			if (served != NULL)
				add_listen(b, &served->listen, &served->nlisten, ov->extra_listen[i]);
			else
				add_listen(b, &b->plisten, &b->nplisten, ov->extra_listen[i]);
			b->line = saved;
		}
		if (ov->has_user) {
			b->proxy.has_user = 1;
			b->proxy.user = ov->user;
			b->proxy.group = (gid_t)ov->user;
		}
	}

	if (ov != NULL && ov->default_name != NULL &&
	    (strcmp(ov->default_name, "default") != 0 && !valid_session_name(ov->default_name))) {
		err_at(b, 0, "bad session name: letters, digits, '-', '_', '.', at most 64 (%s)",
		    ov->default_name);
	} else if (ov != NULL && ov->default_name != NULL && find_sess(b, ov->default_name) != NULL) {
		err_at(b, find_sess(b, ov->default_name)->line, "session %s already exists in the file",
		    ov->default_name);
	}
	/* Every session needs a listener (but those left unserved on
	 * purpose); no listener may serve two. */
	for (i = 0; i < b->nsess; i++)
		if (b->sess[i].nlisten == 0 && (ov == NULL || ov->serve_session == NULL))
			err_at(b, b->sess[i].line, "session %s has no listen address", b->sess[i].name);
	{
		struct {
			const struct cf_listen *l;
			const char *who;
		} all[1024];
		size_t n = 0;
		for (i = 0; i < b->nplisten && n < 1024; i++)
			all[n].l = &b->plisten[i], all[n++].who = "default";
		for (i = 0; i < b->nsess; i++)
			for (j = 0; j < b->sess[i].nlisten && n < 1024; j++)
				all[n].l = &b->sess[i].listen[j], all[n++].who = b->sess[i].name;
		if (b->proxy.admin.kind != 0 && n < 1024)
			all[n].l = &b->proxy.admin, all[n++].who = "the admin socket";
		for (i = 0; i < n; i++)
			for (k = 0; k < i; k++)
				if (listen_same(all[i].l, all[k].l)) {
					err_at(b, all[i].l->line, "%s is already the listener of %s (line %d)",
					    all[i].l->text, all[k].who, all[k].l->line);
					break;
				}
		if (n == 0 || (n == 1 && b->proxy.admin.kind != 0))
			err_at(b, 0, "no listener: add listen = unix:PATH or tcp:ADDR:PORT to [proxy] or a [session NAME]");
	}
	work_out_shares(b, &b->defaults, NULL, "default");
	for (i = 0; i < b->nsess; i++)
		work_out_shares(b, &b->sess[i], &b->defaults, b->sess[i].name);
	if (b->nerrors > 0)
		return NULL;

	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->refs = 1;
	c->path = strdup(path);
	c->proxy = b->proxy;
	memset(&b->proxy, 0, sizeof(b->proxy));
	if (c->proxy.log == NULL)
		c->proxy.log = strdup("stderr");
	if (c->path == NULL || c->proxy.log == NULL)
		goto fail;

	{
		unsigned char md[EVP_MAX_MD_SIZE];
		unsigned int mdlen = 0;
		static const char hex[] = "0123456789abcdef";
		if (EVP_Digest(text, len, md, &mdlen, EVP_sha256(), NULL) != 1)
			goto fail;
		for (i = 0; i < 6; i++) {
			c->hash[2 * i] = hex[md[i] >> 4];
			c->hash[2 * i + 1] = hex[md[i] & 15];
		}
		c->hash[12] = '\0';
	}

	c->nsessions = b->nsess + 1;
	c->sessions = calloc(c->nsessions, sizeof(*c->sessions));
	if (c->sessions == NULL)
		goto fail;
	/* Listeners: one flat array, sessions point into it. */
	{
		size_t total = b->nplisten;
		for (i = 0; i < b->nsess; i++)
			total += b->sess[i].nlisten;
		c->listens = calloc(total + 1, sizeof(*c->listens));
		if (c->listens == NULL)
			goto fail;
	}

	c->sessions[0].name = strdup(ov != NULL && ov->default_name != NULL ? ov->default_name : "default");
	c->sessions[0].is_default = 1;
	for (i = 0; i <= b->nsess; i++)
		c->sessions[i].cli_hints = ov != NULL && ov->cli_hints;
	if (c->sessions[0].name == NULL)
		goto fail;
	c->sessions[0].file = NULL;
	c->sessions[0].line = b->defaults_line;
	c->sessions[0].max_connections = b->defaults.eff_max;
	c->sessions[0].max_connections_per_uid = b->defaults.eff_uid;
	c->sessions[0].listen = c->listens + c->nlistens;
	c->sessions[0].nlisten = b->nplisten;
	for (i = 0; i < b->nplisten; i++) {
		c->listens[c->nlistens++] = b->plisten[i];
		b->plisten[i].text = NULL;
	}
	b->nplisten = 0;
	if (take_rules(c, b->defaults.allow, b->defaults.nallow, "defaults",
	    &c->sessions[0].allow, &c->sessions[0].nallow, NULL, 0) != 0 ||
	    take_rules(c, b->defaults.deny, b->defaults.ndeny, "defaults",
	    &c->sessions[0].deny, &c->sessions[0].ndeny, NULL, 0) != 0)
		goto fail;

	for (i = 0; i < b->nsess; i++) {
		struct cf_session *s = &c->sessions[i + 1];
		struct sess_build *sb = &b->sess[i];
		s->name = sb->name;
		sb->name = NULL;
		s->line = sb->line;
		s->max_connections = sb->eff_max;
		s->max_connections_per_uid = sb->eff_uid;
		s->listen = c->listens + c->nlistens;
		s->nlisten = sb->nlisten;
		for (j = 0; j < sb->nlisten; j++) {
			c->listens[c->nlistens++] = sb->listen[j];
			sb->listen[j].text = NULL;
		}
		sb->nlisten = 0;
		if (take_rules(c, sb->allow, sb->nallow, s->name, &s->allow, &s->nallow,
		    c->sessions[0].allow, c->sessions[0].nallow) != 0 ||
		    take_rules(c, sb->deny, sb->ndeny, s->name, &s->deny, &s->ndeny,
		    c->sessions[0].deny, c->sessions[0].ndeny) != 0)
			goto fail;
		sb->nallow = sb->ndeny = 0;
	}
	b->defaults.nallow = b->defaults.ndeny = 0;

	/* Rules and listeners point at the file name; keep it in c->path. */
	for (i = 0; i < c->nrules; i++)
		if (c->rules[i]->file != cmdline)
			c->rules[i]->file = c->path;
	for (i = 0; i < c->nlistens; i++)
		if (c->listens[i].line > 0)
			c->listens[i].file = c->path;
		else
			c->listens[i].file = cmdline;
	c->proxy.admin.file = c->path;
	c->pins = b->pins;
	c->npins = b->npins;
	b->pins = NULL;
	b->npins = 0;
	for (i = 0; i < c->npins; i++)
		c->pins[i].file = c->path;
	for (i = 0; i < c->nsessions; i++) {
		c->sessions[i].file = c->path;
		warn_rules(&c->sessions[i], b->diag);
	}
	if (c->sessions[0].nallow == 0 && b->nsess == 0)
		warn_cfg(b->diag, "%s: no allow_hosts at all: every request will be refused", path);
	return c;
fail:
	if (c != NULL)
		config_destroy(c);
	err_at(b, 0, "out of memory");
	return NULL;
}

struct cf_config *
cf_config_parse(const char *name, const char *text, size_t len, const struct cf_overrides *ov,
    struct cf_diag *diag)
{
	struct builder b;
	struct cf_config *c = NULL;
	int rc;

	memset(&b, 0, sizeof(b));
	b.file = name;
	b.diag = diag;
	b.text = text;
	b.len = len;
	b.proxy.sni = CF_SNI_MATCH;
	b.proxy.connect_timeout_ms = 10 * 1000;
	b.proxy.idle_timeout_ms = 15 * 60 * 1000;
	b.proxy.header_timeout_ms = 10 * 1000;
	b.proxy.max_connections = 10000;
	b.proxy.max_headers = 100;
	b.proxy.max_header_bytes = 32 * 1024;

	/* A NUL byte is reported by the reader with its line. */
	check_sections(&b);
	rc = ini_parse_stream(reader, &b, handler, &b);
	if (rc < 0)
		err_at(&b, 0, "could not be parsed (%d)", rc);
	else if (rc > 0 && b.nerrors == 0)
		err_at(&b, rc, "malformed line");
	c = build(&b, name, text, len, ov);
	builder_clear(&b);
	return c;
}

/* ---- StrictModes ---------------------------------------------------------- */

struct trust {
	uid_t uid[4];
	size_t n;
};

static int
trusted(const struct trust *t, uid_t u)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->uid[i] == u)
			return 1;
	return 0;
}

static const char *
who_writes(mode_t m)
{
	return (m & S_IWGRP) && (m & S_IWOTH) ? "its group and by others" :
	    (m & S_IWGRP) ? "its group" : "others";
}

/*
 * Nonzero when PATH is on a read-only mount: nobody can write it through
 * this view, whatever its mode says.  A Kubernetes ConfigMap volume's root
 * is 0777 (the kubelet's emptyDir), mounted read-only into the container;
 * only the kubelet, outside, writes it.  Only directories get this
 * allowance: another, writable mount of the same file system (a volume the
 * agent's container shares) could still write a group- or world-writable
 * file in place, and a ConfigMap's files are 0644 anyway.  What a writable
 * directory would let another uid put there is a file of its own, which
 * the owner check refuses.
 */
static int
read_only_mount(const char *path)
{
	struct statvfs sv;

	return statvfs(path, &sv) == 0 && (sv.f_flag & ST_RDONLY) != 0;
}

/*
 * Check every directory from the one holding FILE (an absolute path with
 * no symlinks) up to /.  The first one holds the file itself; only above
 * it may a sticky root-owned directory be writable by all (/tmp), because
 * there nobody but its owner can rename or remove the entry below.
 */
static void
check_dirs(struct builder *b, const char *file, const struct trust *t)
{
	char dir[PATH_MAX], *slash;
	struct stat st;
	int first = 1;

	if (strlen(file) >= sizeof(dir))
		return;
	strcpy(dir, file);
	for (;;) {
		slash = strrchr(dir, '/');
		if (slash == NULL)
			return;
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (lstat(dir, &st) != 0) {
			err_at(b, 0, "cannot check directory %s: %s", dir, strerror(errno));
			return;
		}
		if (!S_ISDIR(st.st_mode)) {
			err_at(b, 0, "%s is not a directory", dir);
		} else if (!trusted(t, st.st_uid)) {
			err_at(b, 0, "directory %s is owned by uid %u, not by root or the proxy's own "
			    "user: that uid could replace the config and widen the policy",
			    dir, (unsigned)st.st_uid);
		} else if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && read_only_mount(dir)) {
			/* Writable by its mode, but not on this mount. */
		} else if (first && (st.st_mode & S_ISVTX) && (st.st_mode & (S_IWGRP | S_IWOTH))) {
			err_at(b, 0, "directory %s is writable by %s (mode %04o, sticky): anyone may "
			    "create the config's name there while it is gone; keep the config in a "
			    "directory that only root may write", dir, who_writes(st.st_mode),
			    (unsigned)(st.st_mode & 07777));
		} else if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 &&
		    !(!first && (st.st_mode & S_ISVTX) && st.st_uid == 0)) {
			err_at(b, 0, "directory %s is writable by %s (mode %04o): they could replace "
			    "the config and widen the policy; chmod go-w %s", dir,
			    who_writes(st.st_mode), (unsigned)(st.st_mode & 07777), dir);
		}
		if (strcmp(dir, "/") == 0)
			return;
		first = 0;
	}
}

/* StrictModes for PATH, open with status FST (see cf_config_load()). */
static void
check_modes(struct builder *b, const char *path, const struct stat *fst, const struct trust *t)
{
	char *real = NULL, *pdir = NULL, *rdir = NULL, *slash;
	struct stat st;
	size_t n;

	real = realpath(path, NULL);
	if (real == NULL) {
		err_at(b, 0, "cannot resolve: %s", strerror(errno));
		goto out;
	}
	if (stat(real, &st) != 0 || st.st_dev != fst->st_dev || st.st_ino != fst->st_ino) {
		err_at(b, 0, "changed while being checked; try again");
		goto out;
	}
	if (!trusted(t, fst->st_uid))
		err_at(b, 0, "owned by uid %u, not by root or the proxy's own user: that uid "
		    "could widen the policy; chown it to root", (unsigned)fst->st_uid);
	if ((fst->st_mode & (S_IWGRP | S_IWOTH)) != 0)
		err_at(b, 0, "writable by %s (mode %04o): they could widen the policy; chmod go-w %s",
		    who_writes(fst->st_mode), (unsigned)(fst->st_mode & 07777), real);
	check_dirs(b, real, t);
	/* The directory that holds PATH's own entry, when PATH is a symlink
	 * elsewhere (a ConfigMap's postern.ini -> ..data/postern.ini): whoever
	 * may write there may point the link at another file. */
	slash = strrchr(path, '/');
	if (slash == NULL)
		pdir = strdup(".");
	else if (slash == path)
		pdir = strdup("/");
	else
		pdir = strndup(path, (size_t)(slash - path));
	if (pdir == NULL)
		goto out;
	rdir = realpath(pdir, NULL);
	if (rdir == NULL) {
		err_at(b, 0, "cannot resolve directory %s: %s", pdir, strerror(errno));
		goto out;
	}
	slash = strrchr(real, '/');
	n = slash == real ? 1 : (size_t)(slash - real);
	if (strlen(rdir) != n || strncmp(rdir, slash == real ? "/" : real, n) != 0) {
		char *f = NULL;
		if (asprintf(&f, "%s/x", strcmp(rdir, "/") == 0 ? "" : rdir) >= 0)
			check_dirs(b, f, t);
		free(f);
	}
out:
	free(real);
	free(pdir);
	free(rdir);
}

struct cf_config *
cf_config_load(const char *path, const struct cf_overrides *ov, struct cf_diag *diag)
{
	struct cf_config *c = NULL;
	char *buf = NULL;
	size_t len = 0;
	int fd = -1;
	struct stat st;

	if (path == NULL) {
		const char *t = cf_default_text();
		return cf_config_parse("<built-in>", t, strlen(t), ov, diag);
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		struct builder b;
		memset(&b, 0, sizeof(b));
		b.file = path;
		b.diag = diag;
		err_at(&b, 0, "cannot read: %s", strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > MAX_CONFIG_BYTES) {
		struct builder b;
		memset(&b, 0, sizeof(b));
		b.file = path;
		b.diag = diag;
		err_at(&b, 0, "%s", S_ISREG(st.st_mode) ? "larger than 1 MiB" : "not a regular file");
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (buf == NULL)
		goto out;
	for (;;) {
		ssize_t n = read(fd, buf + len, (size_t)st.st_size + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			struct builder b;
			memset(&b, 0, sizeof(b));
			b.file = path;
			b.diag = diag;
			err_at(&b, 0, "cannot read: %s", strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > (size_t)st.st_size) {
			struct builder b;
			memset(&b, 0, sizeof(b));
			b.file = path;
			b.diag = diag;
			err_at(&b, 0, "changed while being read; try again");
			goto out;
		}
	}
	c = cf_config_parse(path, buf, len, ov, diag);
	/* A file with errors is refused anyway; its ownership is judged once
	 * it is valid, when the user it names is known. */
	if (c != NULL && ov != NULL && ov->strict_modes) {
		struct builder b;
		struct trust t;
		memset(&b, 0, sizeof(b));
		b.file = path;
		b.diag = diag;
		memset(&t, 0, sizeof(t));
		t.uid[t.n++] = 0;
		t.uid[t.n++] = geteuid();
		if (ov->has_user)
			t.uid[t.n++] = ov->user;
		else if (ov->trust_file_user && c->proxy.has_user)
			t.uid[t.n++] = c->proxy.user;
		check_modes(&b, path, &st, &t);
		if (b.nerrors > 0) {
			cf_config_free(c);
			c = NULL;
		}
	}
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return c;
}

struct cf_config *
cf_config_ref(struct cf_config *c)
{
	c->refs++;
	return c;
}

void
cf_config_free(struct cf_config *c)
{
	if (c == NULL || --c->refs > 0)
		return;
	config_destroy(c);
}

const char *cf_config_path(const struct cf_config *c) { return c->path; }
const char *cf_config_hash(const struct cf_config *c) { return c->hash; }
const struct cf_proxy_settings *cf_config_proxy(const struct cf_config *c) { return &c->proxy; }
size_t cf_config_nsessions(const struct cf_config *c) { return c->nsessions; }
size_t cf_config_nrules(const struct cf_config *c) { return c->nrules; }

const struct cf_pin *
cf_config_pin(const struct cf_config *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->npins; i++)
		if (strcmp(c->pins[i].name, name) == 0)
			return &c->pins[i];
	return NULL;
}

const struct cf_pin *
cf_config_pin_at(const struct cf_config *c, size_t i)
{
	return i < c->npins ? &c->pins[i] : NULL;
}

const struct cf_session *
cf_config_session(const struct cf_config *c, size_t i)
{
	return i < c->nsessions ? &c->sessions[i] : NULL;
}

const struct cf_session *
cf_config_find_session(const struct cf_config *c, const char *name)
{
	size_t i;

	if (strcmp(name, "default") == 0 && c->nsessions > 0)
		return &c->sessions[0];
	for (i = 0; i < c->nsessions; i++)
		if (strcmp(c->sessions[i].name, name) == 0)
			return &c->sessions[i];
	return NULL;
}

const struct cf_rule *
cf_config_rule(const struct cf_config *c, unsigned id)
{
	return id < c->nrules ? c->rules[id] : NULL;
}

/* ---- decisions ---------------------------------------------------------- */

static const char *const reason_codes[] = {
	[CF_R_ALLOWED] = "allowed",
	[CF_R_HOST_NOT_ALLOWED] = "host_not_allowed",
	[CF_R_PORT_NOT_ALLOWED] = "port_not_allowed",
	[CF_R_PATH_NOT_ALLOWED] = "path_not_allowed",
	[CF_R_DENIED_BY_RULE] = "denied_by_rule",
	[CF_R_PRIVATE_ADDRESS] = "private_address",
	[CF_R_BAD_REQUEST] = "bad_request",
	[CF_R_HOST_MISMATCH] = "host_mismatch",
	[CF_R_DNS_FAILURE] = "dns_failure",
	[CF_R_CONNECT_FAILURE] = "connect_failure",
	[CF_R_TIMEOUT] = "timeout",
	[CF_R_SNI_MISMATCH] = "sni_mismatch",
	[CF_R_UNAVAILABLE] = "unavailable",
	[CF_R_SESSION_CONNECTION_LIMIT] = "session_connection_limit",
	[CF_R_UID_CONNECTION_LIMIT] = "uid_connection_limit",
	[CF_R_SESSION_REMOVED] = "session_removed",
	[CF_R_BAD_UPSTREAM_RESPONSE] = "bad_upstream_response",
};

const char *
cf_reason_code(enum cf_reason r)
{
	if ((size_t)r < sizeof(reason_codes) / sizeof(reason_codes[0]) && reason_codes[r])
		return reason_codes[r];
	return "unknown";
}

void
cf_decide(const struct cf_session *s, enum cf_mode mode, const struct cf_host *h, uint16_t port,
    const char *path, size_t len, struct cf_decision *d)
{
	const struct cf_rule *host_match = NULL, *port_match = NULL, *best = NULL;
	char hbuf[CF_HOST_TEXT_MAX];
	size_t i;

	memset(d, 0, sizeof(*d));
	cf_host_format(h, hbuf, sizeof(hbuf));

	/* Deny wins: any deny rule that covers host and port decides. */
	for (i = 0; i < s->ndeny; i++) {
		const struct cf_rule *r = s->deny[i];
		if (cf_rule_match_host(r, h) && cf_rule_match_port(r, mode, port)) {
			d->reason = CF_R_DENIED_BY_RULE;
			d->rule = r;
			snprintf(d->detail, sizeof(d->detail),
			    "%s:%u is denied by deny_hosts = %s (%s:%d) in session %s",
			    hbuf, port, r->text, r->file, r->line, s->name);
			return;
		}
	}

	for (i = 0; i < s->nallow; i++) {
		const struct cf_rule *r = s->allow[i];
		if (!cf_rule_match_host(r, h))
			continue;
		if (host_match == NULL)
			host_match = r;
		if (!cf_rule_match_port(r, mode, port))
			continue;
		if (port_match == NULL)
			port_match = r;
		/* CONNECT cannot be narrowed by path: a path rule never allows
		 * a tunnel. */
		if (r->path != NULL && (mode == CF_MODE_CONNECT || !cf_rule_match_path(r, path, len)))
			continue;
		/* Prefer a rule that grants "private": it is the admin's most
		 * explicit word about this host.  Among equals, prefer one
		 * without a path: a path rule narrows what the request may
		 * carry (proxy/conn.c refuses path-override headers under
		 * one), and a host rule that admits the request outright is
		 * the one that decided. */
		if (best == NULL || (r->private_ok && !best->private_ok) ||
		    (r->private_ok == best->private_ok && best->path != NULL && r->path == NULL))
			best = r;
	}
	if (best != NULL) {
		d->allow = 1;
		d->reason = CF_R_ALLOWED;
		d->rule = best;
		snprintf(d->detail, sizeof(d->detail), "allowed by allow_hosts = %s (%s:%d)",
		    best->text, best->file, best->line);
		return;
	}
	if (port_match != NULL) {
		d->reason = CF_R_PATH_NOT_ALLOWED;
		d->rule = port_match;
		if (mode == CF_MODE_CONNECT)
			snprintf(d->detail, sizeof(d->detail),
			    "%s:%u is allowed only for plain-HTTP paths under %s (%s:%d); CONNECT cannot be narrowed by path",
			    hbuf, port, port_match->path ? port_match->path : "/", port_match->file, port_match->line);
		else
			snprintf(d->detail, sizeof(d->detail),
			    "%s:%u is allowed only for paths under %s (%s:%d) in session %s",
			    hbuf, port, port_match->path ? port_match->path : "/", port_match->file,
			    port_match->line, s->name);
		if (mode == CF_MODE_CONNECT)
			d->reason = CF_R_HOST_NOT_ALLOWED;
		return;
	}
	if (host_match != NULL) {
		d->reason = CF_R_PORT_NOT_ALLOWED;
		d->rule = host_match;
		snprintf(d->detail, sizeof(d->detail),
		    "port %u of %s is not allowed in session %s (allow_hosts = %s at %s:%d covers other ports)",
		    port, hbuf, s->name, host_match->text, host_match->file, host_match->line);
		return;
	}
	d->reason = CF_R_HOST_NOT_ALLOWED;
	snprintf(d->detail, sizeof(d->detail), "no rule matches %s:%u in session %s", hbuf, port, s->name);
}

/* Is SA (unmapped, AF_INET or AF_INET6) the unspecified address? */
static int
unspecified(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
	return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr);
}

static in_port_t
port_of(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)sa)->sin_port;
	return ((const struct sockaddr_in6 *)(const void *)sa)->sin6_port;
}

/*
 * Would a connection to B reach the proxy's listener bound to L, IPv4-mapped
 * forms unwrapped?  Besides the very address and port:
 *   - a connection to the unspecified address (0.0.0.0, ::) goes to the
 *     host itself (Linux dials loopback for it), so it reaches a listener
 *     on loopback or on the unspecified address of that family;
 *   - a listener on the unspecified address (0.0.0.0; [::], which the proxy
 *     binds dual-stack, takes IPv4 too) takes connections to every address
 *     of the host, which the config cannot list: every never-reachable
 *     address on its port counts (loopback, and the private addresses an
 *     interface of the host is likely to have).  A public address of the
 *     host is not caught; SECURITY.md says so.
 */
static int
reaches_listener(const struct sockaddr *l, const struct sockaddr *b)
{
	struct sockaddr_in tl, tb;
	int lany, bany;

	l = cf_sockaddr_unmap(l, &tl);
	b = cf_sockaddr_unmap(b, &tb);
	if ((l->sa_family != AF_INET && l->sa_family != AF_INET6) ||
	    (b->sa_family != AF_INET && b->sa_family != AF_INET6))
		return 0;
	if (port_of(l) != port_of(b))
		return 0;
	lany = unspecified(l);
	bany = unspecified(b);
	if (lany && (l->sa_family == b->sa_family || l->sa_family == AF_INET6) &&
	    (bany || cf_range_sockaddr(b) != NULL))
		return 1;
	if (l->sa_family != b->sa_family)
		return 0;
	if (l->sa_family == AF_INET) {
		const struct sockaddr_in *x = (const struct sockaddr_in *)(const void *)l;
		const struct sockaddr_in *y = (const struct sockaddr_in *)(const void *)b;
		if (bany)
			return (ntohl(x->sin_addr.s_addr) >> 24) == 127;
		return x->sin_addr.s_addr == y->sin_addr.s_addr;
	} else {
		const struct sockaddr_in6 *x = (const struct sockaddr_in6 *)(const void *)l;
		const struct sockaddr_in6 *y = (const struct sockaddr_in6 *)(const void *)b;
		if (bany)
			return IN6_IS_ADDR_LOOPBACK(&x->sin6_addr);
		return memcmp(&x->sin6_addr, &y->sin6_addr, 16) == 0;
	}
}

void
cf_decide_addr(const struct cf_config *c, const struct cf_session *s,
    const struct cf_decision *allowed, const struct sockaddr *sa, struct cf_decision *d)
{
	char abuf[INET6_ADDRSTRLEN];
	const char *range;
	uint16_t port = 0;
	size_t i;

	memset(d, 0, sizeof(*d));
	abuf[0] = '\0';
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)(const void *)sa;
		inet_ntop(AF_INET, &sin->sin_addr, abuf, sizeof(abuf));
		port = ntohs(sin->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)(const void *)sa;
		inet_ntop(AF_INET6, &sin6->sin6_addr, abuf, sizeof(abuf));
		port = ntohs(sin6->sin6_port);
	} else {
		d->reason = CF_R_PRIVATE_ADDRESS;
		snprintf(d->detail, sizeof(d->detail), "not an IP address");
		return;
	}

	/* The proxy must never be pointed at itself, under any spelling of
	 * its address: ::ffff:127.0.0.1 reaches a listener on 127.0.0.1. */
	for (i = 0; c != NULL && i < c->nlistens; i++) {
		const struct cf_listen *l = &c->listens[i];
		if (l->kind == CF_LISTEN_TCP &&
		    reaches_listener((const struct sockaddr *)&l->addr, sa)) {
			d->reason = CF_R_PRIVATE_ADDRESS;
			snprintf(d->detail, sizeof(d->detail), "%s port %u is the proxy's own listener %s",
			    abuf, port, l->text);
			return;
		}
	}

	for (i = 0; i < s->ndeny; i++) {
		const struct cf_rule *r = s->deny[i];
		if (cf_rule_match_sockaddr(r, sa) &&
		    cf_rule_match_port(r, CF_MODE_CONNECT, port)) {
			d->reason = CF_R_DENIED_BY_RULE;
			d->rule = r;
			snprintf(d->detail, sizeof(d->detail),
			    "address %s is denied by deny_hosts = %s (%s:%d)", abuf, r->text, r->file, r->line);
			return;
		}
	}

	d->rule = allowed ? allowed->rule : NULL;
	range = cf_range_sockaddr(sa);
	if (range != NULL) {
		const struct cf_rule *r = d->rule;
		int named = r != NULL && (r->kind == CF_PAT_NET4 || r->kind == CF_PAT_NET6) &&
		    cf_rule_match_sockaddr(r, sa);
		if (r == NULL || !(r->private_ok || named)) {
			d->reason = CF_R_PRIVATE_ADDRESS;
			snprintf(d->detail, sizeof(d->detail),
			    "resolved to %s, in the never-reachable range %s; add the \"private\" flag to the rule to allow it",
			    abuf, range);
			return;
		}
	}
	d->allow = 1;
	d->reason = CF_R_ALLOWED;
	snprintf(d->detail, sizeof(d->detail), "address %s is allowed%s", abuf,
	    range ? " (private, by the rule's flag or address)" : "");
}

int
cf_decide_addrs(const struct cf_config *c, const struct cf_session *s,
    const struct cf_decision *allowed, const struct sockaddr_storage *addrs, size_t n,
    struct cf_decision *d, size_t *bad)
{
	size_t i;

	if (bad != NULL)
		*bad = 0;
	if (n == 0) {
		memset(d, 0, sizeof(*d));
		d->reason = CF_R_PRIVATE_ADDRESS;
		snprintf(d->detail, sizeof(d->detail), "no address");
		return 0;
	}
	for (i = 0; i < n; i++) {
		cf_decide_addr(c, s, allowed, (const struct sockaddr *)&addrs[i], d);
		if (!d->allow) {
			if (bad != NULL)
				*bad = i;
			return 0;
		}
	}
	return 1;
}

char *
cf_suggest(const struct cf_session *s, enum cf_mode mode, const struct cf_host *h,
    uint16_t port, const char *path, size_t len, const struct cf_decision *d,
    char *buf, size_t size)
{
	char hbuf[CF_HOST_TEXT_MAX], portbuf[16] = "";
	char section[96], pat[CF_HOST_TEXT_MAX + 600];
	uint16_t dflt = mode == CF_MODE_CONNECT ? 443 : 80;
	/* A rule that needed "private" to reach its address: the one that
	 * widens it to another port or path needs it too. */
	const char *priv = d->rule != NULL && d->rule->private_ok ? " private" : "";

	buf[0] = '\0';
	pat[0] = '\0';
	cf_host_format(h, hbuf, sizeof(hbuf));
	if (port != dflt)
		snprintf(portbuf, sizeof(portbuf), ":%u", port);
	if (s->is_default)
		snprintf(section, sizeof(section), "[defaults]");
	else
		snprintf(section, sizeof(section), "[session %s]", s->name);

	switch (d->reason) {
	case CF_R_HOST_NOT_ALLOWED:
	case CF_R_PORT_NOT_ALLOWED:
		snprintf(pat, sizeof(pat), "%s%s%s", hbuf, portbuf, priv);
		break;
	case CF_R_PATH_NOT_ALLOWED: {
		/* Suggest the request's first path segment as the prefix. */
		size_t n = 1;
		if (path == NULL || len == 0) {
			path = "/";
			len = 1;
		}
		/* No prefix admits a path with a dot segment, ';' or a
		 * non-unreserved escape, and a path the rule already admits
		 * was refused for a header: no prefix to suggest. */
		if (!cf_rule_match_path(NULL, path, len) ||
		    (d->rule != NULL && d->rule->path != NULL && cf_rule_match_path(d->rule, path, len)))
			break;
		while (n < len && path[n] != '/' && path[n] != '?')
			n++;
		if (n < len && path[n] == '/')
			n++;
		snprintf(pat, sizeof(pat), "%s%s%.*s%s", hbuf, portbuf, (int)n, path, priv);
		break;
	}
	case CF_R_PRIVATE_ADDRESS:
		/* No allowing rule behind it: the proxy's own listener, or not
		 * IP at all; "private" would change nothing. */
		if (d->rule == NULL)
			break;
		if (s->cli_hints)
			snprintf(buf, size, "if this private address is intended, pass --allow '%s%s private'",
			    hbuf, portbuf);
		else
			snprintf(buf, size, "if this private address is intended, add to %s: allow_hosts = %s%s private",
			    section, hbuf, portbuf);
		break;
	case CF_R_DENIED_BY_RULE:
		if (d->rule != NULL)
			snprintf(buf, size, "denied on purpose by deny_hosts = %s (%s:%d); deny wins over allow",
			    d->rule->text, d->rule->file, d->rule->line);
		break;
	default:
		break;
	}
	if (pat[0] != '\0') {
		if (s->cli_hints)
			snprintf(buf, size, "pass --allow '%s'", pat);
		else
			snprintf(buf, size, "add to %s: allow_hosts = %s", section, pat);
	}
	return buf;
}
