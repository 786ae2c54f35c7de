/*
 * bridge/main.c: postern-bridge, the sandbox's one way to the proxy.
 *
 * Options, the identity and environment CMD gets, the child, its signals
 * and its descendants.  The relay itself is bridge/relay.c, bringing "lo" up is
 * bridge/link.c.  See postern-bridge(8).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/cursor.h"
#include "base/log.h"
#include "base/text.h"
#include "base/super.h"
#include "bridge/addr.h"
#include "bridge/dnsstub.h"
#include "bridge/connect.h"
#include "bridge/env.h"
#include "bridge/forward.h"
#include "bridge/link.h"
#include "bridge/priv.h"
#include "bridge/relay.h"
#include "bridge/session.h"
#include "bridge/upstream.h"

#define MAX_LISTEN 16
#define MAX_FORWARD 16
#define DEFAULT_PORT "3128"
/* Exit status for a bridge that could not set itself up. */
#define EXIT_SETUP 2

static bool br_started;
/* After CMD is gone: how long its leftovers get between SIGTERM and SIGKILL. */
#define GRACE_MS 1000

/*
 * The signal the kernel sends the bridge when its parent dies
 * (PR_SET_PDEATHSIG).  A real-time signal nobody else has a use for, so that
 * "the parent is gone" cannot be mistaken for a SIGTERM meant for CMD.
 */
#define SIG_PARENT_DIED (SIGRTMIN + 3)

extern char **environ;

struct bridge {
	struct br_relay *relay;
	pid_t child;        /* CMD, or 0 when none runs */
	int status;         /* CMD's wait status, once it has exited */
	bool child_done;
	bool parent_died;
	bool relay_only;
	int exit_code;
	sigset_t handled;
};

static const int forwarded[] = {
	SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH,
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: postern-bridge --connect SOCK|tcp:ADDR:PORT [--token-file FILE]\n"
	    "                      [--listen ADDR:PORT]... [--env NAME]...\n"
	    "                      [--forward PORT[:HOST:HPORT]]... [--no-env] [--allow-root]\n"
	    "                      [--no-session-info] [--no-capture]\n"
	    "                      [--] [CMD [ARG]...]\n"
	    "       postern-bridge connect [--via ADDR:PORT | --connect SOCK] HOST PORT\n"
	    "\n"
	    "Relay loopback TCP (default 127.0.0.1:" DEFAULT_PORT ", and [::1]:" DEFAULT_PORT
	    " when the\n"
	    "namespace has IPv6) to the proxy's UNIX socket SOCK, one UNIX connection per\n"
	    "TCP connection, and run CMD with a scrubbed environment and the proxy\n"
	    "variables set, with no capabilities and no_new_privs.  Without CMD, relay\n"
	    "until signalled.  \"connect\" relays stdin and stdout over one CONNECT\n"
	    "HOST:PORT (ssh's ProxyCommand, via the bridge's listener, default\n"
	    "127.0.0.1:" DEFAULT_PORT ").\n"
	    "\n"
	    "  -c, --connect SOCK     the proxy's UNIX socket (required), or tcp:ADDR:PORT, a\n"
	    "                         central proxy's auth=token listener\n"
	    "      --token-file FILE  the session's token for a tcp: proxy, read once at\n"
	    "                         start (its first line: TOKEN or NAME:TOKEN)\n"
	    "  -l, --listen ADDR:PORT listen here instead (repeatable; IPv6 as [::1]:PORT)\n"
	    "  -e, --env NAME         also pass NAME from this environment to CMD\n"
	    "  -f, --forward PORT[:HOST:HPORT]\n"
	    "                         listen on 127.0.0.1:PORT and [::1]:PORT too, and ask\n"
	    "                         the proxy to CONNECT each connection to HOST:HPORT\n"
	    "                         (default 127.0.0.1:PORT, the proxy host's loopback;\n"
	    "                         allowed only by a rule for it; repeatable)\n"
	    "  -n, --no-env           do not set HTTP_PROXY and the other proxy variables\n"
	    "      --no-session-info  do not ask the proxy for the session's placeholders\n"
	    "                         and CA before running CMD\n"
	    "      --allow-root       run CMD even as uid or gid 0 of the host (refused\n"
	    "                         otherwise: that identity owns the host's root files)\n"
	    "      --no-capture       no DNS stub on 127.0.0.1:53 and no capture of\n"
	    "                         connections to its 198.18.0.0/15 addresses\n"
	    "  -h, --help             this text\n"
	    "  -V, --version          the version\n");
}

/*
 * Whether /etc/resolv.conf has a "nameserver 127.0.0.1" line: the sandbox
 * expects the DNS stub.  Read with stdio, a file of the sandbox's own.
 */
static bool
resolv_names_stub(void)
{
	char line[256];
	bool found = false;
	FILE *f = fopen("/etc/resolv.conf", "re");

	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = strncmp(line, "nameserver 127.0.0.1", 20) == 0 &&
		    (line[20] == '\n' || line[20] == ' ' || line[20] == '\t' || line[20] == '\0');
	fclose(f);
	return found;
}

static void
forward(struct bridge *b, int sig)
{
	if (b->child > 0 && !b->child_done)
		(void)kill(b->child, sig);
}

/* Reap every child that has exited: CMD, and orphans handed to us. */
static void
reap(struct bridge *b)
{
	pid_t pid;
	int st;

	for (;;) {
		pid = bs_reap_one(&st);
		if (pid <= 0)
			return;
		if (pid == b->child) {
			b->status = st;
			b->child_done = true;
		}
	}
}

static void
on_signal(int fd, void *arg)
{
	struct bridge *b = arg;
	struct signalfd_siginfo si;
	int sig;

	while (bs_sigfd_read(fd, &si) == 1) {
		sig = (int)si.ssi_signo;
		if (sig == SIGCHLD) {
			reap(b);
			if (b->child_done)
				br_relay_stop(b->relay);
			continue;
		}
		if (sig == SIG_PARENT_DIED) {
			/* Whoever started us is gone: so is the session. */
			b->parent_died = true;
			br_relay_stop(b->relay);
			continue;
		}
		if (b->relay_only) {
			if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP ||
			    sig == SIGQUIT)
				br_relay_stop(b->relay);
			continue;
		}
		/*
		 * A signal from the kernel (a terminal's ^C, ^\, resize or
		 * hang-up) went to the whole foreground process group, which
		 * CMD shares with us; forwarding it would deliver it twice.
		 */
		if (si.ssi_code == SI_KERNEL)
			continue;
		forward(b, sig);
	}
}

/*
 * The children of this process, read from /proc (CONFIG_PROC_CHILDREN).
 * Fills PIDS with at most MAX and returns how many, or -1 when the list
 * cannot be read.
 */
static int
list_children(pid_t *pids, int max)
{
	char path[64], buf[4096];
	FILE *f;
	size_t len;
	int n = 0;
	uint64_t v;
	struct bs_cursor c;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/children", (long)getpid());
	f = fopen(path, "re");
	if (f == NULL)
		return -1;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	/* The kernel's own text: decimal pids separated by single spaces. */
	bs_cur_init(&c, buf, len);
	while (bs_cur_left(&c) > 0 && n < max) {
		bs_cur_skip_until(&c, "0123456789");
		if (bs_cur_num(&c, 1u << 30, &v) == 0)
			pids[n++] = (pid_t)v;
		else
			bs_cur_skip(&c, "0123456789");
	}
	return n;
}

/* Send SIG to every process left below us.  Returns how many were found. */
static int
signal_leftovers(int sig)
{
	pid_t pids[512];
	int i, n;

	if (getpid() == 1) {
		/* PID 1 reaches its whole namespace, itself excepted. */
		return kill(-1, sig) == 0 ? 1 : 0;
	}
	n = list_children(pids, 512);
	for (i = 0; i < n; i++)
		(void)kill(pids[i], sig);
	return n > 0 ? n : 0;
}

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * Reap whatever has exited and send SIG to what is left, for up to MS
 * milliseconds.  Orphans keep arriving while their parents die, so each
 * round signals again.  Returns true once no child is left.
 */
static bool
end_round(int sig, int ms)
{
	int waited;
	pid_t pid;

	for (waited = 0;; waited += 10) {
		while ((pid = bs_reap_one(NULL)) > 0)
			;
		if (pid == -ECHILD)
			return true;
		if (waited >= ms)
			return false;
		(void)signal_leftovers(sig);
		sleep_ms(10);
	}
}

/*
 * CMD is done (or the parent died): leave no process behind.  Orphans were
 * handed to us (PID 1, or PR_SET_CHILD_SUBREAPER), so everything CMD left
 * running is a child of ours by now or becomes one when its parent dies.
 * They get SIGTERM, a moment to finish, then SIGKILL, and are all reaped.
 * Bounded in time: without /proc to list them (and not PID 1), leftovers
 * cannot be found, and the bridge says so rather than wait forever.
 */
static void
end_descendants(void)
{
	if (end_round(SIGTERM, GRACE_MS) || end_round(SIGKILL, GRACE_MS))
		return;
	log_notice("processes left by CMD could not be ended%s",
	    getpid() != 1 && list_children(NULL, 0) < 0 ? " (no /proc to find them)" : "");
}

static void
child_exec(char **argv, char **envp, const struct rlimit *nofile, pid_t bridge)
{
	sigset_t none;
	int err;

	/*
	 * The bridge gave up its capabilities once its listeners were up;
	 * do it again here, right before exec, so that CMD provably starts
	 * with none in any set and with no_new_privs, whatever happened in
	 * between.
	 */
	err = br_priv_drop(NULL);
	if (err < 0) {
		log_notice_errno(-err, "cannot drop every capability before running %s",
		    argv[0]);
		_exit(EXIT_SETUP);
	}

	/* Undo what the bridge set up for itself. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	(void)setrlimit(RLIMIT_NOFILE, nofile);
	/*
	 * A backstop for the bridge being killed outright: CMD must not
	 * outlive the only way it has to the network.
	 */
	if (bs_child_die_with_parent(bridge, SIGKILL) == -ESRCH) {
		/* The bridge died between fork() and prctl(). */
		_exit(EXIT_SETUP);
	}
	environ = envp;
	execvp(argv[0], argv);
	err = errno;
	log_notice_errno(err, "cannot run %s", argv[0]);
	_exit(err == ENOENT ? 127 : 126);
}

/*
 * Ask the proxy on SOCK for the session info (bridge/session.h) and give
 * CMD's environment ENV what it says: each "env" line as given (replacing
 * the variable CMD would otherwise get: the real key never reaches CMD),
 * and with a CA, a bundle of the roots CMD would have used plus that CA,
 * written to a new file whose path goes into BUNDLE (SIZE bytes; "" when
 * none) and into every variable of br_session_ca_vars.  A proxy that has
 * nothing to say (any status but 200, a close, a timeout, no socket yet)
 * changes nothing, with a notice.  Returns 0, or -1 after saying why the
 * bridge cannot start: a malformed answer, since a sandbox that silently
 * lacks its CA or its placeholders fails in ways nobody can explain.
 */
static int
session_setup(const char *sock, struct br_env *env, char *bundle, size_t size)
{
	struct br_session *s = NULL;
	const char *why = NULL, *name, *value, *ca, *used = NULL;
	char *buf = NULL, roots[PATH_MAX] = "nowhere";
	size_t len = 0, i, n;
	int status = 0, err, rc = -1;

	bundle[0] = '\0';
	err = br_session_fetch(sock, BR_SESSION_TIMEOUT_MS, &buf, &len);
	if (err < 0) {
		log_notice_errno(-err, "no session info from %s; going on without "
		    "placeholders or a session CA", sock);
		rc = 0;
		goto out;
	}
	err = br_session_response(buf, len, &status, &s, &why);
	if (err == -ENOMEM) {
		log_errx("session info: out of memory");
		goto out;
	}
	if (err < 0) {
		log_errx("%s: the proxy's session info is malformed: %s", sock, why);
		goto out;
	}
	if (err == 0) {
		if (status == 0)
			log_notice("%s closed without answering the session request; going on "
			    "without placeholders or a session CA", sock);
		else
			log_notice("%s answers the session request with %d (an older proxy, or "
			    "none for this session); going on without placeholders or a "
			    "session CA", sock, status);
		rc = 0;
		goto out;
	}
	ca = br_session_ca(s);
	if (ca != NULL) {
		/* The roots come from CMD's SSL_CERT_FILE as it was before. */
		err = br_bundle_write(br_env_get(env, "SSL_CERT_FILE"), br_env_get(env, "TMPDIR"),
		    ca, bundle, size, &used);
		if (err < 0) {
			log_err_errno(-err, "cannot write the session's certificate bundle under %s",
			    br_env_get(env, "TMPDIR") != NULL ? br_env_get(env, "TMPDIR") : "/tmp");
			bundle[0] = '\0';
			goto out;
		}
		if (used == NULL)
			log_warnx("no system roots found (SSL_CERT_FILE, "
			    "/etc/ssl/certs/ca-certificates.crt, /etc/pki/tls/certs/ca-bundle.crt, "
			    "/etc/ssl/cert.pem): %s holds the session CA alone", bundle);
		/* USED may be CMD's SSL_CERT_FILE value, which setting the
		 * variable below frees: keep a copy for the message. */
		snprintf(roots, sizeof(roots), "%s", used != NULL ? used : "nowhere");
	}
	n = br_session_nenv(s);
	for (i = 0; i < n; i++) {
		br_session_env(s, i, &name, &value);
		if (br_env_set(env, name, value) < 0) {
			log_errx("session info: out of memory");
			goto out;
		}
		log_info("%s: the proxy's placeholder", name);
	}
	for (i = 0; ca != NULL && br_session_ca_vars[i] != NULL; i++) {
		if (br_env_set(env, br_session_ca_vars[i], bundle) < 0) {
			log_errx("session info: out of memory");
			goto out;
		}
	}
	if (ca != NULL)
		log_info("the session CA is trusted through %s (roots from %s)", bundle, roots);
	rc = 0;
out:
	br_session_free(s);
	free(buf);
	return rc;
}

/*
 * GIT_SSH_COMMAND for CMD: ssh with this very bridge as its ProxyCommand
 * ("postern-bridge connect", connect.h) through the bridge's own
 * listener PROXY, so that git over ssh reaches an allowed host:22 with no
 * nc or socat in the image.  A value passed with --env is the launcher's
 * choice and stays.  A path the two shells (git's, then ssh's) would
 * split or expand is not used: nothing is set then.  Returns 0 or -ENOMEM.
 */
static int
set_git_ssh(struct br_env *env, const char *proxy)
{
	char self[PATH_MAX], *cmd = NULL;
	ssize_t n;
	size_t i;
	int rc;

	if (br_env_get(env, "GIT_SSH_COMMAND") != NULL)
		return 0;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 0;
	self[n] = '\0';
	for (i = 0; i < (size_t)n; i++) {
		char ch = self[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    ch == '/' || ch == '.' || ch == '_' || ch == '-' || ch == '+')) {
			log_notice("GIT_SSH_COMMAND not set: the bridge's path %s needs quoting", self);
			return 0;
		}
	}
	if (asprintf(&cmd, "ssh -o ProxyCommand='%s connect --via %s %%h %%p'", self, proxy) < 0)
		return -ENOMEM;
	rc = br_env_set(env, "GIT_SSH_COMMAND", cmd);
	free(cmd);
	return rc;
}

/* What the command line asks for, checked before anything is changed. */
struct bridge_opts {
	const char *sock;
	const char *token_file;      /* --token-file: a tcp: proxy's token */
	const char *listen_spec[MAX_LISTEN];
	struct sockaddr_storage ss[MAX_LISTEN];
	socklen_t slen[MAX_LISTEN];
	size_t nlisten;
	const char *extra[64];
	size_t nextra;
	struct br_forward fwd[MAX_FORWARD];
	const char *fwd_spec[MAX_FORWARD];
	size_t nfwd;
	bool no_env;
	bool allow_root;
	bool no_session;
	bool no_capture;
	char **cmd;         /* CMD and its arguments, or NULL to relay alone */
};

/*
 * Fills O from the command line.  Returns 0 to run, 1 when there is
 * nothing to run (--help, --version, printed), or -EINVAL after saying
 * what is wrong.
 */
static int
parse_args(int argc, char **argv, struct bridge_opts *o)
{
	static const struct option opts[] = {
		{ "connect", required_argument, NULL, 'c' },
		{ "token-file", required_argument, NULL, 'k' },
		{ "listen", required_argument, NULL, 'l' },
		{ "env", required_argument, NULL, 'e' },
		{ "forward", required_argument, NULL, 'f' },
		{ "no-env", no_argument, NULL, 'n' },
		{ "allow-root", no_argument, NULL, 'R' },
		{ "no-session-info", no_argument, NULL, 'S' },
		{ "no-capture", no_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct br_upstream up;
	char tokwhy[200];
	const char *why;
	size_t i;
	int opt;

	memset(o, 0, sizeof(*o));
	while ((opt = getopt_long(argc, argv, "+c:l:e:f:nhV", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			o->sock = optarg;
			break;
		case 'k':
			o->token_file = optarg;
			break;
		case 'l':
			if (o->nlisten == MAX_LISTEN) {
				log_errx("at most %d --listen", MAX_LISTEN);
				return -EINVAL;
			}
			o->listen_spec[o->nlisten++] = optarg;
			break;
		case 'e':
			if (!bs_env_name_ok(optarg)) {
				log_errx("--env %s: not a variable name (letters, digits, '_')", optarg);
				return -EINVAL;
			}
			if (o->nextra == sizeof(o->extra) / sizeof(o->extra[0])) {
				log_errx("too many --env");
				return -EINVAL;
			}
			o->extra[o->nextra++] = optarg;
			break;
		case 'f':
			if (o->nfwd == MAX_FORWARD) {
				log_notice("at most %d --forward", MAX_FORWARD);
				return -EINVAL;
			}
			if (br_forward_parse(optarg, &o->fwd[o->nfwd], &why) < 0) {
				log_notice("--forward %s: %s", optarg, why);
				return -EINVAL;
			}
			o->fwd_spec[o->nfwd++] = optarg;
			break;
		case 'n':
			o->no_env = true;
			break;
		case 'R':
			o->allow_root = true;
			break;
		case 'S':
			o->no_session = true;
			break;
		case 'T':
			o->no_capture = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			printf("postern-bridge %s\n", PACKAGE_VERSION);
			return 1;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (o->sock == NULL) {
		log_errx("--connect SOCK is required");
		usage(stderr);
		return -EINVAL;
	}
	if (br_upstream_parse(o->sock, &up, &why) < 0) {
		log_errx("--connect %s: %s", o->sock, why);
		return -EINVAL;
	}
	if (o->token_file != NULL && !up.tcp) {
		log_errx("--token-file is for a tcp: proxy (--connect tcp:ADDR:PORT); a UNIX socket "
		    "is the session's credential itself");
		return -EINVAL;
	}
	/* Read once, now, before anything runs that could touch it. */
	if (o->token_file != NULL && br_upstream_token(o->token_file, tokwhy, sizeof(tokwhy)) < 0) {
		log_errx("--token-file %s: %s", o->token_file, tokwhy);
		return -EINVAL;
	}
	o->cmd = optind < argc ? argv + optind : NULL;
	if (o->nlisten == 0) {
		o->listen_spec[o->nlisten++] = "127.0.0.1:" DEFAULT_PORT;
		o->listen_spec[o->nlisten++] = "[::1]:" DEFAULT_PORT;
	}
	for (i = 0; i < o->nlisten; i++) {
		if (br_addr_parse(o->listen_spec[i], &o->ss[i], &o->slen[i], &why) < 0) {
			log_errx("--listen %s: %s", o->listen_spec[i], why);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * Blocks the signals the relay's loop reads and returns a signalfd for
 * them, or a negative errno after saying so.
 */
static int
signals_setup(struct bridge *b)
{
	size_t i;
	int sfd;

	/* Signals are read from a signalfd in the relay's loop, never async. */
	sigemptyset(&b->handled);
	for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(&b->handled, forwarded[i]);
	sigaddset(&b->handled, SIGCHLD);
	sigaddset(&b->handled, SIG_PARENT_DIED);
	/*
	 * Dispositions are left as inherited, for CMD to inherit in turn (a
	 * nohup'ed CMD keeps ignoring SIGHUP).  The bridge still sees signals
	 * it was started ignoring: Linux queues a blocked signal even when
	 * its disposition is SIG_IGN, and signalfd reads the queue.
	 */
	if (sigprocmask(SIG_BLOCK, &b->handled, NULL) < 0) {
		log_err("sigprocmask");
		return -errno;
	}
	/* A peer that went away is an error from splice(2), not a death. */
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &b->handled, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0) {
		log_err("signalfd");
		return -errno;
	}
	/* Orphans below us come to us, as they would to PID 1. */
	if (getpid() != 1)
		(void)prctl(PR_SET_CHILD_SUBREAPER, 1);
	return sfd;
}

/*
 * Brings lo up and binds every --listen.  URL_HOST gets the address the
 * proxy variables name.  Returns 0 or a negative errno after saying so.
 */
static int
listen_all(struct bridge *b, const struct bridge_opts *o, char *url_host, size_t size)
{
	struct sockaddr_storage bound, url_addr;
	bool changed, have_url = false;
	size_t i, up = 0;
	int err;

	memset(&url_addr, 0, sizeof(url_addr));
	err = br_link_up_lo(&changed);
	if (err < 0) {
		log_errx("the loopback interface lo is down and cannot be brought up: %s%s",
		    strerror(-err),
		    err == -EPERM ? " (needs CAP_NET_ADMIN in this network namespace)" : "");
		return err;
	}

	for (i = 0; i < o->nlisten; i++) {
		err = br_relay_listen(b->relay, (struct sockaddr *)&o->ss[i], o->slen[i], &bound);
		/*
		 * A namespace without IPv6 (or with it disabled) has no ::1:
		 * skip that listener quietly rather than dying the way socat
		 * does.
		 */
		if (o->ss[i].ss_family == AF_INET6 &&
		    (err == -EADDRNOTAVAIL || err == -EAFNOSUPPORT))
			continue;
		if (err < 0) {
			log_err_errno(-err, "listen on %s", o->listen_spec[i]);
			return err;
		}
		up++;
		/* The proxy URL names the first IPv4 listener, else the first. */
		if (!have_url || (url_addr.ss_family != AF_INET && bound.ss_family == AF_INET)) {
			url_addr = bound;
			have_url = true;
		}
	}
	if (up == 0 || br_addr_format((struct sockaddr *)&url_addr, url_host, size) < 0) {
		log_errx("no address to listen on");
		return -EADDRNOTAVAIL;
	}
	return 0;
}

/*
 * Each --forward on both loopback addresses, where NO_PROXY sends a
 * client straight (the address it would use outside, unchanged): its
 * connections reach the host only as CONNECTs the proxy decides.
 * Returns 0 or a negative errno after saying so.
 */
static int
forward_all(struct bridge *b, const struct bridge_opts *o)
{
	size_t i;
	int err;

	for (i = 0; i < o->nfwd; i++) {
		struct sockaddr_in sin;
		struct sockaddr_in6 sin6;

		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_port = htons(o->fwd[i].port);
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		err = br_relay_forward(b->relay, (struct sockaddr *)&sin, sizeof(sin),
		    o->fwd[i].target, NULL);
		if (err < 0) {
			log_notice_errno(-err, "--forward %s: listen on 127.0.0.1:%u",
			    o->fwd_spec[i], o->fwd[i].port);
			return err;
		}
		memset(&sin6, 0, sizeof(sin6));
		sin6.sin6_family = AF_INET6;
		sin6.sin6_port = htons(o->fwd[i].port);
		sin6.sin6_addr = in6addr_loopback;
		err = br_relay_forward(b->relay, (struct sockaddr *)&sin6, sizeof(sin6),
		    o->fwd[i].target, NULL);
		/* No IPv6 in the namespace: no ::1 to listen on, as above. */
		if (err < 0 && err != -EADDRNOTAVAIL && err != -EAFNOSUPPORT) {
			log_notice_errno(-err, "--forward %s: listen on [::1]:%u",
			    o->fwd_spec[i], o->fwd[i].port);
			return err;
		}
	}
	return 0;
}

/*
 * Transparent capture: the DNS stub on 127.0.0.1:53 and the synthetic
 * range made local.  postern-sidecar run readied the namespace before it
 * dropped root (our own try fails there, with EPERM); a launcher that
 * gave us no capability and did not gets a bridge without capture, as
 * before, and one line saying so.  Sets *DNS (NULL without capture);
 * returns 0 or a negative errno after saying so.
 */
static int
capture_start(struct bridge *b, const char *sock, struct br_dnsstub **dns)
{
	int cerr = br_link_capture(), derr;

	*dns = br_dnsstub_new(b->relay, sock);
	derr = *dns == NULL ? errno : 0;
	if (derr == EACCES || derr == EPERM || derr == EADDRNOTAVAIL || derr == EADDRINUSE) {
		/* Said only to a sandbox set up for capture, or one
		 * whose network stack has no local routes (gVisor's):
		 * the recipes without it (--cap-drop ALL) stay quiet. */
		if (resolv_names_stub() || cerr == -EOPNOTSUPP)
			log_notice("transparent capture is off: cannot %s (%s)%s",
			    derr == EADDRNOTAVAIL ? "make 198.18.0.0/15 local" :
			    "listen on 127.0.0.1:53", strerror(derr), cerr == -EPERM ?
			    "; the bridge needs CAP_NET_ADMIN over its network namespace "
			    "for it (bwrap: --uid 0 --gid 0 --cap-add CAP_NET_ADMIN, see "
			    "postern-bridge(8), EXAMPLES), or pass --no-capture" : cerr == -EOPNOTSUPP ?
			    "; this network stack cannot add routes (gVisor's cannot): "
			    "the proxy variables still work" : "");
	} else if (*dns == NULL) {
		log_err_errno(derr, "DNS stub");
		return -derr;
	}
	return 0;
}

/*
 * The root of a user namespace is root there to the kernel's uid checks
 * even without a capability.  A bridge started as that root (bwrap --uid
 * 0, so that its CAP_NET_ADMIN counts in the network namespace; unshare
 * -r) moves into a user namespace of its own, as the uid it has outside,
 * and CMD with it.  Then every capability goes.  Returns 0 or a negative
 * errno after saying so.
 */
static int
privileges_drop(const struct bridge_opts *o)
{
	bool moved = false, mapped = false;
	int err;

	/* Nothing below needs the namespace it leaves. */
	err = o->cmd == NULL ? 0 : br_priv_unroot(&moved, &mapped);
	if (err < 0 && !moved) {
		log_notice_errno(-err, "%s runs as uid 0 of this user namespace: "
		    "cannot make it a user namespace of its own", o->cmd[0]);
	} else if (err < 0) {
		log_err_errno(-err, "cannot set up a user namespace for %s", o->cmd[0]);
		return err;
	} else if (moved && !mapped) {
		log_notice("%s runs as the overflow uid: mapping it to its uid outside "
		    "needs CAP_SETFCAP in this namespace (bwrap --cap-add CAP_SETFCAP)",
		    o->cmd[0]);
	}
	/*
	 * Nothing below needs a capability: lo is up, the listeners are
	 * bound, and SOCK is reached with the bridge's own uid and groups,
	 * as CMD would reach it.  A bridge that keeps nothing is nothing
	 * for CMD to take over.
	 */
	err = br_priv_drop(NULL);
	if (err < 0) {
		log_err_errno(-err, "cannot drop every capability");
		return err;
	}
	return 0;
}

/*
 * Builds CMD's environment from the fixed list and --env, then wipes our
 * own, so that nothing else we were given (an API key, a token) reaches
 * CMD, not even through /proc/<our pid>/environ.  BUNDLE gets the path of
 * the session's certificate bundle, if one is written.  Returns the
 * environment, or NULL after saying why.
 */
static struct br_env *
env_setup(const struct bridge_opts *o, const char *url_host, char *bundle, size_t size)
{
	struct br_env *env;

	env = br_env_new(environ, o->extra, o->nextra, o->no_env ? NULL : url_host);
	if (env == NULL) {
		log_err("environment");
		return NULL;
	}
	if (!o->no_env && set_git_ssh(env, url_host) < 0) {
		log_err("environment");
		br_env_free(env);
		return NULL;
	}
	/*
	 * Before CMD runs, what the proxy says of this session: the
	 * placeholders CMD gets instead of the real secrets, and the CA it
	 * must trust for the hosts the proxy terminates.  Only for CMD: a
	 * relay alone has nobody to export them to.
	 */
	if (o->cmd != NULL && !o->no_session &&
	    session_setup(o->sock, env, bundle, size) < 0) {
		br_env_free(env);
		return NULL;
	}
	br_env_wipe(environ);
	environ = br_env_vector(env);
	/* Nor through ptrace(2) or /proc/<pid>/mem by a same-uid CMD. */
	(void)prctl(PR_SET_DUMPABLE, 0);
	return env;
}

/*
 * Starts CMD (if any) and relays until the end; sets B's exit code.
 * Returns 0 or a negative errno after saying so, when it could not start.
 */
static int
relay_run(struct bridge *b, const struct bridge_opts *o, struct br_env *env,
    const struct rlimit *nofile)
{
	int err;

	if (o->cmd != NULL) {
		pid_t self = getpid();

		/* The listeners are up: CMD's first request cannot race us. */
		b->child = fork();
		if (b->child < 0) {
			log_err("fork");
			return -errno;
		}
		if (b->child == 0)
			child_exec(o->cmd, br_env_vector(env), nofile, self);
		/* CMD has its copy; we need none of it, so a key given with
		 * --env stays in CMD alone. */
		br_env_wipe(br_env_vector(env));
	}

	/* From here on a failure is CMD's or the relay's, not the start's. */
	br_started = true;
	log_starting(0);
	err = br_relay_run(b->relay);
	if (err < 0)
		log_notice_errno(-err, "epoll_wait");

	if (b->relay_only && !b->parent_died) {
		b->exit_code = err < 0 ? 1 : 0;
	} else if (b->child_done) {
		b->exit_code = bs_exit_code(b->status);
	} else {
		/* The parent died, or the loop failed, with CMD still running. */
		b->exit_code = 128 + SIGTERM;
	}
	/* Stop relaying before the leftovers are told to end. */
	br_relay_free(b->relay);
	b->relay = NULL;
	if (!b->relay_only)
		end_descendants();
	return 0;
}

static int
bridge_main(int argc, char **argv)
{
	struct bridge_opts o;
	struct bridge b;
	struct rlimit nofile, raised;
	char url_host[BR_ADDR_TEXT_MAX];
	struct br_env *env = NULL;
	struct br_dnsstub *dns = NULL;
	char bundle[PATH_MAX] = "";
	char why_root[160];
	int err, sfd = -1;

	memset(&b, 0, sizeof(b));
	b.exit_code = EXIT_SETUP;

	/*
	 * Die with the parent, and notice it at once if it already died
	 * before the request took effect.
	 */
	if (bs_child_die_with_parent(getppid(), SIG_PARENT_DIED) < 0)
		return EXIT_SETUP;

	err = parse_args(argc, argv, &o);
	if (err != 0)
		return err > 0 ? 0 : EXIT_SETUP;
	b.relay_only = o.cmd == NULL;

	/*
	 * Kernel uid or gid 0 needs no capability to own the host: every
	 * root-owned file, config and socket (another session's included) is
	 * its own.  Dropping capabilities does not change that; only another
	 * identity does, and that is the launcher's to give.
	 */
	if (!b.relay_only && !o.allow_root && br_priv_kernel_root(why_root, sizeof(why_root))) {
		log_errx("refusing to run %s: %s; the host's uid and gid 0 "
		    "own every root-owned file and socket even without capabilities: start the "
		    "bridge as an ordinary uid (e.g. setpriv --reuid=UID --regid=GID "
		    "--clear-groups ...) or in a user namespace that maps it to one, or pass "
		    "--allow-root to run it as root anyway", o.cmd[0], why_root);
		return EXIT_SETUP;
	}

	sfd = signals_setup(&b);
	if (sfd < 0)
		goto out;

	/*
	 * Every connection holds six descriptors (two sockets, two pipes):
	 * take the hard limit.  CMD gets the original limit back.
	 */
	if (getrlimit(RLIMIT_NOFILE, &nofile) < 0) {
		log_err("getrlimit");
		goto out;
	}
	raised = nofile;
	raised.rlim_cur = raised.rlim_max;
	(void)setrlimit(RLIMIT_NOFILE, &raised);

	b.relay = br_relay_new(o.sock);
	if (b.relay == NULL) {
		log_err("--connect %s", o.sock);
		goto out;
	}
	if (listen_all(&b, &o, url_host, sizeof(url_host)) < 0 ||
	    forward_all(&b, &o) < 0 ||
	    (!o.no_capture && capture_start(&b, o.sock, &dns) < 0) ||
	    privileges_drop(&o) < 0)
		goto out;
	env = env_setup(&o, url_host, bundle, sizeof(bundle));
	if (env == NULL)
		goto out;

	err = br_relay_watch(b.relay, sfd, on_signal, &b);
	if (err < 0) {
		log_err_errno(-err, "epoll");
		goto out;
	}
	sfd = -1;
	(void)relay_run(&b, &o, env, &nofile);
out:
	if (sfd >= 0)
		close(sfd);
	br_relay_free(b.relay);
	br_dnsstub_free(dns);
	br_env_free(env);
	/* CMD and what it left are gone: nobody reads the bundle any more. */
	br_bundle_remove(bundle);
	return b.exit_code;
}

/* A start that fails says so in its last line, in the words of the proxy
 * and the sidecar: "postern-bridge: not starting". */
int
main(int argc, char **argv)
{
	int rc;

	/* Until the bridge serves, what stops it is an "error: ". */
	log_init("postern-bridge", 0);
	/* ssh's ProxyCommand (connect.h): no relay, no CMD, nothing to set up. */
	if (argc > 1 && strcmp(argv[1], "connect") == 0)
		return br_connect_main(argc - 1, argv + 1);
	log_starting(1);
	rc = bridge_main(argc, argv);

	if (!br_started && rc == EXIT_SETUP)
		log_not_starting();
	return rc;
}
