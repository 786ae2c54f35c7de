/*
 * conf/config.c: the snapshot (see config.h).  One parse reads the text
 * (reader.c) into the keys of its sections (keys.c), then build() checks
 * the whole (listeners, sessions, shares), applies the overrides and moves
 * what was read into an immutable, reference-counted snapshot;
 * cf_config_load() also applies StrictModes (strict.c).  The decisions on
 * a request are in decide.c.
 */
#include "conf/config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <ini.h>
#include <openssl/evp.h>

#include "base/text.h"
#include "conf/build.h"
#include "conf/canary.h"
#include "conf/keys.h"
#include "conf/reader.h"
#include "conf/strict.h"

#define MAX_CONFIG_BYTES (1024 * 1024)

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
	struct cfsec_set *secrets;   /* every secret; sessions point into it */
	char **segfiles;             /* "session:NAME" of each runtime session */
	size_t nsegfiles;
};

static int
listen_same(const struct cf_listen *a, const struct cf_listen *b)
{
	if (a->kind != b->kind)
		return 0;
	if (a->kind == CF_LISTEN_UNIX)
		return strcmp(a->path, b->path) == 0;
	return a->addrlen == b->addrlen && memcmp(&a->addr, &b->addr, a->addrlen) == 0;
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
		if (c->sessions[i].memo != NULL)
			c->sessions[i].memo_free(c->sessions[i].memo);
		cfsec_session_clear(&c->sessions[i]);
		cfcan_session_clear(&c->sessions[i]);
		cfp_free(c->sessions[i].parent);
		free(c->sessions[i].name);
		free(c->sessions[i].allow);
		free(c->sessions[i].deny);
		if (c->sessions[i].decider != NULL) {
			cfb_decider_clear(c->sessions[i].decider);
			free(c->sessions[i].decider);
		}
	}
	free(c->sessions);
	for (i = 0; i < c->nlistens; i++)
		free(c->listens[i].text);
	free(c->listens);
	free(c->pins);
	cfsec_free(c->secrets);
	cfb_proxy_clear(&c->proxy);
	for (i = 0; i < c->nsegfiles; i++)
		free(c->segfiles[i]);
	free(c->segfiles);
	free(c->path);
	free(c);
}

/*
 * Session S's decider: SB's own decider = or [defaults]' (DEF), with each
 * of decider_timeout, decider_ask and decider_cache_max taken the same way
 * (2 s, unlisted, 1000 when neither gives it).  Returns 0 or -ENOMEM.
 */
static int
take_decider(const struct cf_sess_build *sb, const struct cf_sess_build *def, struct cf_session *s)
{
	const struct cf_decider *from = sb->decider_line ? &sb->decider :
	    def->decider_line ? &def->decider : NULL;
	struct cf_decider *d;

	if (from == NULL)
		return 0;
	if ((d = calloc(1, sizeof(*d))) == NULL)
		return -ENOMEM;
	s->decider = d;
	d->sa = from->sa;
	d->salen = from->salen;
	d->line = sb->decider_line ? sb->decider_line : def->decider_line;
	d->text = strdup(from->text);
	d->unix_path = from->unix_path ? strdup(from->unix_path) : NULL;
	d->http_path = from->http_path ? strdup(from->http_path) : NULL;
	d->http_host = from->http_host ? strdup(from->http_host) : NULL;
	if (d->text == NULL || (from->unix_path && !d->unix_path) || (from->http_path && !d->http_path) ||
	    (from->http_host && !d->http_host))
		return -ENOMEM;
	d->timeout_ms = sb->decider_timeout_line ? sb->decider_timeout :
	    def->decider_timeout_line ? def->decider_timeout : 2000;
	d->all = (sb->decider_ask ? sb->decider_ask : def->decider_ask) == 2;
	d->cache_max = sb->decider_cache_max_line ? sb->decider_cache_max :
	    def->decider_cache_max_line ? def->decider_cache_max : 1000;
	return 0;
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
				cfb_warn(diag, "%s:%d: allow rule \"%s\" is shadowed in session %s by deny rule \"%s\" (%s:%d): it allows nothing",
				    a->file, a->line, a->text, s->name, d->text, d->file, d->line);
				break;
			}
		}
		for (j = 0; j < i; j++) {
			if (strcmp(s->allow[j]->text, a->text) == 0) {
				cfb_warn(diag, "%s:%d: allow rule \"%s\" duplicates %s:%d in session %s",
				    a->file, a->line, a->text, s->allow[j]->file, s->allow[j]->line, s->name);
				break;
			}
		}
	}
}

/* NAME is not a [session] of the file: say so, and which ones it has. */
static void
err_no_session(struct cf_build *b, const char *name)
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
	cfb_show(shown, sizeof(shown), name);
	if (b->nsess == 0)
		cfb_err(b, 0, "no [session %s]: the file has no [session] sections", shown);
	else
		cfb_err(b, 0, "no [session %s]; its sessions: %s", shown, list);
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
work_out_shares(struct cf_build *b, struct cf_sess_build *sb, const struct cf_sess_build *def,
    const char *name)
{
	unsigned global = b->proxy.max_connections;
	const struct cf_sess_build *umax = sb->max_conns ? sb : def && def->max_conns ? def : NULL;
	const struct cf_sess_build *uuid = sb->max_uid ? sb : def && def->max_uid ? def : NULL;

	sb->eff_max = umax ? umax->max_conns : global / 4 > 0 ? global / 4 : 1;
	sb->eff_uid = uuid ? uuid->max_uid : sb->eff_max / 2 > 0 ? sb->eff_max / 2 : 1;
	if (sb->max_conns > global)
		cfb_err(b, sb->max_conns_line, "max_connections %u is more than [proxy] "
		    "max_connections %u: one session could take every connection",
		    sb->max_conns, global);
	if (uuid != NULL && sb->eff_uid > sb->eff_max && sb->eff_max <= global)
		cfb_err(b, uuid->max_uid_line, "max_connections_per_uid %u is more than the "
		    "max_connections %u of session %s", sb->eff_uid, sb->eff_max, name);
}

/* The file name of what the command line adds; rules keep this pointer. */
static const char cmdline[] = "<command line>";

/* Overrides are applied as if written in [defaults] / [proxy]. */
static void
apply_overrides(struct cf_build *b, const struct cf_overrides *ov)
{
	struct cf_sess_build *served = NULL;
	size_t i, j;

	for (i = 0; i < ov->n_extra_allow; i++) {
		int saved = b->line;
		b->line = 0;
		cfk_add_rules(b, &b->defaults, CF_RULE_ALLOW, ov->extra_allow[i], cmdline, 0);
		b->line = saved;
	}
	for (i = 0; i < ov->n_extra_secrets; i++)
		if (cfb_add_secret_name(&b->defaults, ov->extra_secrets[i], 0) < 0)
			cfb_err(b, 0, "out of memory");
	if (ov->serve_session != NULL) {
		served = cfb_find_sess(b, ov->serve_session);
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
	/* So is its metrics listener. */
	if (served != NULL) {
		free(b->proxy.metrics.text);
		memset(&b->proxy.metrics, 0, sizeof(b->proxy.metrics));
	}
	for (i = 0; i < ov->n_extra_listen; i++) {
		int saved = b->line;
		b->line = 0;
		if (served != NULL)
			cfk_add_listen(b, &served->listen, &served->nlisten, ov->extra_listen[i]);
		else
			cfk_add_listen(b, &b->plisten, &b->nplisten, ov->extra_listen[i]);
		b->line = saved;
	}
	if (ov->admin != NULL) {
		struct cf_listen *one = NULL;
		size_t n = 0;
		int saved = b->line;

		free(b->proxy.admin.text);
		memset(&b->proxy.admin, 0, sizeof(b->proxy.admin));
		b->proxy.has_admin_group = 0;
		b->line = 0;
		if (cfk_add_listen(b, &one, &n, ov->admin) == 0) {
			if (one[0].kind == CF_LISTEN_UNIX)
				b->proxy.admin = one[0];
			else {
				cfb_err(b, 0, "the admin socket must be unix:PATH (%s)", ov->admin);
				free(one[0].text);
			}
		}
		free(one);
		b->line = saved;
	}
	if (ov->has_user) {
		b->proxy.has_user = 1;
		b->proxy.user = ov->user;
		b->proxy.group = (gid_t)ov->user;
	}
}

/* No listener may serve two sessions, and there must be one. */
static void
check_listeners_unique(struct cf_build *b)
{
	struct {
		const struct cf_listen *l;
		const char *who;
	} all[1024];
	size_t i, j, k, n = 0, nserved;

	for (i = 0; i < b->nplisten && n < 1024; i++)
		all[n].l = &b->plisten[i], all[n++].who = "default";
	for (i = 0; i < b->nsess; i++)
		for (j = 0; j < b->sess[i].nlisten && n < 1024; j++)
			all[n].l = &b->sess[i].listen[j], all[n++].who = b->sess[i].name;
	nserved = n;
	if (b->proxy.admin.kind != 0 && n < 1024)
		all[n].l = &b->proxy.admin, all[n++].who = "the admin socket";
	if (b->proxy.metrics.kind != 0 && n < 1024)
		all[n].l = &b->proxy.metrics, all[n++].who = "metrics";
	for (i = 0; i < n; i++)
		for (k = 0; k < i; k++)
			if (listen_same(all[i].l, all[k].l)) {
				int at = all[k].l->line;
				size_t seg = cfb_locate(b, &at);

				if (seg > 0)
					cfb_err(b, all[i].l->line, "%s is already the listener of %s (%s:%d)",
					    all[i].l->text, all[k].who, b->segs[seg - 1].file, at);
				else
					cfb_err(b, all[i].l->line, "%s is already the listener of %s (line %d)",
					    all[i].l->text, all[k].who, all[k].l->line);
				break;
			}
	if (nserved == 0)
		cfb_err(b, 0, "no listener: add listen = unix:PATH or tcp:ADDR:PORT to [proxy] or a [session NAME]");
}

/*
 * Tokens: no two sessions share one (a token names one session), and an
 * auth=token listener and the sessions with a token_file come together.
 */
static void
check_tokens(struct cf_build *b, const struct cf_overrides *ov)
{
	size_t i, j, ntok = 0, nauth = 0;

	if (ov != NULL && ov->serve_session != NULL)
		return; /* the file's listeners are not served: tokens neither */
	for (i = 0; i < b->nsess; i++) {
		if (b->sess[i].token_line == 0)
			continue;
		ntok++;
		for (j = 0; j < i; j++)
			if (b->sess[j].token_line != 0 &&
			    memcmp(b->sess[j].token_md, b->sess[i].token_md, 32) == 0) {
				cfb_err(b, b->sess[i].token_line, "token_file of session %s holds the "
				    "token of session %s (line %d): each session needs its own",
				    b->sess[i].name, b->sess[j].name, b->sess[j].token_line);
				break;
			}
	}
	for (i = 0; i < b->nplisten; i++)
		nauth += b->plisten[i].auth_token != 0;
	if (ntok > 0 && nauth == 0)
		cfb_warn(b->diag, "%s: sessions have a token_file but no [proxy] listener has "
		    "auth=token: they are served nowhere", b->file);
	if (nauth > 0 && ntok == 0)
		cfb_warn(b->diag, "%s: a listener has auth=token but no session has a token_file: "
		    "it refuses every request", b->file);
}

/* The default session's name from the command line, and a listener for
 * every session (but those left unserved on purpose). */
static void
check_sessions(struct cf_build *b, const struct cf_overrides *ov)
{
	size_t i;

	if (ov != NULL && ov->default_name != NULL &&
	    (strcmp(ov->default_name, "default") != 0 && !cfb_session_name_ok(ov->default_name))) {
		cfb_err(b, 0, "bad session name: letters, digits, '-', '_', '.', at most 64 (%s)",
		    ov->default_name);
	} else if (ov != NULL && ov->default_name != NULL && cfb_find_sess(b, ov->default_name) != NULL) {
		cfb_err(b, cfb_find_sess(b, ov->default_name)->line, "session %s already exists in the file",
		    ov->default_name);
	}
	for (i = 0; i < b->nsess; i++)
		if (b->sess[i].nlisten == 0 && b->sess[i].token_line == 0 &&
		    (ov == NULL || ov->serve_session == NULL))
			cfb_err(b, b->sess[i].line, "session %s has no listen address (nor a token_file "
			    "for an auth=token listener)", b->sess[i].name);
	check_listeners_unique(b);
	check_tokens(b, ov);
}

/*
 * Moves the sessions, their listeners and their rules from B into C,
 * the default session first.  Returns 0 or -ENOMEM.
 */
static int
take_sessions(struct cf_build *b, struct cf_config *c, const struct cf_overrides *ov)
{
	size_t i, j, total;

	/* The count only with the array: config_destroy() walks it. */
	c->sessions = calloc(b->nsess + 1, sizeof(*c->sessions));
	if (c->sessions == NULL)
		return -ENOMEM;
	c->nsessions = b->nsess + 1;
	/* Listeners: one flat array, sessions point into it. */
	total = b->nplisten;
	for (i = 0; i < b->nsess; i++)
		total += b->sess[i].nlisten;
	c->listens = calloc(total + 1, sizeof(*c->listens));
	if (c->listens == NULL)
		return -ENOMEM;

	c->sessions[0].name = strdup(ov != NULL && ov->default_name != NULL ? ov->default_name : "default");
	c->sessions[0].is_default = 1;
	for (i = 0; i <= b->nsess; i++) {
		const struct cf_sess_build *sb = i == 0 ? &b->defaults : &b->sess[i - 1];
		unsigned m = sb->mode ? sb->mode : b->defaults.mode;

		c->sessions[i].cli_hints = ov != NULL && ov->cli_hints;
		c->sessions[i].ask = (ov != NULL && ov->ask) || m == CF_SESS_MODE_ASK;
		c->sessions[i].report = !c->sessions[i].ask &&
		    ((ov != NULL && ov->report) || m == CF_SESS_MODE_REPORT);
		if (take_decider(sb, &b->defaults, &c->sessions[i]) != 0)
			return -ENOMEM;
	}
	if (c->sessions[0].name == NULL)
		return -ENOMEM;
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
		return -ENOMEM;

	for (i = 0; i < b->nsess; i++) {
		struct cf_session *s = &c->sessions[i + 1];
		struct cf_sess_build *sb = &b->sess[i];
		s->name = sb->name;
		sb->name = NULL;
		s->line = sb->line;
		s->max_connections = sb->eff_max;
		s->max_connections_per_uid = sb->eff_uid;
		if (sb->token_line != 0 && (ov == NULL || ov->serve_session == NULL)) {
			s->has_token = 1;
			memcpy(s->token_md, sb->token_md, sizeof(s->token_md));
		}
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
			return -ENOMEM;
		sb->nallow = sb->ndeny = 0;
	}
	b->defaults.nallow = b->defaults.ndeny = 0;
	for (i = 0; i <= b->nsess; i++)
		if (cfcan_attach(&c->sessions[i], i == 0 ? NULL : &b->defaults,
		    i == 0 ? &b->defaults : &b->sess[i - 1]) != 0)
			return -ENOMEM;

	return 0;
}

/* The file line *LINE of B's text was read from (C's copy of its name),
 * *LINE made that file's own: the config file, or a runtime session. */
static const char *
seg_file(const struct cf_build *b, const struct cf_config *c, int *line)
{
	size_t k;

	if (*line <= 0 || (k = cfb_locate(b, line)) == 0)
		return c->path;
	return c->segfiles[k - 1];
}

/* Rules, listeners and pins name the file they were read from. */
static void
point_at_file(struct cf_build *b, struct cf_config *c)
{
	size_t i;

	/* Rules and listeners point at the file name; keep it in c->path. */
	for (i = 0; i < c->nrules; i++)
		if (c->rules[i]->file != cmdline)
			c->rules[i]->file = seg_file(b, c, &c->rules[i]->line);
	for (i = 0; i < c->nlistens; i++)
		if (c->listens[i].line > 0)
			c->listens[i].file = seg_file(b, c, &c->listens[i].line);
		else
			c->listens[i].file = cmdline;
	c->proxy.admin.file = c->path;
	c->proxy.metrics.file = c->path;
	c->pins = b->pins;
	c->npins = b->npins;
	b->pins = NULL;
	b->npins = 0;
	for (i = 0; i < c->npins; i++)
		c->pins[i].file = c->path;
}

/* Each session's file, and the warnings on its rules and its mode. */
static void
warn_sessions(struct cf_build *b, struct cf_config *c)
{
	size_t i;

	for (i = 0; i < c->nsessions; i++) {
		const struct cf_sess_build *sb = i == 0 ? &b->defaults : &b->sess[i - 1];
		const struct cf_sess_build *from = sb->mode ? sb : &b->defaults;
		int ml = from->mode_line;
		const char *mf = seg_file(b, c, &ml);

		c->sessions[i].file = c->path;
		if (i > 0) {
			int at = c->sessions[i].line;
			c->sessions[i].runtime = cfb_locate(b, &at) > 0;
			c->sessions[i].file = seg_file(b, c, &c->sessions[i].line);
		}
		warn_rules(&c->sessions[i], b->diag);
		/* Loud: a session in ask mode waits for people, and one in
		 * report mode enforces no allowlist. */
		if (c->sessions[i].ask) {
			if (from->mode == CF_SESS_MODE_ASK)
				cfb_warn(b->diag, "%s:%d: session %s is in mode = ask: what its allowlist "
				    "refuses is HELD until an admin answers (postern-proxy ctl pending) "
				    "or ask_timeout passes%s", mf, ml, c->sessions[i].name,
				    c->proxy.admin.kind == 0 ? "; there is no admin = unix:PATH in [proxy], "
				    "so nobody can answer: every such request waits, then is refused" : "");
			else
				cfb_warn(b->diag, "session %s is in ask mode (--ask): what its allowlist "
				    "refuses is HELD until an admin answers or ask_timeout passes",
				    c->sessions[i].name);
			continue;
		}
		if (!c->sessions[i].report)
			continue;
		if (from->mode == CF_SESS_MODE_REPORT)
			cfb_warn(b->diag, "%s:%d: session %s is in mode = report: NOT ENFORCING its allowlist "
			    "(what it would refuse is allowed and audited as \"would\":\"deny\")",
			    mf, ml, c->sessions[i].name);
		else
			cfb_warn(b->diag, "session %s is in report mode (--report): NOT ENFORCING its allowlist "
			    "(what it would refuse is allowed and audited as \"would\":\"deny\")",
			    c->sessions[i].name);
	}
}

/* The secrets, bound to the sessions' rules.  Returns 0 or -ENOMEM. */
static int
attach_secrets(struct cf_build *b, struct cf_config *c)
{
	struct cf_sess_build **sbs = calloc(c->nsessions, sizeof(*sbs));
	size_t i;

	if (sbs == NULL)
		return -ENOMEM;
	sbs[0] = &b->defaults;
	for (i = 0; i < b->nsess; i++)
		sbs[i + 1] = &b->sess[i];
	if (cfsec_attach(b, c->sessions, c->nsessions, sbs, &c->secrets) != 0) {
		free(sbs);
		return -ENOMEM;
	}
	for (i = 0; i < c->nsessions && i <= b->nsess; i++)
		cfcan_check(b, &c->sessions[i], sbs[i]->canary_line ? sbs[i]->canary_line :
		    b->defaults.canary_line);
	free(sbs);
	cfsec_set_file(c->secrets, c->path);
	return 0;
}

static struct cf_config *
build(struct cf_build *b, const char *path, const char *text, size_t len,
    const struct cf_overrides *ov)
{
	struct cf_config *c = NULL;
	size_t i;

	if (ov != NULL)
		apply_overrides(b, ov);
	check_sessions(b, ov);
	work_out_shares(b, &b->defaults, NULL, "default");
	for (i = 0; i < b->nsess; i++)
		work_out_shares(b, &b->sess[i], &b->defaults, b->sess[i].name);
	if (b->nerrors > 0)
		return NULL;

	c = calloc(1, sizeof(*c));
	if (c == NULL)
		goto fail;
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
		if (EVP_Digest(text, len, md, &mdlen, EVP_sha256(), NULL) != 1)
			goto fail;
		bs_hex(md, 6, c->hash);
	}

	if (b->nsegs > 0) {
		if ((c->segfiles = calloc(b->nsegs, sizeof(*c->segfiles))) == NULL)
			goto fail;
		for (i = 0; i < b->nsegs; i++) {
			if ((c->segfiles[i] = strdup(b->segs[i].file)) == NULL)
				goto fail;
			c->nsegfiles++;
		}
	}
	if (take_sessions(b, c, ov) < 0)
		goto fail;
	point_at_file(b, c);
	warn_sessions(b, c);
	/* Secrets last: their bindings are judged by the sessions' rules. */
	if (attach_secrets(b, c) < 0)
		goto fail;
	if (cfp_attach(b, c->sessions, c->nsessions) < 0)
		goto fail;
	if (b->nerrors > 0) {
		config_destroy(c);
		return NULL;
	}
	if (c->sessions[0].nallow == 0 && b->nsess == 0)
		cfb_warn(b->diag, "%s: no allow_hosts at all: every request will be refused", path);
	return c;
fail:
	if (c != NULL)
		config_destroy(c);
	cfb_err(b, 0, "out of memory");
	return NULL;
}

/* cf_config_parse() over TEXT, whose lines from SEGS[0].base on are
 * NSEGS runtime sessions. */
static struct cf_config *
parse_segs(const char *name, const char *text, size_t len, const struct cfb_seg *segs,
    size_t nsegs, const struct cf_overrides *ov, struct cf_diag *diag)
{
	struct cf_build b;
	struct cf_config *c = NULL;
	int rc;

	memset(&b, 0, sizeof(b));
	b.segs = segs;
	b.nsegs = nsegs;
	b.file = name;
	b.diag = diag;
	b.text = text;
	b.len = len;
	cfk_proxy_defaults(&b.proxy);

	/* A NUL byte is reported by the reader with its line. */
	cfr_sections(&b);
	rc = ini_parse_stream(cfr_read_line, &b, cfk_handler, &b);
	if (rc < 0)
		cfb_err(&b, 0, "could not be parsed (%d)", rc);
	else if (rc > 0 && b.nerrors == 0)
		cfb_err(&b, rc, "malformed line");
	c = build(&b, name, text, len, ov);
	cfb_clear(&b);
	return c;
}

struct cf_config *
cf_config_parse(const char *name, const char *text, size_t len, const struct cf_overrides *ov,
    struct cf_diag *diag)
{
	return parse_segs(name, text, len, NULL, 0, ov, diag);
}

/* Nonzero for what inih skips at a line's start (isspace()). */
static int
ini_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

/* Count the newlines in the LEN bytes at P. */
static int
count_lines(const char *p, size_t len)
{
	int n = 0;
	const char *e = p + len;

	while (p < e && (p = memchr(p, '\n', (size_t)(e - p))) != NULL) {
		n++;
		p++;
	}
	return n;
}

/*
 * TEXT (the file, NAME) then each runtime session of EX as a
 * [session NAME] of its own, parsed as one file: the same reader, keys and
 * checks.  A body holds no section header: its lines belong to its own
 * section, and no other.
 */
static struct cf_config *
parse_extra(const char *name, const char *text, size_t len, const struct cf_extra *ex, size_t nex,
    const struct cf_overrides *ov, struct cf_diag *diag)
{
	struct cf_build eb;
	struct cfb_seg *segs = NULL;
	char **files = NULL, *buf = NULL;
	struct cf_config *c = NULL;
	size_t i, total = len + 1, n = 0;
	int lines;

	if (nex == 0)
		return cf_config_parse(name, text, len, ov, diag);
	memset(&eb, 0, sizeof(eb));
	eb.diag = diag;
	eb.file = name;
	segs = calloc(nex, sizeof(*segs));
	files = calloc(nex, sizeof(*files));
	if (segs == NULL || files == NULL) {
		cfb_err(&eb, 0, "out of memory");
		goto out;
	}
	for (i = 0; i < nex; i++) {
		const char *p = ex[i].text, *e = ex[i].text + ex[i].len;
		char shown[120];
		int ln = 0;

		if (!cfb_session_name_ok(ex[i].name)) {
			cfb_show(shown, sizeof(shown), ex[i].name);
			eb.file = "session";
			cfb_err(&eb, 0, "bad session name: letters, digits, '-', '_', '.', at most 64, "
			    "not \"default\" (%s)", shown);
			continue;
		}
		if (asprintf(&files[i], "session:%s", ex[i].name) < 0) {
			files[i] = NULL;
			eb.file = name;
			cfb_err(&eb, 0, "out of memory");
			goto out;
		}
		eb.file = files[i];
		while (p < e) {
			const char *nl = memchr(p, '\n', (size_t)(e - p));
			const char *le = nl ? nl : e;
			ln++;
			while (p < le && ini_space(*p))
				p++;
			if (p < le && *p == '[')
				cfb_err(&eb, ln, "a runtime session holds key = value lines only, "
				    "not a section header");
			p = nl ? nl + 1 : e;
		}
		total += sizeof("[session ]\n") + strlen(ex[i].name) + ex[i].len + 1;
	}
	if (eb.nerrors > 0)
		goto out;
	if ((buf = malloc(total)) == NULL) {
		eb.file = name;
		cfb_err(&eb, 0, "out of memory");
		goto out;
	}
	memcpy(buf, text, len);
	n = len;
	if (n > 0 && buf[n - 1] != '\n')
		buf[n++] = '\n';
	lines = count_lines(buf, n);
	for (i = 0; i < nex; i++) {
		segs[i].file = files[i];
		segs[i].base = lines + 1;
		n += (size_t)sprintf(buf + n, "[session %s]\n", ex[i].name);
		memcpy(buf + n, ex[i].text, ex[i].len);
		n += ex[i].len;
		if (ex[i].len > 0 && buf[n - 1] != '\n')
			buf[n++] = '\n';
		lines = count_lines(buf, n);
	}
	c = parse_segs(name, buf, n, segs, nex, ov, diag);
out:
	for (i = 0; files != NULL && i < nex; i++)
		free(files[i]);
	free(files);
	free(segs);
	free(buf);
	return c;
}


struct cf_config *
cf_config_load(const char *path, const struct cf_overrides *ov, struct cf_diag *diag)
{
	return cf_config_load_extra(path, ov, NULL, 0, diag);
}

struct cf_config *
cf_config_load_extra(const char *path, const struct cf_overrides *ov, const struct cf_extra *ex,
    size_t nex, struct cf_diag *diag)
{
	struct cf_config *c = NULL;
	char *buf = NULL;
	size_t len = 0;
	int fd = -1;
	struct stat st;

	if (path == NULL) {
		const char *t = cf_default_text();
		return parse_extra("<built-in>", t, strlen(t), ex, nex, ov, diag);
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		struct cf_build b;
		memset(&b, 0, sizeof(b));
		b.file = path;
		b.diag = diag;
		cfb_err(&b, 0, "cannot read: %s", strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > MAX_CONFIG_BYTES) {
		struct cf_build b;
		memset(&b, 0, sizeof(b));
		b.file = path;
		b.diag = diag;
		cfb_err(&b, 0, "%s", S_ISREG(st.st_mode) ? "larger than 1 MiB" : "not a regular file");
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (buf == NULL) {
		struct cf_build b;
		memset(&b, 0, sizeof(b));
		b.file = path;
		b.diag = diag;
		cfb_err(&b, 0, "out of memory");
		goto out;
	}
	for (;;) {
		ssize_t n = read(fd, buf + len, (size_t)st.st_size + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			struct cf_build b;
			memset(&b, 0, sizeof(b));
			b.file = path;
			b.diag = diag;
			cfb_err(&b, 0, "cannot read: %s", strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > (size_t)st.st_size) {
			struct cf_build b;
			memset(&b, 0, sizeof(b));
			b.file = path;
			b.diag = diag;
			cfb_err(&b, 0, "changed while being read; try again");
			goto out;
		}
	}
	c = parse_extra(path, buf, len, ex, nex, ov, diag);
	/* A file with errors is refused anyway; its ownership is judged once
	 * it is valid, when the user it names is known. */
	if (c != NULL && ov != NULL && ov->strict_modes) {
		struct cf_build b;
		struct cfs_trust t;
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
		cfs_check_modes(&b, path, &st, &t);
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
	/* Atomic: the workers' loops (proxy/core/worker.h) take and drop
	 * references to one snapshot at once. */
	__atomic_add_fetch(&c->refs, 1, __ATOMIC_RELAXED);
	return c;
}

void
cf_config_free(struct cf_config *c)
{
	if (c == NULL || __atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	config_destroy(c);
}

const char *cf_config_path(const struct cf_config *c) { return c->path; }
const char *cf_config_hash(const struct cf_config *c) { return c->hash; }
const struct cf_proxy_settings *cf_config_proxy(const struct cf_config *c) { return &c->proxy; }

void
cf_config_show_proxy(const struct cf_config *c,
    void (*fn)(const char *key, const char *value, void *arg), void *arg)
{
	cfk_proxy_show(&c->proxy, fn, arg);
}
void *
cf_session_memo(const struct cf_session *s)
{
	return __atomic_load_n(&s->memo, __ATOMIC_ACQUIRE);
}

void *
cf_session_memo_set(const struct cf_session *s, void *p, void (*free_fn)(void *))
{
	/* The snapshot is immutable but for this cache, which it owns. */
	struct cf_session *w = (struct cf_session *)(uintptr_t)s;
	void *none = NULL;

	__atomic_store_n(&w->memo_free, free_fn, __ATOMIC_RELAXED);
	if (__atomic_compare_exchange_n(&w->memo, &none, p, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return p;
	free_fn(p);
	return none;
}

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

size_t cf_config_nsecrets(const struct cf_config *c) { return cfsec_count(c->secrets); }

const struct cf_secret *
cf_config_secret(const struct cf_config *c, size_t i)
{
	return cfsec_at(c->secrets, i);
}

const struct cf_rule *
cf_config_rule(const struct cf_config *c, unsigned id)
{
	return id < c->nrules ? c->rules[id] : NULL;
}

