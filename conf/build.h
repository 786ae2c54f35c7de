/*
 * conf/build.h: the state of one parse of a config file, shared by the
 * modules that fill it and not part of conf/'s interface: the line reader
 * (reader.c), the table of keys (keys.c), StrictModes (strict.c) and the
 * snapshot builder (config.c), which owns it for one cf_config_parse() or
 * cf_config_load().  Only config.c creates one for a config (grantfile.c
 * one for a grants file, for the reader and the errors alone); the
 * others fill it.
 */
#ifndef POSTERN_CONF_BUILD_H
#define POSTERN_CONF_BUILD_H

#include <stddef.h>

#include "conf/awskey.h"
#include "conf/config.h"
#include "conf/parent.h"
#include "conf/secret.h"

/* A key seen once in a section, for "given twice". */
struct cf_key_seen {
	char *section;
	char *key;
	int line;
};

/* A [defaults] or [session NAME] as it is read. */
struct cf_sess_build {
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
	/* mode = (CF_SESS_MODE_*, 0: not given) and its line. */
	unsigned mode;
	int mode_line;
	/* decider = (parsed, 0 line: not given), decider_timeout,
	 * decider_ask (1 unlisted, 2 all) and decider_cache_max, each with
	 * its line (0: not given). */
	struct cf_decider decider;
	int decider_line;
	unsigned decider_timeout, decider_ask, decider_cache_max;
	int decider_timeout_line, decider_ask_line, decider_cache_max_line;
	/* The shares in force, worked out in build(). */
	unsigned eff_max, eff_uid;
	/* token_file = PATH: the SHA-256 of the token read (conf/token.h)
	 * and its line (0: not given). */
	int token_line;
	unsigned char token_md[32];
	/* secrets = NAME, ...: the names as written, each with its line. */
	char **secret_names;
	int *secret_lines;
	size_t nsecret_names;
	/* canaries = VAR, ...: the variables as written, and the line. */
	char **canary_names;
	size_t ncanary_names;
	int canary_line;
	/* upstream_proxy and its keys as written (enum cf_parent_key),
	 * checked; NULL: not given.  Each with its line. */
	char *up_val[CFP_NKEYS];
	int up_line[CFP_NKEYS];
	/* github_repositories, github_permissions, normalised; NULL: not given. */
	char *github[2];
};

/* A [secret NAME] as it is read (conf/secret.c builds the secret). */
struct cf_secret_build {
	char *name;
	int line;
	char *from_env, *from_file, *placeholder_env;
	char *placeholder_prefix;       /* NULL: not set; "" set empty */
	struct cf_inject *inject;
	size_t ninject;
	int always;	/* inject_when = always */
	int kind;	/* enum cf_secret_kind */
	char *aws[CF_AWS_NKEYS];	/* kind = aws-sigv4's keys (conf/awskey.h) */
	char *mint[12];	/* by enum cf_mint_key: token_url, client_id, ... */
};

/* One parse: where it reads, what it found, what went wrong. */
struct cf_build {
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
	struct cf_key_seen *seen;
	size_t nseen;
	/* Results. */
	struct cf_proxy_settings proxy;
	struct cf_listen *plisten;
	size_t nplisten;
	struct cf_sess_build defaults;
	struct cf_sess_build *sess;
	size_t nsess;
	int hosts_line;
	struct cf_pin *pins;
	size_t npins;
	struct cf_secret_build *secrets;
	size_t nsecrets;
	struct cf_secret_build *cursec; /* the [secret] whose keys are being read */
	/* Runtime sessions (cf_config_load_extra()): the text after the
	 * file's holds one [session NAME] each; a line from segs[i].base on
	 * is line (line - base) of segs[i].file, its header being line 0. */
	const struct cfb_seg {
		const char *file;
		int base;
	} *segs;
	size_t nsegs;
};

/* Free what a parsed decider = holds (conf/config.h), and zero it. */
void cfb_decider_clear(struct cf_decider *d);
/* The runtime session that holds line *LINE of B's text (1 for the first
 * of B->segs), *LINE then made its own; 0 for the file, *LINE kept. */
size_t cfb_locate(const struct cf_build *b, int *line);

/*
 * Append "FILE:LINE: MESSAGE" (just "FILE: MESSAGE" when LINE is 0) to
 * B's errors, B->file being the FILE.  Counts the error in B->nerrors even
 * when B->diag is NULL or memory runs out, so that an error never goes
 * unnoticed.
 */
__attribute__((format(printf, 3, 4)))
void cfb_err(struct cf_build *b, int line, const char *fmt, ...);

/* Append a warning, as given, to D; NULL D is a no-op. */
__attribute__((format(printf, 2, 3)))
void cfb_warn(struct cf_diag *d, const char *fmt, ...);

/* Write untrusted S into OUT (SIZE bytes, at least 5) for a message:
 * printable ASCII as is, every other byte as \xNN, "..." when cut. */
void cfb_show(char *out, size_t size, const char *s);

/* Blank inside a line: space, tab or CR. */
int cfb_blank(char c);

/*
 * What SECTION (a header's text) is: "proxy", "defaults", "hosts",
 * "session" or "secret" (then *NAME points at the name inside SECTION), or NULL for
 * none of them (*NAME NULL).
 */
const char *cfb_section_kind(const char *section, const char **name);

/* The [secret NAME] that B has read so far, or NULL. */
struct cf_secret_build *cfb_find_secret(struct cf_build *b, const char *name);

/* Nonzero when the LEN bytes at N may name a [session] or a [secret]:
 * letters, digits, '-', '_', '.', 1-64 of them. */
int cfb_name_ok(const char *n, size_t len);

/* Nonzero when N may name a [session]: cfb_name_ok(), and not "default". */
int cfb_session_name_ok(const char *n);

/* The session named NAME that B has read so far, or NULL. */
struct cf_sess_build *cfb_find_sess(struct cf_build *b, const char *name);

/* Note KEY of SECTION as seen on line B->line; returns the line it was
 * seen on before, or 0 the first time (or when memory runs out). */
int cfb_seen_before(struct cf_build *b, const char *section, const char *key);

/*
 * The name in the NULL-terminated list KNOWN nearest to KEY by edit
 * distance when it is near enough to be a typo, else NULL: the "did you
 * mean" of an unknown key or section.  Among equals the first wins.
 */
const char *cfb_nearest(const char *key, const char *const *known);

/* Free what the [proxy] settings P own (not P itself). */
void cfb_proxy_clear(struct cf_proxy_settings *p);

/* Append the secret NAME (copied) of LINE to S's secrets = list (LINE 0:
 * from the command line, postern-sidecar run --secret); 0 or -ENOMEM. */
int cfb_add_secret_name(struct cf_sess_build *s, const char *name, int line);

/*
 * conf/secret.c's part of build(): turn B's [secret]s and the built-ins
 * into secrets, resolve every session's secrets = (SBS[i] is what was read
 * for SESSIONS[i]: [defaults] for the default session, which every other
 * session's selection starts with), read the values the sessions that
 * listen somewhere select, check each binding and make the placeholders.
 * Every problem is a cfb_err(); the set of secrets goes to *OUT (free with
 * cfsec_free()).  Returns 0, or -ENOMEM.
 */
struct cfsec_set;
int cfsec_attach(struct cf_build *b, struct cf_session *sessions, size_t n,
    struct cf_sess_build *const *sbs, struct cfsec_set **out);
void cfsec_free(struct cfsec_set *set);
/* Point the secrets and bindings of SET at FILE, the snapshot's copy of
 * the file name. */
void cfsec_set_file(struct cfsec_set *set, const char *file);
/* The secrets --check shows (cf_config_nsecrets()): the file's, then the
 * built-ins a session selects. */
size_t cfsec_count(const struct cfsec_set *set);
const struct cf_secret *cfsec_at(const struct cfsec_set *set, size_t i);
/* Free what session S holds of secrets (its lists and placeholders). */
void cfsec_session_clear(struct cf_session *s);

/* Free everything B still owns (not B itself, nor B->diag). */
void cfb_clear(struct cf_build *b);

#endif
