/*
 * conf/keys.c: the keys of a config file (see keys.h): the value parsers,
 * the listeners, rules and [hosts] pins they build, and one table of keys
 * per section that drives inih's handler.
 */
#include "conf/keys.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "base/cursor.h"
#include "base/sockmsg.h"
#include "conf/build.h"
#include "conf/canary.h"
#include "conf/config.h"
#include "conf/pins.h"
#include "conf/token.h"

/* ---- value parsers ------------------------------------------------------ */

/* "500ms", "10s", "15m", "1h": a positive number with a unit, at most 30
 * days. */
static int
parse_duration(const char *s, unsigned *ms, const char **why)
{
	size_t len = strlen(s), n = 0;
	uint64_t v, mult;

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
	if (bs_num_parse(s, n, 30ULL * 24 * 3600 * 1000, 0, &v) != 0 || v == 0 ||
	    v * mult > 30ULL * 24 * 3600 * 1000) {
		*why = "duration must be above zero, at most 30 days, without leading zeros";
		return -EINVAL;
	}
	*ms = (unsigned)(v * mult);
	return 0;
}

int
cf_duration_parse(const char *s, unsigned *ms, const char **why)
{
	return parse_duration(s, ms, why);
}

/* "32768", "32k", "1m". */
static int
parse_size(const char *s, size_t *out, const char **why)
{
	size_t len = strlen(s), n = len;
	uint64_t v, mult = 1;

	if (len > 0 && (s[len - 1] == 'k' || s[len - 1] == 'K')) {
		mult = 1024;
		n--;
	} else if (len > 0 && (s[len - 1] == 'm' || s[len - 1] == 'M')) {
		mult = 1024 * 1024;
		n--;
	}
	if (bs_num_parse(s, n, 1ULL << 30, 0, &v) != 0 || v == 0) {
		*why = "a size is a positive number, optionally with k or m";
		return -EINVAL;
	}
	*out = (size_t)(v * mult);
	return 0;
}

/* The options after a UNIX listener's path: "owner=UID group=GID
 * mode=OCTAL", separated by blanks. */
static int
listen_options(const char *p, struct cf_listen *l, const char **why)
{
	for (;;) {
		const char *w, *eq;
		size_t n, klen;
		uint64_t v;
		while (cfb_blank(*p))
			p++;
		if (*p == '\0')
			return 0;
		w = p;
		while (*p != '\0' && !cfb_blank(*p))
			p++;
		n = (size_t)(p - w);
		eq = memchr(w, '=', n);
		klen = eq ? (size_t)(eq - w) : n;
		if (eq != NULL && klen == 5 && memcmp(w, "owner", 5) == 0) {
			if (l->has_owner) {
				*why = "owner= is given twice";
				return -EINVAL;
			}
			if (bs_num_parse(eq + 1, n - 6, 0x7fffffff, 0, &v) != 0) {
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
			if (bs_num_parse(eq + 1, n - 6, 0x7fffffff, 0, &v) != 0) {
				*why = "group= takes a numeric gid (there is no /etc/group in a scratch image)";
				return -EINVAL;
			}
			l->has_group = 1;
			l->group = (gid_t)v;
		} else if (eq != NULL && klen == 4 && memcmp(w, "mode", 4) == 0) {
			const char *d = eq + 1;
			size_t dn = n - 5;
			uint64_t m;
			int rc;
			if (l->has_mode) {
				*why = "mode= is given twice";
				return -EINVAL;
			}
			/* Three octal digits, or four with a leading 0: 0660, 660. */
			rc = bs_num_parse(d, dn, 0777, BS_NUM_ZEROS | BS_NUM_OCTAL, &m);
			if (rc == -ERANGE) {
				*why = "mode= takes permission bits only, at most 0777 (no setuid, setgid or sticky bit)";
				return -EINVAL;
			}
			if (rc < 0 || dn < 3 || dn > 4) {
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
		while (path[n] != '\0' && !cfb_blank(path[n]))
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
		const char *o;
		while (s[4 + n] != '\0' && !cfb_blank(s[4 + n]))
			n++;
		/* One option: auth=token (a session chosen by its token). */
		for (o = s + 4 + n; cfb_blank(*o); o++)
			;
		if (strncmp(o, "auth=token", 10) == 0) {
			l->auth_token = 1;
			for (o += 10; cfb_blank(*o); o++)
				;
		}
		if (*o != '\0') {
			*why = strncmp(o, "auth=", 5) == 0 ? "auth= takes token only (auth=token)" :
			    "owner=, group= and mode= apply to unix: listeners only (a TCP listener "
			    "takes auth=token)";
			return -EINVAL;
		}
		if (cf_authority_parse(s + 4, n, 0, &h, &port, why) != 0)
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

int
cfk_add_listen(struct cf_build *b, struct cf_listen **v, size_t *n, const char *value)
{
	struct cf_listen l, *nv;
	const char *why = NULL;

	if (cf_listen_parse(value, &l, &why) != 0) {
		char buf[120];
		cfb_show(buf, sizeof(buf), value);
		cfb_err(b, b->line, "%s (%s)", why ? why : "bad listener", buf);
		return -EINVAL;
	}
	l.file = b->file;
	l.line = b->line;
	nv = realloc(*v, (*n + 1) * sizeof(*nv));
	if (nv == NULL) {
		free(l.text);
		cfb_err(b, b->line, "out of memory");
		return -ENOMEM;
	}
	nv[(*n)++] = l;
	*v = nv;
	return 0;
}

/* A comma-separated list of items, each one rule. */
void
cfk_add_rules(struct cf_build *b, struct cf_sess_build *s, enum cf_rule_type type, const char *value,
    const char *file, int line)
{
	const char *p = value;

	for (;;) {
		/* An item ends at a comma, but not at one inside its
		 * methods= flag (cf_rule_item_len()). */
		size_t len = cf_rule_item_len(p);
		const char *comma = p[len] == ',' ? p + len : NULL;
		struct cf_rule r, **vp, *nv;
		size_t *np;
		const char *why = NULL;
		size_t i, nonblank = 0;

		for (i = 0; i < len; i++)
			nonblank += !cfb_blank(p[i]);
		if (nonblank == 0) {
			cfb_err(b, line, "empty item in list (%s)", value);
		} else if (cf_rule_parse(p, len, type, &r, &why) != 0) {
			char item[200], buf[120];
			const char *q = p;
			size_t n, qlen = len;
			while (qlen > 0 && cfb_blank(*q))
				q++, qlen--;
			while (qlen > 0 && cfb_blank(q[qlen - 1]))
				qlen--;
			n = qlen < sizeof(item) - 1 ? qlen : sizeof(item) - 1;
			memcpy(item, q, n);
			item[n] = '\0';
			cfb_show(buf, sizeof(buf), item);
			if (file == b->file) {
				cfb_err(b, line, "%s (%s)", why ? why : "bad pattern", buf);
			} else {
				const char *saved = b->file;
				b->file = file;
				cfb_err(b, line, "%s (%s)", why ? why : "bad pattern", buf);
				b->file = saved;
			}
		} else {
			r.file = file;
			r.line = line;
			if (r.taken_as != NULL) {
				char buf[120], tbuf[120];
				cfb_show(buf, sizeof(buf), r.text);
				cfb_show(tbuf, sizeof(tbuf), r.taken_as);
				if (line > 0)
					cfb_warn(b->diag, "%s:%d: %s taken as %s", file, line, buf, tbuf);
				else
					cfb_warn(b->diag, "%s: %s taken as %s", file, buf, tbuf);
			}
			vp = type == CF_RULE_ALLOW ? &s->allow : &s->deny;
			np = type == CF_RULE_ALLOW ? &s->nallow : &s->ndeny;
			nv = realloc(*vp, (*np + 1) * sizeof(*nv));
			if (nv == NULL) {
				cf_rule_clear(&r);
				cfb_err(b, line, "out of memory");
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

/* ---- the setters, one per kind of value ---------------------------------- */

struct key;

/*
 * Apply VALUE (SHOWN: escaped for messages) of key K to the [proxy]
 * settings (S NULL) or to the session S, or report why not.
 */
typedef void key_set_fn(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown);

/* A word a key takes, and the value it stands for. */
struct choice {
	const char *word;
	int value;
};

struct key {
	const char *name;
	key_set_fn *set;
	unsigned flags;
	/* Bounds of a count or a size, inclusive. */
	unsigned long long min, max;
	/* The value in force when the file does not set it. */
	unsigned long long dflt;
	/* The field it sets (OFF, SIZE bytes), in struct cf_proxy_settings
	 * for a [proxy] key, in struct cf_sess_build for a session's; a
	 * session's count also notes its line at OFF_LINE. */
	size_t off, size, off_line;
	const struct choice *choices; /* the words it takes, NULL-ended */
	int arg;                      /* the rule type of allow/deny_hosts */
	/* [proxy]: its value in force as a file would write it, for --check
	 * (cf_config_show_proxy()); NULL: shown elsewhere (listen). */
	void (*show)(const struct key *k, const struct cf_proxy_settings *p, char *buf, size_t size);
};

#define K_LIST        1u /* each line adds to the list: never "given twice" */
#define K_NO_DEFAULTS 2u /* in a [session NAME], not in [defaults] */

static char *
field(struct cf_build *b, struct cf_sess_build *s, size_t off)
{
	return s != NULL ? (char *)s + off : (char *)&b->proxy + off;
}

/* Store V in the unsigned, int or size_t field F of SIZE bytes. */
static void
put(char *f, size_t size, unsigned long long v)
{
	if (size == sizeof(size_t)) {
		size_t x = (size_t)v;
		memcpy(f, &x, sizeof(x));
	} else {
		unsigned x = (unsigned)v;
		memcpy(f, &x, sizeof(x));
	}
}

static void
set_listen(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	(void)k;
	(void)shown;
	if (s == NULL) {
		cfk_add_listen(b, &b->plisten, &b->nplisten, value);
	} else if (cfk_add_listen(b, &s->listen, &s->nlisten, value) == 0 &&
	    s->listen[s->nlisten - 1].auth_token) {
		/* A session's own listener is its credential already. */
		cfb_err(b, b->line, "auth=token belongs on a [proxy] listener, which serves every "
		    "session with a token_file (%s)", shown);
		free(s->listen[--s->nlisten].text);
	}
}

/* token_file = PATH: read now, at every load (conf/token.h). */
static void
set_token_file(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	char why[200];
	int loose = 0;

	(void)k;
	if (value[0] != '/') {
		cfb_err(b, b->line, "token_file is an absolute path (%s)", shown);
		return;
	}
	if (cf_token_read(value, s->token_md, &loose, why, sizeof(why)) != 0) {
		cfb_err(b, b->line, "token_file %s: %s", shown, why);
		return;
	}
	s->token_line = b->line;
	if (loose)
		cfb_warn(b->diag, "%s:%d: token_file %s is readable by its group or others: whoever "
		    "reads it is session %s (chmod 0400 or 0600)", b->file, b->line, shown, s->name);
}

static void
set_admin(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	struct cf_listen *one = NULL;
	size_t n = 0;

	(void)k;
	(void)s;
	if (cfk_add_listen(b, &one, &n, value) == 0) {
		if (one[0].kind != CF_LISTEN_UNIX) {
			cfb_err(b, b->line, "the admin socket must be unix:PATH (%s)", shown);
			free(one[0].text);
		} else if (one[0].has_owner || one[0].has_group || one[0].has_mode) {
			cfb_err(b, b->line, "the admin socket takes no owner=, group= or mode= "
			    "(it is 0600, or 0660 with admin_group) (%s)", shown);
			free(one[0].text);
		} else {
			b->proxy.admin = one[0];
		}
	}
	free(one);
}

/* metrics = tcp:ADDR:PORT: GET /metrics alone, read-only (admin.h). */
static void
set_metrics(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	struct cf_listen l;
	const char *why = NULL;

	(void)k;
	(void)s;
	if (cf_listen_parse(value, &l, &why) != 0) {
		cfb_err(b, b->line, "metrics = %s: %s", shown, why ? why : "bad listener");
		return;
	}
	if (l.kind != CF_LISTEN_TCP || l.auth_token) {
		cfb_err(b, b->line, "metrics is tcp:ADDR:PORT with a numeric address and no "
		    "option: it serves GET /metrics to whoever reaches it (%s)", shown);
		free(l.text);
		return;
	}
	l.file = b->file;
	l.line = b->line;
	b->proxy.metrics = l;
}

static void
set_admin_group(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	struct cf_proxy_settings *p = &b->proxy;
	uint64_t v = 0;

	(void)k;
	(void)s;
	if (bs_num_parse(value, strlen(value), 0x7fffffff, 0, &v) != 0)
		cfb_err(b, b->line, "admin_group must be a numeric gid (%s)", shown);
	else {
		p->has_admin_group = 1;
		p->admin_group = (gid_t)v;
	}
}

/* Numeric: there is no /etc/passwd in a scratch image. */
static void
set_user(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	struct cf_proxy_settings *p = &b->proxy;
	const char *colon = strchr(value, ':');
	size_t ulen = colon ? (size_t)(colon - value) : strlen(value);
	uint64_t v = 0, g = 0;
	int ok;

	(void)k;
	(void)s;
	ok = bs_num_parse(value, ulen, 0x7fffffff, 0, &v) == 0;
	if (ok && colon != NULL)
		ok = bs_num_parse(colon + 1, strlen(colon + 1), 0x7fffffff, 0, &g) == 0;
	else
		g = v;
	if (!ok)
		cfb_err(b, b->line, "user must be a numeric uid or uid:gid (%s)", shown);
	else {
		p->has_user = 1;
		p->user = (uid_t)v;
		p->group = (gid_t)g;
	}
}

static void
set_log(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	(void)k;
	(void)s;
	if (strcmp(value, "stderr") != 0 && value[0] != '/')
		cfb_err(b, b->line, "log is \"stderr\" or an absolute file path (%s)", shown);
	else {
		free(b->proxy.log);
		b->proxy.log = strdup(value);
	}
}

/* An absolute path: state_dir (K->arg 0) or upstream_ca_file (1).  Whether
 * it exists is found out where it is used, at start and at each reload. */
static void
set_path(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	char **f = k->arg == 0 ? &b->proxy.state_dir : k->arg == 1 ? &b->proxy.upstream_ca_file :
	    k->arg == 3 ? &b->proxy.audit_signing_key : &b->proxy.grants_file;
	char *v;

	(void)s;
	if (value[0] != '/') {
		cfb_err(b, b->line, "%s must be an absolute path (%s)", k->name, shown);
		return;
	}
	if ((v = strdup(value)) == NULL) {
		cfb_err(b, b->line, "out of memory");
		return;
	}
	free(*f);
	*f = v;
}

/* socket_dir: the socket maker's root.  Normal (base/sockmsg.h), since
 * the maker compares paths with it as strings, and not "/". */
static void
set_socket_dir(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	const char *why;
	char *v;

	(void)s;
	if (bs_sockpath_normal(value, &why) < 0) {
		cfb_err(b, b->line, "%s must be an absolute path, not /, with no empty, \".\" or "
		    "\"..\" component, shorter than 108 bytes (%s)", k->name, shown);
		return;
	}
	if ((v = strdup(value)) == NULL) {
		cfb_err(b, b->line, "out of memory");
		return;
	}
	free(b->proxy.socket_dir);
	b->proxy.socket_dir = v;
}

/* Each server: an IP literal with an optional port, handed to c-ares as
 * is (blanks dropped) after this check. */
static void
set_dns_servers(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	const char *q = value, *why = NULL, *r;
	char *csv, *o;

	(void)k;
	(void)s;
	for (;;) {
		const char *comma = strchr(q, ',');
		size_t len = comma ? (size_t)(comma - q) : strlen(q);
		struct cf_host h;
		uint16_t port;
		while (len > 0 && cfb_blank(*q))
			q++, len--;
		while (len > 0 && cfb_blank(q[len - 1]))
			len--;
		if (cf_authority_parse(q, len, 0, &h, &port, &why) != 0 || h.kind == CF_HOST_NAME) {
			cfb_err(b, b->line, "dns_servers is a list of IP addresses with optional ports (%s)",
			    shown);
			return;
		}
		if (comma == NULL)
			break;
		q = comma + 1;
	}
	csv = malloc(strlen(value) + 1);
	if (csv != NULL) {
		for (o = csv, r = value; *r; r++)
			if (!cfb_blank(*r))
				*o++ = *r;
		*o = '\0';
	}
	free(b->proxy.dns_servers);
	b->proxy.dns_servers = csv;
}

/* One of K->choices; the error lists them: "is a, b or c". */
static void
set_choice(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	const struct choice *c;
	char words[120];
	size_t used = 0;

	for (c = k->choices; c->word != NULL; c++)
		if (strcmp(value, c->word) == 0) {
			put(field(b, s, k->off), k->size, (unsigned long long)c->value);
			return;
		}
	words[0] = '\0';
	for (c = k->choices; c->word != NULL && used < sizeof(words); c++) {
		int n = snprintf(words + used, sizeof(words) - used, "%s%s",
		    c == k->choices ? "" : c[1].word == NULL ? " or " : ", ", c->word);
		if (n < 0)
			break;
		used += (size_t)n;
	}
	cfb_err(b, b->line, "%s is %s (%s)", k->name, words, shown);
}

/* mode = enforce | report | ask, and its line (for the warning). */
static void
set_mode(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	set_choice(b, k, s, value, shown);
	if (s != NULL)
		memcpy(field(b, s, k->off_line), &b->line, sizeof(b->line));
}

static void
set_duration(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	const char *why = NULL;
	unsigned ms;

	if (parse_duration(value, &ms, &why) != 0)
		cfb_err(b, b->line, "%s: %s (%s)", k->name, why, shown);
	else if (ms < k->min)
		cfb_err(b, b->line, "%s must be %llu%s or more (%s)", k->name,
		    k->min % 1000 ? k->min : k->min / 1000, k->min % 1000 ? "ms" : "s", shown);
	else
		put(field(b, s, k->off), k->size, ms);
}

/* A count from K->min to K->max; a session's notes its line. */
static void
set_count(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	uint64_t v;

	if (bs_num_parse(value, strlen(value), k->max, 0, &v) != 0 || v < k->min) {
		cfb_err(b, b->line, "%s must be %llu-%llu (%s)", k->name, k->min, k->max, shown);
		return;
	}
	put(field(b, s, k->off), k->size, v);
	if (s != NULL)
		memcpy(field(b, s, k->off_line), &b->line, sizeof(b->line));
}

/* workers = auto | N: "auto" is stored as 0, for the engine to take the
 * CPUs the process may run on (sched_getaffinity) when it starts. */
static void
set_workers(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	(void)s;
	if (strcmp(value, "auto") == 0) {
		b->proxy.workers = 0;
		return;
	}
	set_count(b, k, NULL, value, shown);
	if (b->proxy.workers == 0)
		b->proxy.workers = 1;
}

/* A size in bytes as written in the file: 1024 as "1k", 1048576 as "1m". */
static void
size_text(char *buf, size_t size, unsigned long long n)
{
	if (n > 0 && n % (1024 * 1024) == 0)
		snprintf(buf, size, "%llum", n / (1024 * 1024));
	else if (n > 0 && n % 1024 == 0)
		snprintf(buf, size, "%lluk", n / 1024);
	else
		snprintf(buf, size, "%llu", n);
}

static void
set_size(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	const char *why = NULL;
	char lo[24], hi[24];
	size_t sz;

	if (parse_size(value, &sz, &why) != 0 || sz < k->min || sz > k->max) {
		size_text(lo, sizeof(lo), k->min);
		size_text(hi, sizeof(hi), k->max);
		cfb_err(b, b->line, "%s must be %s-%s (%s)", k->name, lo, hi, shown);
		return;
	}
	put(field(b, s, k->off), k->size, sz);
}

static void
set_rules(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	(void)shown;
	cfk_add_rules(b, s, (enum cf_rule_type)k->arg, value, b->file, b->line);
}

/* ---- what --check shows of [proxy] --------------------------------------- */

/* Read the unsigned, int or size_t field at F of SIZE bytes (put()'s
 * inverse). */
static unsigned long long
get(const char *f, size_t size)
{
	if (size == sizeof(size_t)) {
		size_t x;
		memcpy(&x, f, sizeof(x));
		return x;
	}
	{
		unsigned x;
		memcpy(&x, f, sizeof(x));
		return x;
	}
}

static unsigned long long
pfield(const struct key *k, const struct cf_proxy_settings *p)
{
	return get((const char *)p + k->off, k->size);
}

static void
show_count(const struct key *k, const struct cf_proxy_settings *p, char *buf, size_t size)
{
	snprintf(buf, size, "%llu", pfield(k, p));
}

static void
show_size(const struct key *k, const struct cf_proxy_settings *p, char *buf, size_t size)
{
	size_text(buf, size, pfield(k, p));
}

/* In the largest unit that writes it exactly: 10000 as "10s". */
static void
show_duration(const struct key *k, const struct cf_proxy_settings *p, char *buf, size_t size)
{
	unsigned long long ms = pfield(k, p);

	if (ms % (3600 * 1000) == 0)
		snprintf(buf, size, "%lluh", ms / (3600 * 1000));
	else if (ms % (60 * 1000) == 0)
		snprintf(buf, size, "%llum", ms / (60 * 1000));
	else if (ms % 1000 == 0)
		snprintf(buf, size, "%llus", ms / 1000);
	else
		snprintf(buf, size, "%llums", ms);
}

static void
show_workers(const struct key *k, const struct cf_proxy_settings *p, char *buf, size_t size)
{
	if (pfield(k, p) == 0)
		snprintf(buf, size, "auto");
	else
		show_count(k, p, buf, size);
}

static void
show_choice(const struct key *k, const struct cf_proxy_settings *p, char *buf, size_t size)
{
	const struct choice *c;
	unsigned long long v = pfield(k, p);

	for (c = k->choices; c->word != NULL; c++)
		if ((unsigned long long)c->value == v) {
			snprintf(buf, size, "%s", c->word);
			return;
		}
	snprintf(buf, size, "%llu", v);
}

static void
show_admin(const struct key *k, const struct cf_proxy_settings *p, char *buf, size_t size)
{
	(void)k;
	snprintf(buf, size, "%s", p->admin.kind != 0 ? p->admin.text : "(none)");
}

static void
show_metrics(const struct key *k, const struct cf_proxy_settings *p, char *buf, size_t size)
{
	(void)k;
	snprintf(buf, size, "%s", p->metrics.kind != 0 ? p->metrics.text : "(none)");
}

static void
show_admin_group(const struct key *k, const struct cf_proxy_settings *p, char *buf, size_t size)
{
	(void)k;
	if (p->has_admin_group)
		snprintf(buf, size, "%u", (unsigned)p->admin_group);
	else
		snprintf(buf, size, "(none: the admin socket is 0600)");
}

static void
show_user(const struct key *k, const struct cf_proxy_settings *p, char *buf, size_t size)
{
	(void)k;
	if (p->has_user)
		snprintf(buf, size, "%u:%u (drops to them after binding)", (unsigned)p->user,
		    (unsigned)p->group);
	else
		snprintf(buf, size, "(unset: keeps the uid it was started with)");
}

static void
show_log(const struct key *k, const struct cf_proxy_settings *p, char *buf, size_t size)
{
	(void)k;
	snprintf(buf, size, "%s", p->log);
}

static void
show_path(const struct key *k, const struct cf_proxy_settings *p, char *buf, size_t size)
{
	const char *v = k->arg == 0 ? p->state_dir : k->arg == 1 ? p->upstream_ca_file :
	    k->arg == 3 ? p->audit_signing_key : p->grants_file;

	if (v != NULL)
		snprintf(buf, size, "%s", v);
	else if (k->arg == 3)
		snprintf(buf, size, "(none: the audit log is chained, not signed)");
	else
		snprintf(buf, size, "%s", k->arg == 0 ? "(none: session CAs live in memory only)" :
		    k->arg == 1 ? "(the system store)" : "(none: runtime grants end with the process)");
}

static void
show_socket_dir(const struct key *k, const struct cf_proxy_settings *p, char *buf, size_t size)
{
	(void)k;
	snprintf(buf, size, "%s", p->socket_dir != NULL ? p->socket_dir :
	    "(none: no socket maker; after the drop only the proxy's own uid makes sockets)");
}

static void
show_dns_servers(const struct key *k, const struct cf_proxy_settings *p, char *buf, size_t size)
{
	(void)k;
	snprintf(buf, size, "%s", p->dns_servers ? p->dns_servers : "(from /etc/resolv.conf)");
}


/* secrets = NAME, NAME: which secrets the session's sandbox gets.  The
 * names are resolved once the whole file is read (conf/secret.c), since a
 * [secret] may come after the session that names it. */
static void
set_secrets(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	const char *p = value;

	(void)k;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		const char *q = p;

		while (len > 0 && cfb_blank(*q))
			q++, len--;
		while (len > 0 && cfb_blank(q[len - 1]))
			len--;
		if (len == 0) {
			cfb_err(b, b->line, "empty item in list (%s)", shown);
		} else if (!cfb_name_ok(q, len)) {
			char item[80], buf[100];
			size_t n = len < sizeof(item) - 1 ? len : sizeof(item) - 1;
			memcpy(item, q, n);
			item[n] = '\0';
			cfb_show(buf, sizeof(buf), item);
			cfb_err(b, b->line, "bad secret name: letters, digits, '-', '_', '.', at most 64 (%s)", buf);
		} else {
			char *name = strndup(q, len);
			if (name == NULL || cfb_add_secret_name(s, name, b->line) < 0) {
				free(name);
				cfb_err(b, b->line, "out of memory");
				return;
			}
			free(name);
		}
		if (comma == NULL)
			break;
		p = comma + 1;
	}
}

static int env_name_ok(const char *v);

/* canaries = VAR, VAR: decoy variables for the session's sandbox
 * (conf/canary.h). */
static void
set_canaries(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	const char *p = value;

	(void)k;
	s->canary_line = b->line;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p), i;
		const char *q = p;
		char *name;

		while (len > 0 && cfb_blank(*q))
			q++, len--;
		while (len > 0 && cfb_blank(q[len - 1]))
			len--;
		if ((name = strndup(q, len)) == NULL) {
			cfb_err(b, b->line, "out of memory");
			return;
		}
		for (i = 0; i < s->ncanary_names; i++)
			if (strcmp(s->canary_names[i], name) == 0)
				break;
		if (len == 0) {
			cfb_err(b, b->line, "empty item in list (%s)", shown);
			free(name);
		} else if (!env_name_ok(name)) {
			cfb_err(b, b->line, "canaries: %s is not a variable's name: letters, digits and _, "
			    "not starting with a digit, at most 128", name);
			free(name);
		} else if (i < s->ncanary_names) {
			cfb_err(b, b->line, "canaries: %s is named twice", name);
			free(name);
		} else if (s->ncanary_names == CF_CANARY_MAX) {
			cfb_err(b, b->line, "canaries: more than %d", CF_CANARY_MAX);
			free(name);
		} else {
			char **nn = realloc(s->canary_names, (s->ncanary_names + 1) * sizeof(*nn));

			if (nn == NULL) {
				free(name);
				cfb_err(b, b->line, "out of memory");
				return;
			}
			s->canary_names = nn;
			nn[s->ncanary_names++] = name;
		}
		if (comma == NULL)
			break;
		p = comma + 1;
	}
}

/* An environment variable's name: a letter or '_', then letters, digits
 * and '_' (POSIX.1-2017 §8.1 as shells take it), at most 128. */
static int
env_name_ok(const char *v)
{
	size_t i, len = strlen(v);

	if (len == 0 || len > 128 || (v[0] >= '0' && v[0] <= '9'))
		return 0;
	for (i = 0; i < len; i++)
		if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= 'A' && v[i] <= 'Z') ||
		    (v[i] >= '0' && v[i] <= '9') || v[i] == '_'))
			return 0;
	return 1;
}

/* from_env, placeholder_env (K->arg 0, 1): a variable's name. */
static void
set_secret_env(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	struct cf_secret_build *sec = b->cursec;
	char **f = k->arg == 0 ? &sec->from_env : &sec->placeholder_env;

	(void)s;
	/* The text is not shown: a value pasted here by mistake would
	 * otherwise end up in a log. */
	(void)shown;
	if (!env_name_ok(value)) {
		cfb_err(b, b->line, "%s is an environment variable's name: letters, digits and _, "
		    "not starting with a digit, at most 128 (what is written is not shown: it may be "
		    "the secret itself)", k->name);
		return;
	}
	free(*f);
	if ((*f = strdup(value)) == NULL)
		cfb_err(b, b->line, "out of memory");
}

/* from_file: an absolute path, or a plain name under $CREDENTIALS_DIRECTORY
 * (systemd's LoadCredential=), resolved when the value is read. */
static void
set_secret_file(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	struct cf_secret_build *sec = b->cursec;
	size_t i, len = strlen(value);

	(void)k;
	(void)s;
	for (i = 0; i < len; i++)
		if ((unsigned char)value[i] < 0x20 || value[i] == 0x7f)
			break;
	if (len == 0 || len >= 4096 || i < len) {
		cfb_err(b, b->line, "from_file is a file path (%s)", shown);
		return;
	}
	if (value[0] != '/' && (strchr(value, '/') != NULL || strcmp(value, ".") == 0 ||
	    strcmp(value, "..") == 0)) {
		cfb_err(b, b->line, "from_file is an absolute path, or the plain name of a credential "
		    "in $CREDENTIALS_DIRECTORY (%s)", shown);
		return;
	}
	free(sec->from_file);
	if ((sec->from_file = strdup(value)) == NULL)
		cfb_err(b, b->line, "out of memory");
}

/* inject_when = placeholder | always: on which requests the bindings put
 * the value (cf_secret_inject_always()). */
static void
set_secret_when(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	(void)k;
	(void)s;
	if (strcmp(value, "placeholder") == 0)
		b->cursec->always = 0;
	else if (strcmp(value, "always") == 0)
		b->cursec->always = 1;
	else
		cfb_err(b, b->line, "inject_when is placeholder (only on a request that carries the "
		    "placeholder where a binding puts the value) or always (%s)", shown);
}

/* kind = static | ...: what the secret holds (cf_secret_kind_parse()). */
static void
set_secret_kind(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	int kind = cf_secret_kind_parse(value);

	(void)k;
	(void)s;
	if (kind < 0) {
		cfb_err(b, b->line, "kind is static, aws-sigv4, oauth2 or github-app (%s)", shown);
		return;
	}
	b->cursec->kind = kind;
}

/* access_key_id, access_key_id_env, session_token_env, session_token_file,
 * hosts (K->arg: enum cf_aws_key): kind = aws-sigv4's keys, checked in
 * conf/awskey.c; that the kind is aws-sigv4 is checked with the section. */
static void
set_secret_aws(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	char **f = &b->cursec->aws[k->arg];
	const char *why = cf_aws_key_check((enum cf_aws_key)k->arg, value);

	(void)s;
	if (why != NULL) {
		if (k->arg == CF_AWS_HOSTS || k->arg == CF_AWS_TOKEN_FILE)
			cfb_err(b, b->line, "%s (%s)", why, shown);
		else if (k->arg == CF_AWS_KEY_ID)
			cfb_err(b, b->line, "%s", why);
		else
			cfb_err(b, b->line, "%s %s", k->name, why);
		return;
	}
	free(*f);
	if ((*f = strdup(value)) == NULL)
		cfb_err(b, b->line, "out of memory");
}

/* token_url, client_id, scope, refresh_token_env, refresh_token_file (K->arg:
 * enum cf_mint_key): the settings of a minted kind, checked against the
 * kind once the section is read (conf/secret.c). */
static void
set_secret_mint(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	struct cf_secret_build *sec = b->cursec;
	size_t i, len = strlen(value);

	(void)s;
	for (i = 0; i < len; i++)
		if ((unsigned char)value[i] <= 0x20 || value[i] == 0x7f)
			break;
	if (k->arg == CF_MINT_REFRESH_ENV && !env_name_ok(value)) {
		cfb_err(b, b->line, "%s is an environment variable's name: letters, digits and _, "
		    "not starting with a digit, at most 128 (what is written is not shown: it may be "
		    "the secret itself)", k->name);
		return;
	}
	if (len == 0 || len > 1024 || (i < len && k->arg != CF_MINT_SCOPE)) {
		cfb_err(b, b->line, "%s is 1-1024 printable characters without spaces (%s)", k->name,
		    shown);
		return;
	}
	if ((k->arg == CF_MINT_APP_ID || k->arg == CF_MINT_INSTALLATION) &&
	    (strspn(value, "0123456789") != len || len > 18)) {
		cfb_err(b, b->line, "%s is a number (%s)", k->name, shown);
		return;
	}
	if ((k->arg == CF_MINT_TOKEN_URL || k->arg == CF_MINT_API_URL) && strncmp(value, "https://", 8) != 0) {
		cfb_err(b, b->line, "%s is an https:// URL (%s)", k->name, shown);
		return;
	}
	if (k->arg == CF_MINT_KEY_FILE && value[0] != '/') {
		cfb_err(b, b->line, "%s is an absolute path (%s)", k->name, shown);
		return;
	}
	if (k->arg == CF_MINT_REFRESH_FILE && value[0] != '/' && strchr(value, '/') != NULL) {
		cfb_err(b, b->line, "%s is an absolute path, or the plain name of a credential "
		    "in $CREDENTIALS_DIRECTORY (%s)", k->name, shown);
		return;
	}
	free(sec->mint[k->arg]);
	if ((sec->mint[k->arg] = strdup(value)) == NULL)
		cfb_err(b, b->line, "out of memory");
}

/*
 * github_repositories = OWNER/REPO, ... (K->arg 0) and github_permissions =
 * NAME:read|write|admin, ... (1): what a session's GitHub App tokens may
 * reach (conf/secret.h).  Kept without blanks, comma-separated.
 */
static void
set_github(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	char *out = malloc(strlen(value) + 1), *o;
	const char *p = value;
	size_t n = 0;

	if (out == NULL) {
		cfb_err(b, b->line, "out of memory");
		return;
	}
	o = out;
	for (;;) {
		const char *e, *sep;
		size_t len;

		while (*p == ' ' || *p == '\t')
			p++;
		e = p + strcspn(p, ",");
		len = (size_t)(e - p);
		while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		sep = memchr(p, k->arg == 0 ? '/' : ':', len);
		if (len == 0 || sep == NULL || sep == p || sep == p + len - 1 ||
		    memchr(sep + 1, k->arg == 0 ? '/' : ':', (size_t)(p + len - sep - 1)) != NULL)
			goto bad;
		for (const char *q = p; q < p + len; q++) {
			int c = (unsigned char)*q;
			if (q == sep)
				continue;
			if (k->arg == 0 ? !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.') :
			    !((c >= 'a' && c <= 'z') || c == '_' || (q > sep && c == '\0')))
				goto bad;
		}
		if (k->arg == 1) {
			size_t ll = (size_t)(p + len - sep - 1);
			if (!((ll == 4 && memcmp(sep + 1, "read", 4) == 0) ||
			    (ll == 5 && memcmp(sep + 1, "write", 5) == 0) ||
			    (ll == 5 && memcmp(sep + 1, "admin", 5) == 0)))
				goto bad;
		}
		if (n++ > 0)
			*o++ = ',';
		memcpy(o, p, len);
		o += len;
		if (*e == '\0')
			break;
		p = e + 1;
	}
	*o = '\0';
	free(s->github[k->arg]);
	s->github[k->arg] = out;
	return;
bad:
	free(out);
	if (k->arg == 0)
		cfb_err(b, b->line, "github_repositories is a list of OWNER/REPO (letters, digits, '-', "
		    "'_', '.') (%s)", shown);
	else
		cfb_err(b, b->line, "github_permissions is a list of NAME:read, NAME:write or NAME:admin "
		    "(%s)", shown);
}

/* placeholder_prefix: the public start of the placeholder (empty: none). */
static void
set_secret_prefix(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	struct cf_secret_build *sec = b->cursec;

	(void)k;
	(void)s;
	/* Not shown: a value pasted here by mistake would end up in a log. */
	(void)shown;
	if (!cf_placeholder_prefix_ok(value)) {
		cfb_err(b, b->line, "placeholder_prefix is at most %d letters, digits, '-', '.', '_' "
		    "and '~' (what is written is not shown: it may be the secret itself)",
		    CF_PLACEHOLDER_PREFIX_MAX);
		return;
	}
	free(sec->placeholder_prefix);
	if ((sec->placeholder_prefix = strdup(value)) == NULL)
		cfb_err(b, b->line, "out of memory");
}

/* inject = HOST[:PORT][/PATH] METHOD ARGS (cf_inject_parse()). */
static void
set_inject(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	struct cf_secret_build *sec = b->cursec;
	struct cf_inject inj, *nv;
	const char *why = NULL;
	int rc;

	(void)k;
	(void)s;
	rc = cf_inject_parse(value, &inj, &why);
	if (rc == -ENOMEM) {
		cfb_err(b, b->line, "out of memory");
		return;
	}
	if (rc != 0) {
		cfb_err(b, b->line, "inject: %s (%s)", why ? why : "bad binding", shown);
		return;
	}
	inj.file = b->file;
	inj.line = b->line;
	nv = realloc(sec->inject, (sec->ninject + 1) * sizeof(*nv));
	if (nv == NULL) {
		cf_inject_clear(&inj);
		cfb_err(b, b->line, "out of memory");
		return;
	}
	nv[sec->ninject++] = inj;
	sec->inject = nv;
}

/* ---- decider ------------------------------------------------------------- */

/*
 * Parse V, "unix:/PATH" or "http://ADDR:PORT/PATH" with ADDR a loopback
 * address (127.0.0.0/8 or [::1]), into D.  The decider is trusted with the
 * decision: a name, or any address another host could answer on, is
 * refused.  Returns 0, or -1 with *WHY.
 */
static int
decider_parse(const char *v, struct cf_decider *d, const char **why)
{
	char addr[64];
	const char *p, *slash, *colon;
	uint64_t port;
	size_t i;

	memset(d, 0, sizeof(*d));
	if (strncmp(v, "unix:", 5) == 0) {
		if (v[5] != '/' || strlen(v + 5) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
			*why = "unix:PATH takes an absolute path that fits a socket's name";
			return -1;
		}
		d->unix_path = strdup(v + 5);
		return d->unix_path != NULL ? 0 : (*why = "out of memory", -1);
	}
	if (strncmp(v, "http://", 7) != 0) {
		*why = "it is unix:PATH or http://ADDRESS:PORT/PATH";
		return -1;
	}
	p = v + 7;
	slash = strchr(p, '/');
	if (slash == NULL)
		slash = p + strlen(p);
	if (*p == '[') {
		const char *rb = memchr(p, ']', (size_t)(slash - p));
		if (rb == NULL || rb[1] != ':' || (size_t)(rb - p - 1) >= sizeof(addr)) {
			*why = "http:// takes [ADDRESS]:PORT";
			return -1;
		}
		memcpy(addr, p + 1, (size_t)(rb - p - 1));
		addr[rb - p - 1] = '\0';
		colon = rb + 1;
	} else {
		colon = memchr(p, ':', (size_t)(slash - p));
		if (colon == NULL || (size_t)(colon - p) >= sizeof(addr)) {
			*why = "http:// takes ADDRESS:PORT, the port written";
			return -1;
		}
		memcpy(addr, p, (size_t)(colon - p));
		addr[colon - p] = '\0';
	}
	if (bs_num_parse(colon + 1, (size_t)(slash - colon - 1), 65535, 0, &port) != 0 || port == 0) {
		*why = "the port must be 1-65535";
		return -1;
	}
	if (inet_pton(AF_INET, addr, &((struct sockaddr_in *)&d->sa)->sin_addr) == 1) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&d->sa;
		if ((ntohl(sin->sin_addr.s_addr) >> 24) != 127) {
			*why = "the address must be a loopback one (127.0.0.0/8 or [::1])";
			return -1;
		}
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		d->salen = sizeof(*sin);
	} else if (inet_pton(AF_INET6, addr, &((struct sockaddr_in6 *)&d->sa)->sin6_addr) == 1) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&d->sa;
		if (!IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr)) {
			*why = "the address must be a loopback one (127.0.0.0/8 or [::1])";
			return -1;
		}
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		d->salen = sizeof(*sin6);
	} else {
		*why = "the address must be a loopback address written as one (no names)";
		return -1;
	}
	/* The path goes in a request line: visible ASCII only. */
	for (i = 0; slash[i] != '\0'; i++)
		if (slash[i] <= ' ' || slash[i] > '~') {
			*why = "the path may hold visible ASCII only";
			return -1;
		}
	if (i > 256) {
		*why = "the path is longer than 256 bytes";
		return -1;
	}
	d->http_path = strdup(*slash ? slash : "/");
	d->http_host = strndup(p, (size_t)(slash - p));
	if (d->http_path == NULL || d->http_host == NULL) {
		*why = "out of memory";
		return -1;
	}
	return 0;
}

/* decider = unix:PATH | http://LOOPBACK:PORT/PATH. */
static void
set_decider(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	struct cf_decider d;
	const char *why = NULL;

	(void)k;
	if (decider_parse(value, &d, &why) != 0 || (d.text = strdup(value)) == NULL) {
		cfb_decider_clear(&d);
		cfb_err(b, b->line, "decider: %s (%s)", why ? why : "out of memory", shown);
		return;
	}
	cfb_decider_clear(&s->decider);
	s->decider = d;
	s->decider_line = b->line;
}

/* decider_timeout, with its line. */
static void
set_decider_timeout(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	int n = b->nerrors;

	set_duration(b, k, s, value, shown);
	if (b->nerrors == n)
		s->decider_timeout_line = b->line;
}

/* upstream_proxy, upstream_proxy_auth, upstream_proxy_direct and
 * upstream_proxy_names (K->arg, enum cf_parent_key): checked now, built
 * with the session once the file is read (conf/parent.c). */
static void
set_upstream(struct cf_build *b, const struct key *k, struct cf_sess_build *s,
    const char *value, const char *shown)
{
	const char *why = NULL;

	if (cfp_check(k->arg, value, &why) != 0) {
		cfb_err(b, b->line, "%s: %s (%s)", k->name, why, shown);
		return;
	}
	free(s->up_val[k->arg]);
	if ((s->up_val[k->arg] = strdup(value)) == NULL) {
		cfb_err(b, b->line, "out of memory");
		return;
	}
	s->up_line[k->arg] = b->line;
}

/* ---- the tables ------------------------------------------------------------ */

static const struct choice sni_modes[] = {
	{ "match", CF_SNI_MATCH }, { "strict", CF_SNI_STRICT }, { "off", CF_SNI_OFF }, { NULL, 0 },
};
static const struct choice sess_modes[] = {
	{ "enforce", CF_SESS_MODE_ENFORCE }, { "report", CF_SESS_MODE_REPORT },
	{ "ask", CF_SESS_MODE_ASK }, { NULL, 0 },
};
static const struct choice decider_asks[] = {
	{ "unlisted", 1 }, { "all", 2 }, { NULL, 0 },
};
static const struct choice yes_no[] = { { "yes", 1 }, { "no", 0 }, { NULL, 0 } };
static const struct choice audit_formats[] = { { "json", 0 }, { "ocsf", 1 }, { NULL, 0 } };

_Static_assert(sizeof(enum cf_sni_mode) == sizeof(unsigned), "put() stores sni as an unsigned");

/* The field F of [proxy] or of a session, for the tables. */
#define PX(f) .off = offsetof(struct cf_proxy_settings, f), \
	.size = sizeof(((struct cf_proxy_settings *)0)->f)
#define SB(f) .off = offsetof(struct cf_sess_build, f), \
	.size = sizeof(((struct cf_sess_build *)0)->f), \
	.off_line = offsetof(struct cf_sess_build, f##_line)

/* [proxy], in the order "did you mean" weighs them.  Durations in ms. */
static const struct key proxy_keys[] = {
	{ .name = "listen", .set = set_listen, .flags = K_LIST },
	{ .name = "admin", .set = set_admin, .show = show_admin },
	{ .name = "admin_group", .set = set_admin_group, .show = show_admin_group },
	{ .name = "metrics", .set = set_metrics, .show = show_metrics },
	{ .name = "user", .set = set_user, .show = show_user },
	{ .name = "log", .set = set_log, .show = show_log },
	{ .name = "dns_servers", .set = set_dns_servers, .show = show_dns_servers },
	{ .name = "sni", .set = set_choice, PX(sni), .choices = sni_modes, .dflt = CF_SNI_MATCH,
	  .show = show_choice },
	{ .name = "connect_timeout", .set = set_duration, PX(connect_timeout_ms), .dflt = 10 * 1000,
	  .show = show_duration },
	{ .name = "idle_timeout", .set = set_duration, PX(idle_timeout_ms), .dflt = 15 * 60 * 1000,
	  .show = show_duration },
	{ .name = "header_timeout", .set = set_duration, PX(header_timeout_ms), .dflt = 10 * 1000,
	  .show = show_duration },
	{ .name = "ask_timeout", .set = set_duration, PX(ask_timeout_ms), .dflt = 60 * 1000,
	  .show = show_duration },
	{ .name = "max_connections", .set = set_count, PX(max_connections), .min = 1, .max = 1000000,
	  .dflt = 10000, .show = show_count },
	{ .name = "workers", .set = set_workers, PX(workers), .min = 1, .max = PX_WORKERS_MAX,
	  .dflt = 1, .show = show_workers },
	{ .name = "max_headers", .set = set_count, PX(max_headers), .min = 1, .max = 10000, .dflt = 100,
	  .show = show_count },
	{ .name = "max_header_bytes", .set = set_size, PX(max_header_bytes), .min = 1024,
	  .max = 1024 * 1024, .dflt = 32 * 1024, .show = show_size },
	{ .name = "replace_max", .set = set_size, PX(replace_max), .min = 1024,
	  .max = 64 * 1024 * 1024, .dflt = 1024 * 1024, .show = show_size },
	{ .name = "revoke", .set = set_choice, PX(revoke), .choices = yes_no, .dflt = 0, .show = show_choice },
	{ .name = "state_dir", .set = set_path, .arg = 0, .show = show_path },
	{ .name = "upstream_ca_file", .set = set_path, .arg = 1, .show = show_path },
	{ .name = "grants_file", .set = set_path, .arg = 2, .show = show_path },
	{ .name = "socket_dir", .set = set_socket_dir, .show = show_socket_dir },
	{ .name = "audit_signing_key", .set = set_path, .arg = 3, .show = show_path },
	{ .name = "audit_checkpoint", .set = set_duration, PX(audit_checkpoint_ms), .min = 1000,
	  .dflt = 60 * 1000,
	  .show = show_duration },
	{ .name = "audit_format", .set = set_choice, PX(audit_format), .choices = audit_formats,
	  .dflt = 0, .show = show_choice },
	{ .name = NULL },
};

/* [defaults] and [session NAME].  A share not given is worked out in
 * config.c from [proxy] max_connections. */
static const struct key session_keys[] = {
	{ .name = "allow_hosts", .set = set_rules, .flags = K_LIST, .arg = CF_RULE_ALLOW },
	{ .name = "deny_hosts", .set = set_rules, .flags = K_LIST, .arg = CF_RULE_DENY },
	{ .name = "listen", .set = set_listen, .flags = K_LIST | K_NO_DEFAULTS },
	{ .name = "max_connections", .set = set_count, SB(max_conns), .min = 1, .max = 1000000 },
	{ .name = "max_connections_per_uid", .set = set_count, SB(max_uid), .min = 1, .max = 1000000 },
	{ .name = "secrets", .set = set_secrets, .flags = K_LIST },
	{ .name = "github_repositories", .set = set_github, .arg = 0 },
	{ .name = "github_permissions", .set = set_github, .arg = 1 },
	{ .name = "canaries", .set = set_canaries, .flags = K_LIST },
	{ .name = "mode", .set = set_mode, SB(mode), .choices = sess_modes },
	{ .name = "token_file", .set = set_token_file, .flags = K_NO_DEFAULTS },
	{ .name = "decider", .set = set_decider },
	{ .name = "decider_timeout", .set = set_decider_timeout, SB(decider_timeout) },
	{ .name = "decider_ask", .set = set_mode, SB(decider_ask), .choices = decider_asks },
	{ .name = "decider_cache_max", .set = set_count, SB(decider_cache_max), .min = 0,
	  .max = 1000000 },
	{ .name = "upstream_proxy", .set = set_upstream, .arg = CFP_PROXY },
	{ .name = "upstream_proxy_auth", .set = set_upstream, .arg = CFP_AUTH },
	{ .name = "upstream_proxy_direct", .set = set_upstream, .arg = CFP_DIRECT },
	{ .name = "upstream_proxy_names", .set = set_upstream, .arg = CFP_NAMES },
	{ .name = NULL },
};

/* [secret NAME]; which of from_env and from_file, and what placeholder_env
 * defaults to, is settled in conf/secret.c once the section is read. */
static const struct key secret_keys[] = {
	{ .name = "from_env", .set = set_secret_env, .arg = 0 },
	{ .name = "from_file", .set = set_secret_file },
	{ .name = "placeholder_env", .set = set_secret_env, .arg = 1 },
	{ .name = "placeholder_prefix", .set = set_secret_prefix },
	{ .name = "inject", .set = set_inject, .flags = K_LIST },
	{ .name = "inject_when", .set = set_secret_when },
	{ .name = "kind", .set = set_secret_kind },
	{ .name = "access_key_id", .set = set_secret_aws, .arg = CF_AWS_KEY_ID },
	{ .name = "access_key_id_env", .set = set_secret_aws, .arg = CF_AWS_KEY_ID_ENV },
	{ .name = "session_token_env", .set = set_secret_aws, .arg = CF_AWS_TOKEN_ENV },
	{ .name = "session_token_file", .set = set_secret_aws, .arg = CF_AWS_TOKEN_FILE },
	{ .name = "hosts", .set = set_secret_aws, .arg = CF_AWS_HOSTS },
	{ .name = "token_url", .set = set_secret_mint, .arg = CF_MINT_TOKEN_URL },
	{ .name = "client_id", .set = set_secret_mint, .arg = CF_MINT_CLIENT_ID },
	{ .name = "scope", .set = set_secret_mint, .arg = CF_MINT_SCOPE },
	{ .name = "refresh_token_env", .set = set_secret_mint, .arg = CF_MINT_REFRESH_ENV },
	{ .name = "refresh_token_file", .set = set_secret_mint, .arg = CF_MINT_REFRESH_FILE },
	{ .name = "app_id", .set = set_secret_mint, .arg = CF_MINT_APP_ID },
	{ .name = "installation_id", .set = set_secret_mint, .arg = CF_MINT_INSTALLATION },
	{ .name = "api_url", .set = set_secret_mint, .arg = CF_MINT_API_URL },
	{ .name = "private_key_file", .set = set_secret_mint, .arg = CF_MINT_KEY_FILE },
	{ .name = NULL },
};

void
cfk_proxy_show(const struct cf_proxy_settings *p,
    void (*fn)(const char *key, const char *value, void *arg), void *arg)
{
	const struct key *k;
	char buf[512];

	for (k = proxy_keys; k->name != NULL; k++) {
		if (k->show == NULL)
			continue;
		k->show(k, p, buf, sizeof(buf));
		fn(k->name, buf, arg);
	}
}

void
cfk_proxy_defaults(struct cf_proxy_settings *p)
{
	const struct key *k;

	for (k = proxy_keys; k->name != NULL; k++)
		if (k->size != 0)
			put((char *)p + k->off, k->size, k->dflt);
}

static const struct key *
find_key(const struct key *t, const char *name)
{
	for (; t->name != NULL; t++)
		if (strcmp(t->name, name) == 0)
			return t;
	return NULL;
}

/* The nearest key of table T to NAME, for "did you mean". */
static const char *
nearest_in(const struct key *t, const char *name)
{
	const char *names[32];
	size_t n = 0;

	for (; t->name != NULL && n + 1 < sizeof(names) / sizeof(names[0]); t++)
		names[n++] = t->name;
	names[n] = NULL;
	return cfb_nearest(name, names);
}

/*
 * KEY is known but not in SECTION: say where it belongs.  A [proxy] key in
 * a session is "belongs in [proxy] (SECTION)"; the others "belongs in
 * PLACES, not in [SECTION]".
 */
static void
misplaced(struct cf_build *b, const char *section, int in_proxy, const char *key)
{
	const struct key *pk = find_key(proxy_keys, key), *sk = find_key(session_keys, key);
	const struct key *ck = find_key(secret_keys, key);
	char places[96];

	snprintf(places, sizeof(places), "%s%s%s%s%s%s",
	    pk ? "[proxy]" : "",
	    pk && sk ? " or " : "",
	    sk && !(sk->flags & K_NO_DEFAULTS) ? "[defaults]" : "",
	    sk && !(sk->flags & K_NO_DEFAULTS) ? " or " : "",
	    sk ? "a [session NAME]" : "",
	    ck ? "a [secret NAME]" : "");
	if (!in_proxy && sk == NULL && ck == NULL)
		cfb_err(b, b->line, "%s belongs in %s (%s)", key, places, section);
	else
		cfb_err(b, b->line, "%s belongs in %s, not in [%s]", key, places, section);
}

int
cfk_handler(void *user, const char *section, const char *key, const char *value)
{
	struct cf_build *b = user;
	const char *sname = NULL, *kind = cfb_section_kind(section, &sname);
	const struct key *k, *table;
	struct cf_sess_build *s = NULL;
	char shown[120], skey[80];
	int prev, in_proxy;

	cfb_show(shown, sizeof(shown), value);
	if (kind != NULL && strcmp(kind, "hosts") == 0) {
		cfh_add_pin(b, key, value, shown);
		return 1;
	}
	cfb_show(skey, sizeof(skey), key);
	key = skey; /* only ever shown or compared from here on */
	if (section[0] == '\0') {
		cfb_err(b, b->line, "key outside any section (%s)", key);
		return 1;
	}
	if (kind == NULL)
		return 1; /* reported once at the section header */

	k = find_key(proxy_keys, key);
	if (k == NULL || !(k->flags & K_LIST))
		k = find_key(session_keys, key);
	if (k == NULL || !(k->flags & K_LIST))
		k = find_key(secret_keys, key);
	if (k == NULL || !(k->flags & K_LIST)) {
		prev = cfb_seen_before(b, section, key);
		if (prev != 0) {
			/* In a runtime session, its own line number. */
			(void)cfb_locate(b, &prev);
			cfb_err(b, b->line, "%s is given twice (first on line %d)", key, prev);
			return 1;
		}
	}

	if (strcmp(kind, "secret") == 0) {
		b->cursec = cfb_find_secret(b, sname);
		if (b->cursec == NULL)
			return 1; /* the section header was refused */
		k = find_key(secret_keys, key);
		if (k != NULL) {
			k->set(b, k, NULL, value, shown);
		} else if (find_key(session_keys, key) != NULL || find_key(proxy_keys, key) != NULL) {
			misplaced(b, section, 1, key);
		} else {
			const char *near = nearest_in(secret_keys, key);
			cfb_err(b, b->line, "unknown key in [%s] (%s)%s%s%s", section, key,
			    near ? "; did you mean " : "", near ? near : "", near ? "?" : "");
		}
		return 1;
	}
	in_proxy = strcmp(kind, "proxy") == 0;
	if (!in_proxy) {
		s = strcmp(kind, "defaults") == 0 ? &b->defaults : cfb_find_sess(b, sname);
		if (s == NULL)
			return 1; /* the section header was refused */
	}
	table = in_proxy ? proxy_keys : session_keys;
	k = find_key(table, key);
	if (k != NULL && !(s == &b->defaults && (k->flags & K_NO_DEFAULTS))) {
		k->set(b, k, s, value, shown);
	} else if (k != NULL || find_key(in_proxy ? session_keys : proxy_keys, key) != NULL ||
	    find_key(secret_keys, key) != NULL) {
		misplaced(b, section, in_proxy, key);
	} else {
		const char *near = nearest_in(table, key);
		if (near == NULL && !in_proxy)
			near = nearest_in(proxy_keys, key);
		cfb_err(b, b->line, "unknown key in [%s] (%s)%s%s%s", section, key,
		    near ? "; did you mean " : "", near ? near : "", near ? "?" : "");
	}
	return 1;
}
