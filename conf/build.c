/*
 * conf/build.c: the state of one parse (see build.h): its errors and
 * warnings, the untrusted text they show, its sections and sessions, and
 * the "did you mean" of a misspelt name.
 */
#include "conf/build.h"

#define MAX_SESSION_NAME 64

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"

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
void
cfb_show(char *out, size_t size, const char *s)
{
	bs_escape(s, strlen(s), out, size, BS_ESC_KEEP_BACKSLASH | BS_ESC_MARK_CUT);
}

void
cfb_err(struct cf_build *b, int line, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;
	const char *file = b->file;
	size_t k;

	b->nerrors++;
	if (b->diag == NULL)
		return;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (msg == NULL)
		return;
	if (line > 0 && (k = cfb_locate(b, &line)) > 0)
		file = b->segs[k - 1].file;
	if (line > 0) {
		char *full = NULL;
		if (asprintf(&full, "%s:%d: %s", file, line, msg) >= 0) {
			free(msg);
			msg = full;
		}
	} else {
		char *full = NULL;
		if (asprintf(&full, "%s: %s", file, msg) >= 0) {
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

size_t
cfb_locate(const struct cf_build *b, int *line)
{
	size_t i;

	for (i = b->nsegs; i > 0; i--)
		if (*line >= b->segs[i - 1].base) {
			*line -= b->segs[i - 1].base;
			return i;
		}
	return 0;
}

void
cfb_warn(struct cf_diag *d, const char *fmt, ...)
{
	va_list ap;

	if (d == NULL)
		return;
	va_start(ap, fmt);
	diag_add(&d->warnings, &d->nwarnings, fmt, ap);
	va_end(ap);
}

int
cfb_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

const char *
cfb_section_kind(const char *section, const char **name)
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
	if (strncmp(section, "secret ", 7) == 0) {
		*name = section + 7;
		return "secret";
	}
	return NULL;
}

int
cfb_name_ok(const char *n, size_t len)
{
	size_t i;

	if (len == 0 || len > MAX_SESSION_NAME)
		return 0;
	for (i = 0; i < len; i++) {
		char c = n[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'))
			return 0;
	}
	return 1;
}

int
cfb_session_name_ok(const char *n)
{
	return cfb_name_ok(n, strlen(n)) && strcmp(n, "default") != 0;
}

struct cf_sess_build *
cfb_find_sess(struct cf_build *b, const char *name)
{
	size_t i;

	for (i = 0; i < b->nsess; i++)
		if (strcmp(b->sess[i].name, name) == 0)
			return &b->sess[i];
	return NULL;
}

struct cf_secret_build *
cfb_find_secret(struct cf_build *b, const char *name)
{
	size_t i;

	for (i = 0; i < b->nsecrets; i++)
		if (strcmp(b->secrets[i].name, name) == 0)
			return &b->secrets[i];
	return NULL;
}

int
cfb_seen_before(struct cf_build *b, const char *section, const char *key)
{
	size_t i;
	struct cf_key_seen *nv;

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

/*
 * The key of KNOWN nearest to KEY by edit distance (Levenshtein), when it
 * is near enough to be a typo: at most 2 edits and fewer than half the
 * key's length, so that "bogus" is not taken for "log".  NULL otherwise.
 */
const char *
cfb_nearest(const char *key, const char *const *known)
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

int
cfb_add_secret_name(struct cf_sess_build *s, const char *name, int line)
{
	char **nn;
	int *nl;

	nn = realloc(s->secret_names, (s->nsecret_names + 1) * sizeof(*nn));
	if (nn == NULL)
		return -ENOMEM;
	s->secret_names = nn;
	nl = realloc(s->secret_lines, (s->nsecret_names + 1) * sizeof(*nl));
	if (nl == NULL)
		return -ENOMEM;
	s->secret_lines = nl;
	if ((nn[s->nsecret_names] = strdup(name)) == NULL)
		return -ENOMEM;
	nl[s->nsecret_names++] = line;
	return 0;
}

void
cfb_proxy_clear(struct cf_proxy_settings *p)
{
	free(p->admin.text);
	free(p->metrics.text);
	free(p->log);
	free(p->dns_servers);
	free(p->state_dir);
	free(p->upstream_ca_file);
	free(p->grants_file);
	free(p->audit_signing_key);
	free(p->socket_dir);
}

static void
sess_clear(struct cf_sess_build *s)
{
	size_t i;

	for (i = 0; i < s->nlisten; i++)
		free(s->listen[i].text);
	for (i = 0; i < s->nallow; i++)
		cf_rule_clear(&s->allow[i]);
	for (i = 0; i < s->ndeny; i++)
		cf_rule_clear(&s->deny[i]);
	for (i = 0; i < s->nsecret_names; i++)
		free(s->secret_names[i]);
	free(s->secret_names);
	for (i = 0; i < s->ncanary_names; i++)
		free(s->canary_names[i]);
	free(s->canary_names);
	free(s->secret_lines);
	for (i = 0; i < CFP_NKEYS; i++)
		free(s->up_val[i]);
	free(s->github[0]);
	free(s->github[1]);
	free(s->listen);
	free(s->allow);
	free(s->deny);
	free(s->name);
	cfb_decider_clear(&s->decider);
}

/* Free what D holds (a parsed decider = ...), and zero it. */
void
cfb_decider_clear(struct cf_decider *d)
{
	free(d->text);
	free(d->unix_path);
	free(d->http_path);
	free(d->http_host);
	memset(d, 0, sizeof(*d));
}

static void
secret_build_clear(struct cf_secret_build *sb)
{
	size_t i;

	for (i = 0; i < sb->ninject; i++)
		cf_inject_clear(&sb->inject[i]);
	free(sb->inject);
	free(sb->name);
	free(sb->from_env);
	free(sb->from_file);
	free(sb->placeholder_env);
	free(sb->placeholder_prefix);
	for (i = 0; i < CF_AWS_NKEYS; i++)
		free(sb->aws[i]);
	for (i = 0; i < sizeof(sb->mint) / sizeof(sb->mint[0]); i++)
		free(sb->mint[i]);
}

void
cfb_clear(struct cf_build *b)
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
	sess_clear(&b->defaults);
	for (i = 0; i < b->nsess; i++)
		sess_clear(&b->sess[i]);
	free(b->sess);
	free(b->pins);
	for (i = 0; i < b->nsecrets; i++)
		secret_build_clear(&b->secrets[i]);
	free(b->secrets);
	cfb_proxy_clear(&b->proxy);
}

