/*
 * conf/config.h: the config model.  A file is parsed (inih) and validated
 * completely into an immutable, reference-counted snapshot; the proxy swaps
 * snapshots on reload, and a connection keeps the snapshot that admitted it.
 */
#ifndef POSTERN_CONF_CONFIG_H
#define POSTERN_CONF_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include "conf/host.h"
#include "conf/rule.h"

enum cf_listen_kind {
	CF_LISTEN_UNIX = 1,
	CF_LISTEN_TCP,
};

struct cf_listen {
	enum cf_listen_kind kind;
	char *text;                   /* "unix:/run/x.sock mode=0600" as written */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct sockaddr_storage addr; /* TCP only */
	socklen_t addrlen;
	/* UNIX only: the socket file's owner, group and mode, applied at
	 * every bind (owner=, group=, mode=).  Without owner= or group= the
	 * file keeps the uid or gid of the process that binds it. */
	int has_owner, has_group, has_mode;
	uid_t owner;
	gid_t group;
	mode_t mode;                  /* 0660 unless mode= */
	/* TCP only, [proxy] only (auth=token): every request must carry a
	 * session's token, which chooses the session (conf/token.h). */
	int auth_token;
	const char *file;
	int line;
};

enum cf_sni_mode {
	CF_SNI_MATCH = 0,
	CF_SNI_STRICT,
	CF_SNI_OFF,
};

/* A session's "mode ="; 0 in the build means "not given". */
enum {
	CF_SESS_MODE_ENFORCE = 1,
	CF_SESS_MODE_REPORT = 2,
	CF_SESS_MODE_ASK = 3,
};

/* [proxy]; durations in milliseconds. */
struct cf_proxy_settings {
	struct cf_listen admin;        /* admin.kind == 0 when not set */
	int has_admin_group;
	gid_t admin_group;
	/* metrics = tcp:ADDR:PORT: GET /metrics only; kind == 0 when not set. */
	struct cf_listen metrics;
	int has_user;
	uid_t user;
	gid_t group;
	char *log;                     /* "stderr" or an absolute path */
	char *dns_servers;             /* comma-separated for c-ares, or NULL */
	/* TLS termination: where each session's CA is kept across restarts
	 * (NULL: in memory only), and the CA file upstream certificates are
	 * verified against (NULL: the system store). */
	char *state_dir;
	char *upstream_ca_file;
	/* mode = ask: where ctl grants --save writes the runtime grants, read
	 * back at start and at every reload (conf/grantfile.h); NULL: none,
	 * grants end with the process. */
	char *grants_file;
	/* Where the socket maker (proxy/core/sockmaker.h) may make UNIX
	 * sockets after the privilege drop: a normal absolute path, NULL for
	 * none (no maker).  Read at start only. */
	char *socket_dir;
	enum cf_sni_mode sni;
	unsigned connect_timeout_ms;
	unsigned idle_timeout_ms;
	unsigned header_timeout_ms;
	/* mode = ask: how long a held request waits for an admin's answer
	 * (proxy/policy/ask.h) before it is refused with ask_timeout. */
	unsigned ask_timeout_ms;
	unsigned max_connections;
	/* One event loop per worker thread (proxy/core/worker.h): 1 to
	 * PX_WORKERS_MAX, or 0 for "auto" (the CPUs the process may run on).
	 * Read at start only: a reload that changes it warns. */
	unsigned workers;
	unsigned max_headers;
	size_t max_header_bytes;
	/* The most of a request body the proxy gathers to replace placeholders
	 * in it (a Content-Length body, a WebSocket text frame), in bytes. */
	size_t replace_max;
	int revoke;
	/* The audit log's checkpoints (proxy/core/audit.h): the Ed25519 key
	 * that signs them (NULL: none), how often, the lines' format
	 * (PX_AUDIT_JSON 0, PX_AUDIT_OCSF 1).  Read at start only. */
	char *audit_signing_key;
	unsigned audit_checkpoint_ms;
	unsigned audit_format;
};

struct cf_secret;
struct cf_parent;

/* The most worker threads workers = N may ask for. */
#define PX_WORKERS_MAX 64

/*
 * decider = (a session's or [defaults]'): an outside program asked about
 * requests (proxy/core/decider.h).  UNIX_PATH for unix:PATH, else SA
 * (a loopback address and port) with HTTP_PATH for http://ADDR:PORT/PATH.
 * ALL: decider_ask = all (every request), else only what the allowlist
 * refuses.  Owned by the snapshot.
 */
struct cf_decider {
	char *text;                   /* as written, for messages */
	char *unix_path;              /* NULL for http */
	struct sockaddr_storage sa;
	unsigned salen;
	char *http_path;
	char *http_host;              /* ADDR:PORT, for the Host header */
	unsigned timeout_ms;          /* decider_timeout */
	unsigned cache_max;           /* decider_cache_max; 0: no cache */
	int all;                      /* decider_ask = all */
	int line;
};

/*
 * A session: its listeners and its effective rules ([defaults] first, then
 * its own).  The default session (index 0, named "default") has the [proxy]
 * listeners and only the [defaults] rules.
 */
struct cf_session {
	char *name;
	int is_default;               /* the [defaults] session (index 0) */
	int cli_hints;                /* cf_suggest says --allow (cf_overrides) */
	/* mode = report (its own, [defaults]' or cf_overrides.report): what
	 * the allowlist would refuse is allowed and audited as would-deny
	 * (cf_decide); every other refusal stays. */
	int report;
	/* mode = ask (its own, [defaults]' or cf_overrides.ask): what the
	 * allowlist refuses is held while an admin is asked (proxy/policy/ask.h);
	 * nothing is allowed without an answer.  Never set with REPORT. */
	int ask;
	/* decider = ..., or NULL (see struct cf_decider). */
	struct cf_decider *decider;
	struct cf_listen *listen;
	size_t nlisten;
	const struct cf_rule **allow;
	size_t nallow;
	const struct cf_rule **deny;
	size_t ndeny;
	/* Its share of [proxy] max_connections: what its peers together may
	 * hold open, and what one peer uid of a UNIX listener may hold within
	 * it (SO_PEERCRED), so that one session, or one sandbox among several
	 * on a shared socket, cannot take every connection. */
	unsigned max_connections;
	unsigned max_connections_per_uid;
	/* Its secrets: read them through conf/secret.h.  A session that
	 * listens nowhere is never served and gets none. */
	const struct cf_secret **secrets;
	char **placeholders;
	size_t nsecrets;
	/* Its canaries' variables, [defaults]' first (conf/canary.h). */
	char **canaries;
	size_t ncanaries;
	const char **term_hosts;      /* distinct hosts its secrets bind */
	char *github[2];              /* github_repositories, _permissions (conf/secret.h) */
	size_t nterm_hosts;
	/* token_file: the SHA-256 of its token, read at every load; a
	 * request on an auth=token listener that presents the token is
	 * this session's (conf/token.h). */
	int has_token;
	unsigned char token_md[32];
	const char *file;
	int line;
	/* Its parent proxy (conf/parent.h), NULL: it connects direct. */
	struct cf_parent *parent;
	int runtime;                  /* made at run time (cf_extra), FILE "session:NAME" */
	/* What the proxy derives from the session once for the snapshot
	 * (cf_session_memo()); freed with it by MEMO_FREE. */
	void *memo;
	void (*memo_free)(void *);
};

/*
 * A table the proxy derives from session S (its leak scan's needles),
 * made once for the snapshot and shared by every connection and thread
 * that uses it.  cf_session_memo() returns it, or NULL before it is made.
 * cf_session_memo_set() keeps P, unless another thread kept one first:
 * then P is freed with FREE_FN and that one is returned.  What is kept is
 * freed with FREE_FN when the snapshot is.
 */
void *cf_session_memo(const struct cf_session *s);
void *cf_session_memo_set(const struct cf_session *s, void *p, void (*free_fn)(void *));

/* Nonzero when S can be reached: it has a listener of its own, or a
 * token for an auth=token listener. */
static inline int
cf_session_served(const struct cf_session *s)
{
	return s->nlisten > 0 || s->has_token;
}

/*
 * A name pinned in [hosts] ("NAME = ADDR, ADDR"): the proxy takes these
 * addresses instead of asking DNS, and vets them exactly like a DNS answer
 * (never-reachable ranges, "private", deny_hosts, its own listeners).
 */
#define CF_PIN_MAX_ADDRS 16
struct cf_pin {
	char name[CF_HOST_MAX];     /* normal form */
	size_t naddrs;
	struct sockaddr_storage addrs[CF_PIN_MAX_ADDRS]; /* port 0 */
	const char *file;           /* owned by the config */
	int line;
};

struct cf_config;

/* Errors ("FILE:LINE: what is wrong (text)") and warnings, in file order. */
struct cf_diag {
	char **errors;
	size_t nerrors;
	char **warnings;
	size_t nwarnings;
};

/* Release the strings in D (D itself is the caller's); NULL is a no-op. */
void cf_diag_free(struct cf_diag *d);

/*
 * Overrides applied on top of a file while it is built, so that they survive
 * every reload (postern-sidecar run --allow, its private listener).
 */
struct cf_overrides {
	const char *const *extra_allow;  /* allow_hosts items for [defaults] */
	size_t n_extra_allow;
	/* secrets for [defaults] (postern-sidecar run --secret): each a
	 * secret's name, or the variable a secret reads its value from or
	 * gives its placeholder in (ANTHROPIC_API_KEY: the built-in
	 * anthropic). */
	const char *const *extra_secrets;
	size_t n_extra_secrets;
	const char *const *extra_listen; /* listeners for the default session */
	size_t n_extra_listen;
	int replace_listen;              /* they replace [proxy]'s listeners */
	/* "unix:PATH": the admin socket, in place of the file's [proxy]
	 * admin and admin_group (so at mode 0600); postern-sidecar run --ask,
	 * whose per-run socket is the only way to answer its questions. */
	const char *admin;
	int has_user;                    /* override [proxy] user */
	uid_t user;
	const char *default_name;        /* name of the default session, or
	                                  * NULL for "default" */
	/* Serve only [session NAME] of the file, on extra_listen: every
	 * listener the file names (its [proxy]'s, each session's) is left
	 * out; a NAME the file lacks is an error listing its sessions
	 * (postern-sidecar run --session). */
	const char *serve_session;
	/* Nonzero: refuse a file that anyone but root or the proxy's own user
	 * could change (sshd's StrictModes; see cf_config_load()).  The
	 * proxy's own user is the caller's effective uid, USER when has_user
	 * is set, and with trust_file_user also the [proxy] user the file
	 * names (at start-up, before the privilege drop, never at a reload:
	 * a file must not vouch for itself once the proxy runs as that
	 * user). */
	int strict_modes;
	int trust_file_user;
	/* Nonzero: the rules are given on a command line (postern-sidecar
	 * run), so cf_suggest() says "--allow 'PATTERN'" rather than a line
	 * to add to [defaults]. */
	int cli_hints;
	/* Nonzero: every session is in mode = report, whatever the file
	 * says (postern-sidecar run --report). */
	int report;
	/* Nonzero: every session is in mode = ask, whatever the file says
	 * (postern-sidecar run --ask); it wins over REPORT, since holding
	 * a request is the stricter of the two. */
	int ask;
};

/*
 * Load and validate the config file PATH, or the built-in default when PATH
 * is NULL, with OV applied (may be NULL).  Returns a new snapshot with one
 * reference, or NULL when the file cannot be read or has any error; every
 * error is appended to DIAG (which may be NULL).  Warnings go to DIAG too.
 *
 * With OV->strict_modes, the file is also refused ("PATH: why") when the
 * file it resolves to (symlinks followed), or any directory from it up to
 * /, or the directory that holds PATH itself (where a symlink may be
 * swapped) is owned by another uid than root or the proxy's own user, or
 * is writable by its group or by others.  A sticky directory owned by
 * root (/tmp) is accepted on the way, never as the one holding the file:
 * there anyone may create the name once it is gone.  A directory's mode
 * bits do not count on a read-only mount (a ConfigMap volume's 0777 root);
 * the file's always do.
 */
struct cf_config *cf_config_load(const char *path, const struct cf_overrides *ov,
    struct cf_diag *diag);

/*
 * A session made at run time (the admin socket's PUT /sessions/NAME): its
 * NAME and the LEN bytes of TEXT, the lines of a [session NAME] section
 * without its header.
 */
struct cf_extra {
	const char *name;
	const char *text;
	size_t len;
};

/*
 * cf_config_load(), then each of the NEX runtime sessions of EX read as if
 * the file ended with its "[session NAME]" and its lines: the same reader,
 * keys and checks decide it.  An error in one says "session:NAME:LINE:
 * why", LINE counted in its TEXT; a body with a section header is refused;
 * a file section of a runtime session's name is "FILE:LINE: session NAME
 * exists at run time (remove it first)".  Those sessions are marked
 * runtime, and their rules and listeners name "session:NAME".
 */
struct cf_config *cf_config_load_extra(const char *path, const struct cf_overrides *ov,
    const struct cf_extra *ex, size_t nex, struct cf_diag *diag);

/* The same from LEN bytes of TEXT, reported under the file name NAME. */
struct cf_config *cf_config_parse(const char *name, const char *text, size_t len,
    const struct cf_overrides *ov, struct cf_diag *diag);

/* The text of the built-in default config (for --check and the man page). */
const char *cf_default_text(void);

/* Take one more reference; returns C. */
struct cf_config *cf_config_ref(struct cf_config *c);
/* Drop one reference, freeing the snapshot with the last; NULL is a no-op. */
void cf_config_free(struct cf_config *c);

const char *cf_config_path(const struct cf_config *c);      /* "<built-in>" for the default */
const char *cf_config_hash(const struct cf_config *c);      /* 12 hex digits of SHA-256 */
const struct cf_proxy_settings *cf_config_proxy(const struct cf_config *c);
/* Call FN once for each [proxy] key (but listen, shown per session), in
 * the order of the key table, with its value in force as a file would
 * write it (what --check prints; VALUE is valid during the call only). */
void cf_config_show_proxy(const struct cf_config *c,
    void (*fn)(const char *key, const char *value, void *arg), void *arg);
size_t cf_config_nsessions(const struct cf_config *c);
const struct cf_session *cf_config_session(const struct cf_config *c, size_t i);
/* The session named NAME, or NULL; "default" always names the session of
 * [defaults] and [proxy], whatever name the overrides gave it. */
const struct cf_session *cf_config_find_session(const struct cf_config *c, const char *name);
size_t cf_config_nrules(const struct cf_config *c);         /* rule ids are 0..n-1 */
const struct cf_rule *cf_config_rule(const struct cf_config *c, unsigned id);

/*
 * Parse a listen address "unix:PATH [owner=UID] [group=GID] [mode=OCTAL]"
 * or "tcp:ADDR:PORT [auth=token]" into L (the caller frees L->text).  PATH ends at the
 * first blank; UID and GID are decimal (0-2147483647, no sign, no leading
 * zero), OCTAL is three or four octal digits, at most 0777; each option at
 * most once.  Returns 0 or -EINVAL with *WHY.
 */
int cf_listen_parse(const char *s, struct cf_listen *l, const char **why);

/* The [hosts] pin for NAME (normal form), or NULL when it has none;
 * cf_config_pin_at: the Ith pin in file order, NULL past the last. */
const struct cf_pin *cf_config_pin(const struct cf_config *c, const char *name);
const struct cf_pin *cf_config_pin_at(const struct cf_config *c, size_t i);

/* The decisions on requests and addresses (conf/decide.c). */
#include "conf/decide.h"
/* Named secrets, their bindings and placeholders (conf/secret.c). */
#include "conf/secret.h"

/*
 * A duration as the config writes one (500ms, 10s, 15m, 1h: above zero, at
 * most 30 days) into *MS.  Returns 0, or -EINVAL with *WHY, one sentence.
 * For what takes a duration from elsewhere (the admin socket's "for").
 */
int cf_duration_parse(const char *s, unsigned *ms, const char **why);

#endif
