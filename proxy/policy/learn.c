/*
 * proxy/policy/learn.c: the learn summary (see learn.h).
 *
 * Sessions and items are few, and a request is learned once per decision:
 * plain arrays with linear lookups keep it obvious, as stats.c does.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "base/text.h"
#include "conf/config.h"
#include "conf/decide.h"
#include "conf/host.h"
#include "conf/ranges.h"
#include "proxy/policy/learn.h"
#include "proxy/core/lock.h"

/* Shared by every worker (lock.h). */
static pthread_mutex_t learn_lock = PX_LOCK_INIT;

/* A config line may hold at most 198 characters (conf/reader.c); every
 * line written here stays under this, comments included. */
#define LINE_MAX_OUT 190

struct learn_item {
	char *pattern;       /* the item, without " private" */
	int private_ok;      /* it needs "private" */
	char *first;         /* the first request, for its comment */
	char *addr;          /* the never-reachable address answered, or NULL */
	unsigned long count;
};

struct learn_sess {
	char *name;
	int is_default;
	struct learn_item *v;
	size_t n, cap;
	unsigned long total, others;
};

struct px_learn {
	struct learn_sess *sess;
	size_t n;
};

struct px_learn *
px_learn_new(void)
{
	return calloc(1, sizeof(struct px_learn));
}

static void
item_clear(struct learn_item *it)
{
	free(it->pattern);
	free(it->first);
	free(it->addr);
}

void
px_learn_free(struct px_learn *l)
{
	size_t i, j;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++) {
		for (j = 0; j < l->sess[i].n; j++)
			item_clear(&l->sess[i].v[j]);
		free(l->sess[i].v);
		free(l->sess[i].name);
	}
	free(l->sess);
	free(l);
}

static struct learn_sess *
sess_find(const struct px_learn *l, const char *name)
{
	size_t i;

	for (i = 0; l != NULL && i < l->n; i++)
		if (strcmp(l->sess[i].name, name) == 0)
			return &l->sess[i];
	return NULL;
}

static struct learn_sess *
sess_get(struct px_learn *l, const char *name, int is_default)
{
	struct learn_sess *ls = sess_find(l, name), *nv;

	if (ls != NULL)
		return ls;
	if (l->n == PX_LEARN_SESSIONS)
		return NULL;
	nv = realloc(l->sess, (l->n + 1) * sizeof(*nv));
	if (nv == NULL)
		return NULL;
	l->sess = nv;
	ls = &nv[l->n];
	memset(ls, 0, sizeof(*ls));
	if ((ls->name = strdup(name)) == NULL)
		return NULL;
	ls->is_default = is_default;
	l->n++;
	return ls;
}

/* Is ADDR (text) in a never-reachable range?  Only then does "private"
 * change anything; the proxy's own listener on a public address does not
 * become reachable by any flag. */
static int
never_reachable(const char *addr)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)(void *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)(void *)&ss;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1)
		sin->sin_family = AF_INET;
	else if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1)
		sin6->sin6_family = AF_INET6;
	else
		return 0;
	return cf_range_sockaddr((const struct sockaddr *)&ss) != NULL;
}

/*
 * Does PAT (an item without " private"), written as the line will be
 * (PRIVATE_OK: with " private"), read back as one rule for H on PORT in
 * MODE whose path prefix, if any, PATH (PLEN bytes) starts with?  The
 * item's path starts at its first '/': no host it names holds one.
 */
static int
item_reads_back(const char *pat, int private_ok, enum cf_mode mode, const struct cf_host *h,
    uint16_t port, const char *path, size_t plen)
{
	char item[CF_HOST_TEXT_MAX + 600];
	const char *prefix = strchr(pat, '/');
	size_t n = prefix != NULL ? strlen(prefix) : 0;

	if (prefix != NULL && (path == NULL || n > plen || memcmp(prefix, path, n) != 0))
		return 0;
	if ((size_t)snprintf(item, sizeof(item), "%s%s", pat, private_ok ? " private" : "") >=
	    sizeof(item))
		return 0;
	return cf_suggest_check(item, mode, h, port, prefix, n, private_ok);
}

void
px_learn_add(struct px_learn *l, const struct cf_session *s, const char *name, enum cf_mode mode,
    const struct cf_host *h, uint16_t port, const char *method, const char *path,
    enum cf_reason reason, const struct cf_rule *rule, const char *addr)
{
	PX_LOCKED(&learn_lock);
	static const char priv[] = " private";
	struct learn_sess *ls;
	struct learn_item *it, *nv;
	struct cf_decision d;
	char pat[CF_HOST_TEXT_MAX + 600], hbuf[CF_HOST_TEXT_MAX], first[400];
	size_t i, n, plen = path != NULL ? strlen(path) : 0;
	int private_ok = 0;

	if (l == NULL || s == NULL || h == NULL || h->kind == 0)
		return;
	if (reason != CF_R_HOST_NOT_ALLOWED && reason != CF_R_PORT_NOT_ALLOWED &&
	    reason != CF_R_PATH_NOT_ALLOWED && reason != CF_R_PRIVATE_ADDRESS)
		return;
	/* An address that no flag would let through teaches nothing. */
	if (addr != NULL && !never_reachable(addr))
		return;
	if (reason == CF_R_PRIVATE_ADDRESS && addr == NULL)
		return;
	ls = sess_get(l, name, s->is_default);
	if (ls == NULL)
		return;
	ls->total++;
	memset(&d, 0, sizeof(d));
	d.reason = reason;
	d.rule = rule;
	/* The very item the refusal's hint offers: for a private address
	 * refused under a rule, "HOST[:PORT] private"; for one report mode
	 * relaxed (no rule), the item its allowlist refusal offers, which
	 * then needs "private" too. */
	cf_suggest_pattern(s, mode, h, port, path, plen, &d, pat, sizeof(pat));
	if (pat[0] == '\0') {
		ls->others++;
		return;
	}
	n = strlen(pat);
	if (n > sizeof(priv) - 1 && strcmp(pat + n - (sizeof(priv) - 1), priv) == 0) {
		pat[n - (sizeof(priv) - 1)] = '\0';
		private_ok = 1;
	}
	if (addr != NULL)
		private_ok = 1;
	/* An item no config line can hold is not kept (nor is its memory
	 * spent): it is counted with the rest left out. */
	if (strlen("allow_hosts = ") + strlen(pat) + strlen(priv) >= LINE_MAX_OUT) {
		ls->others++;
		return;
	}
	/* Read back as the line will be written: one rule, for this host
	 * and port, its path (if any) a prefix of the request's; else it
	 * is left out. */
	if (!item_reads_back(pat, private_ok, mode, h, port, path, plen)) {
		ls->others++;
		return;
	}
	for (i = 0; i < ls->n; i++) {
		it = &ls->v[i];
		if (strcmp(it->pattern, pat) != 0)
			continue;
		it->count++;
		if (private_ok && !it->private_ok) {
			it->private_ok = 1;
			if (it->addr == NULL && addr != NULL)
				it->addr = strdup(addr);
		}
		return;
	}
	if (ls->n == PX_LEARN_MAX)
		goto other;
	if (ls->n == ls->cap) {
		size_t ncap = ls->cap ? ls->cap * 2 : 8;
		nv = realloc(ls->v, ncap * sizeof(*nv));
		if (nv == NULL)
			goto other;
		ls->v = nv;
		ls->cap = ncap;
	}
	cf_host_format(h, hbuf, sizeof(hbuf));
	if (mode != CF_MODE_CONNECT && path != NULL && path[0] != '\0')
		snprintf(first, sizeof(first), "%s %.200s", method != NULL && method[0] ? method : "GET",
		    path);
	else
		snprintf(first, sizeof(first), "%s %s:%u", method != NULL && method[0] ? method : "CONNECT",
		    hbuf, port);
	it = &ls->v[ls->n];
	memset(it, 0, sizeof(*it));
	it->pattern = strdup(pat);
	it->first = strdup(first);
	it->addr = addr != NULL ? strdup(addr) : NULL;
	it->private_ok = private_ok;
	it->count = 1;
	if (it->pattern == NULL || it->first == NULL || (addr != NULL && it->addr == NULL)) {
		item_clear(it);
		goto other;
	}
	ls->n++;
	return;
other:
	ls->others++;
}

int
px_learn_known(const struct px_learn *l, const char *name)
{
	PX_LOCKED(&learn_lock);
	return sess_find(l, name) != NULL;
}

/* "# " and S escaped (a path is the client's bytes: no control byte may
 * reach a terminal or end the comment's line), cut to fit one line. */
static void
comment(FILE *f, const char *s)
{
	char buf[LINE_MAX_OUT];

	bs_escape(s, strlen(s), buf, sizeof(buf) - 2, BS_ESC_KEEP_BACKSLASH | BS_ESC_MARK_CUT);
	fprintf(f, "# %s\n", buf);
}

/* ITEM as one shell word: '...' with each ' as '\''. */
static void
shell_word(FILE *f, const char *item)
{
	const char *p;

	fputc('\'', f);
	for (p = item; *p; p++) {
		if (*p == '\'')
			fputs("'\\''", f);
		else
			fputc(*p, f);
	}
	fputc('\'', f);
}

static void
render_sess(FILE *f, const struct learn_sess *ls, const char *name, int is_default)
{
	char line[LINE_MAX_OUT * 2];
	size_t i, col = 0, nflags = 0;

	snprintf(line, sizeof(line), "learned by postern: %lu request%s of session %s the allowlist "
	    "refused or would refuse", ls != NULL ? ls->total : 0,
	    ls != NULL && ls->total == 1 ? "" : "s", name);
	comment(f, line);
	if (is_default)
		fprintf(f, "[defaults]\n");
	else
		fprintf(f, "[session %s]\n", name);
	if (ls == NULL || ls->n == 0)
		comment(f, "nothing to add");
	for (i = 0; ls != NULL && i < ls->n; i++) {
		const struct learn_item *it = &ls->v[i];

		snprintf(line, sizeof(line), "%lu request%s, first %s", it->count,
		    it->count == 1 ? "" : "s", it->first);
		comment(f, line);
		if (it->private_ok && it->addr != NULL) {
			snprintf(line, sizeof(line),
			    "answered %s, a private address: \"private\" lets it through", it->addr);
			comment(f, line);
		} else if (it->private_ok) {
			comment(f, "its rule needed \"private\" to reach its address");
		}
		fprintf(f, "allow_hosts = %s%s\n", it->pattern, it->private_ok ? " private" : "");
	}
	if (ls != NULL && ls->others > 0) {
		snprintf(line, sizeof(line), "and %lu more request%s not learned (past %d items, or no "
		    "config line can allow them)", ls->others, ls->others == 1 ? "" : "s",
		    PX_LEARN_MAX);
		comment(f, line);
	}
	/* The same as flags for postern-sidecar run, a few to a line (a
	 * comment line is held to the config's line length too). */
	for (i = 0; ls != NULL && i < ls->n; i++) {
		const struct learn_item *it = &ls->v[i];
		const char *q;
		/* " --allow '...'", each ' in it written as '\'' */
		size_t w = strlen(it->pattern) + (it->private_ok ? 8 : 0) + 11;

		for (q = it->pattern; *q; q++)
			if (*q == '\'')
				w += 3;

		if (nflags == 0 || col + w >= LINE_MAX_OUT) {
			fputs(nflags == 0 ? "# as flags:" : "\n#  ", f);
			col = 11;
		}
		fputs(" --allow ", f);
		snprintf(line, sizeof(line), "%s%s", it->pattern, it->private_ok ? " private" : "");
		shell_word(f, line);
		col += w;
		nflags++;
	}
	if (nflags > 0)
		fputc('\n', f);
}

char *
px_learn_render(const struct px_learn *l, const char *name, int is_default)
{
	PX_LOCKED(&learn_lock);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		return NULL;
	render_sess(f, sess_find(l, name), name, is_default);
	if (fclose(f) != 0) {
		free(buf);
		errno = ENOMEM;
		return NULL;
	}
	return buf;
}

char *
px_learn_render_all(const struct px_learn *l)
{
	PX_LOCKED(&learn_lock);
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		return NULL;
	for (i = 0; l != NULL && i < l->n; i++) {
		if (i > 0)
			fputc('\n', f);
		render_sess(f, &l->sess[i], l->sess[i].name, l->sess[i].is_default);
	}
	if (fclose(f) != 0) {
		free(buf);
		errno = ENOMEM;
		return NULL;
	}
	return buf;
}
