/*
 * sidecar/run.h: `postern-sidecar run -- CMD`, one command in a fresh
 * network namespace with only loopback, the proxy engine outside on a
 * private UNIX socket and postern-bridge inside carrying it to CMD.
 */
#ifndef POSTERN_SIDECAR_RUN_H
#define POSTERN_SIDECAR_RUN_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Where the engine's notices (refusals, warnings) go while CMD runs
 * (--notices).  AUTO: to a log file when CMD holds the terminal (run's
 * stdin and stderr are one terminal and run is in its foreground), else
 * to stderr.  What is said before CMD starts and after it ends, the
 * summary of refusals among it, always goes to stderr.
 */
#define SC_NOTICES_AUTO 0
#define SC_NOTICES_TERMINAL 1
#define SC_NOTICES_FILE 2

struct sc_run_opts {
	const char *config_path;       /* NULL: the built-in default */
	const char *settings_path;     /* --settings FILE, which config_path
	                                *   (a memory file's) was made from */
	const char *const *allow;      /* extra allow_hosts items */
	size_t n_allow;
	const char *bridge;            /* NULL: next to /proc/self/exe */
	/* --connect tcp:ADDR:PORT: no engine; a central proxy's auth=token
	 * listener decides, reached through a relay outside the jail that
	 * presents --token-file's token (bridge/upstream.h). */
	const char *connect;
	const char *token_file;
	const char *session_name;      /* NULL: "default" */
	const char *session;           /* --session: serve [session NAME] */
	int report;                    /* --report: every session in mode = report */
	int learn;                     /* --learn: the learned block when CMD exits */
	const char *learn_file;        /*   --learn=FILE: there, not on stderr */
	int ask;                       /* --ask: every session in mode = ask, with an
	                                *   admin socket of its own (sidecar/ask.h) */
	int notices;                   /* --notices: SC_NOTICES_* */
	uid_t uid;                     /* a root caller's command runs as */
	gid_t gid;                     /*   uid:gid (never 0; see main.c) */
	const char *const *sockets;    /* --socket: host sockets CMD may reach */
	size_t n_sockets;
	const char *const *forwards;   /* --forward: passed on to the bridge */
	size_t n_forwards;
	const char *const *env;        /* --env: variables CMD also gets */
	size_t n_env;
	const char *const *secrets;    /* --secret: secrets whose placeholder CMD gets */
	size_t n_secrets;
	const char *home;              /* --home: CMD's HOME (NULL: see sc_run_main) */
	const char *const *binds;      /* --bind: host directories CMD sees read-write */
	size_t n_binds;
	char *const *argv;             /* CMD and its arguments, NULL-ended */
};

/*
 * Run OPTS->argv as described above, in namespaces of its own: network
 * (only lo), PID (the bridge is its PID 1, with a /proc of its own), mount
 * (sidecar/jail.h: no host UNIX socket but OPTS->sockets) and user.  A
 * root caller's command runs as OPTS->uid and OPTS->gid in a user namespace
 * mapping only those ids onto themselves; every other namespace is made by
 * real root before that, so the command holds no capability over any of
 * them.  An ordinary caller's command keeps the caller's ids (OPTS->uid is
 * then ignored) in a user namespace that owns the others.  Either way the
 * command starts with no capability at all (empty bounding set) and
 * no_new_privs.  Returns the exit status the sidecar should exit with:
 * CMD's (128 + N when a signal killed it), or the engine's start-up status
 * (1, or 2 for a config error, a bad --socket, or a command uid that is the
 * engine's), or 125 when the sidecar itself could not set things up (no
 * user namespaces, no bridge binary).  The config is read once, before CMD
 * starts; an engine that dies while CMD runs is replaced by one serving
 * that same snapshot on the same socket, at most 5 times in 60 s, after
 * which CMD is sent SIGTERM (its status, 143, is then returned).
 * CMD's HOME is OPTS->home when given; else, started by root, the
 * caller's HOME when CMD's uid may write it (its own, or world-writable),
 * else the passwd home of CMD's uid when that is a directory the uid
 * owns, or else a fresh
 * empty one, 0700 and CMD's, in its jail (SC_JAIL_HOME; a warning says
 * so); started by a user, the caller's own.
 * On return no socket file, directory, namespace or child process of ours
 * is left, also after SIGINT, SIGTERM or SIGHUP (forwarded to CMD first).
 */
int sc_run_main(const struct sc_run_opts *opts);

/*
 * run --check: judge OPTS->config_path exactly as sc_run_main() would load
 * it (the same overrides: its listeners replaced by run's own socket, only
 * [session OPTS->session] when given, --allow, --secret, --report, --ask;
 * no StrictModes, as run reads the file once, before CMD starts), and
 * print the summary postern-proxy --check prints, then the run line that
 * uses the file.  Nothing is started.  Returns 0, or 2 with every
 * FILE:LINE error on stderr.
 */
int sc_run_check(const struct sc_run_opts *opts);

#endif
