/*
 * proxy/engine.h: the proxy engine as one call, for postern-proxy's main and
 * for postern-sidecar, which runs the same engine in-process.
 */
#ifndef POSTERN_PROXY_ENGINE_H
#define POSTERN_PROXY_ENGINE_H

#include <stddef.h>
#include <sys/types.h>

struct cf_config;

struct px_engine_opts {
	/* The config file, or NULL for the built-in default. */
	const char *config_path;
	/* Host patterns layered on [defaults] (postern-sidecar run --allow),
	 * each parsed exactly like one allow_hosts item. */
	const char *const *extra_allow;
	size_t n_extra_allow;
	/* Secrets added to [defaults] (postern-sidecar run --secret): names
	 * or the variables they read (cf_overrides.extra_secrets). */
	const char *const *extra_secrets;
	size_t n_extra_secrets;
	/* Listen addresses ("unix:PATH", "tcp:ADDR:PORT") for the default
	 * session; when replace_listen is nonzero they replace the [proxy]
	 * listeners of the config instead of adding to them. */
	const char *const *extra_listen;
	size_t n_extra_listen;
	int replace_listen;
	/* When not NULL, "unix:PATH": the admin socket, in place of the
	 * config's (cf_overrides.admin; postern-sidecar run --ask). */
	const char *admin;
	/* When has_user is nonzero, drop to this uid (and gid) after binding,
	 * whatever the config's "user" says. */
	int has_user;
	uid_t user;
	/* The name of the default session in logs and refusals (NULL:
	 * "default"); postern-sidecar run --session-name. */
	const char *session_name;
	/* Serve only this [session NAME] of the file, on extra_listen
	 * (NULL: every session; postern-sidecar run --session). */
	const char *serve_session;
	/* Nonzero: also tell a person on stderr, in one plain line, what was
	 * refused and how to allow it; and when the config's audit log is
	 * stderr, send it nowhere instead (postern-sidecar run, where stderr
	 * is the terminal CMD shares). */
	int human;
	/* Nonzero: every session in mode = report (cf_overrides.report;
	 * postern-sidecar run --report). */
	int report;
	/* Nonzero: every session in mode = ask (cf_overrides.ask;
	 * postern-sidecar run --ask): refused requests wait for an answer on
	 * the admin socket (proxy/policy/ask.h). */
	int ask;
	/* Nonzero: read the config once, at start, and never again: no
	 * inotify watch, and SIGHUP and POST /reload are refused (postern-sidecar
	 * run, where nobody but the command being sealed could edit the file). */
	int load_once;
	/* Nonzero: refuse, at start and at every reload, a config file that
	 * anyone but root or the proxy's own user could change (see
	 * cf_config_load()). */
	int strict_modes;
	/* When >= 0: one byte is written to this descriptor once every
	 * listener is bound and privileges are dropped, then it is closed. */
	int ready_fd;
	/* Nonzero: when the engine stops, write the learn summary of every
	 * session it served (proxy/policy/learn.h: ready allow_hosts blocks) to
	 * learn_fd, from its start, replacing what was there
	 * (postern-sidecar run --learn, which reads it once the engine is
	 * gone). */
	int learn;
	int learn_fd;
	/* Nonzero (with human): append each refusal line told to a person
	 * to refusals_fd too (proxy/flow/notice.h: px_notice_file(); postern-sidecar
	 * run's file for the command). */
	int refusals;
	int refusals_fd;
	/* When not NULL: serve this snapshot, which px_engine_load() made
	 * from these same options, and never read config_path (it is only
	 * the snapshot's name then; implies load_once).  postern-sidecar run
	 * loads the file once and serves those bytes again in every engine
	 * it starts, also one that replaces an engine that died. */
	struct cf_config *config;
	/* Nonzero: with [proxy] user and socket_dir, started as root, fork
	 * the socket maker before the drop (proxy/core/sockmaker.h;
	 * postern-proxy, not postern-sidecar). */
	int sockmaker;
};

/*
 * Keep the secrets' values out of core files and away from debuggers, as
 * early as a process that will hold them can: the process is made not
 * dumpable (PR_SET_DUMPABLE 0: no core file, /proc/PID/mem and ptrace(2)
 * for root only), its soft RLIMIT_CORE is 0 (the hard one is kept, so that
 * postern-sidecar run gives its command its own limit back), and OpenSSL's
 * secure heap is set up for the values (conf/secmem.h): CF_SECMEM_ARENA
 * bytes, mlock(2)ed when RLIMIT_MEMLOCK allows it and MADV_DONTDUMP
 * always.  Call it after px_mem_init() and before any config is loaded;
 * a change of uid makes a process dumpable again, so px_engine_main()
 * calls it again after its privilege drop.  Idempotent.
 */
void px_engine_harden(void);

/*
 * Move the environment off the block the kernel gave the process into
 * copies of its own, and overwrite that block with zero bytes:
 * /proc/PID/environ reads those very bytes for the whole life of the
 * process, so a secret's from_env value (or a variable postern-sidecar
 * run --env passes on) would otherwise stay readable there.  getenv()
 * answers as before, from the copies, so a reload reads the same values.
 * Returns 0 or -ENOMEM (the block is then left as it was).  Idempotent.
 */
int px_engine_env_take(void);

/*
 * Load the config OPTS names with the overrides they describe, exactly as
 * px_engine_main() would at start, telling its warnings and errors on
 * stderr as it would.  Returns the snapshot (free it with
 * cf_config_free()), or NULL when the config is refused (the caller's
 * exit status is then 2).
 */
struct cf_config *px_engine_load(const struct px_engine_opts *opts);

/*
 * Judge the config OPTS names with the overrides they describe, exactly
 * as px_engine_load() would, and summarise it (px_check() in
 * proxy/check.h, LISTEN_NOTE in place of the listeners).  Returns 0, or 2
 * when the config is refused.
 */
int px_engine_check(const struct px_engine_opts *opts, const char *listen_note);

/*
 * Load the config, or take OPTS->config (exiting with FILE:LINE errors on
 * stderr if it is bad),
 * bind every listener, drop privileges, and serve until SIGTERM or SIGINT.
 * Socket files the engine created are removed before it returns.  Returns
 * the process exit status: 0 after a clean stop, 2 for a config error, 1
 * for any other start-up failure.
 */
int px_engine_main(const struct px_engine_opts *opts);

#endif
