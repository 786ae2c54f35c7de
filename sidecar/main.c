/*
 * sidecar/main.c: postern-sidecar, the owner of a network namespace.
 *
 *   postern-sidecar [OPTIONS]                 container mode: lock, prove, serve
 *   postern-sidecar lockdown-check [OPTIONS]  lock and prove, then exit
 *   postern-sidecar unlock                    remove the lock-down rules
 *   postern-sidecar run [OPTIONS] [--] CMD... one command in a fresh netns
 *   postern-sidecar ask [--pid PID] [--list]  answer a run --ask's questions
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "base/cursor.h"
#include "base/super.h"
#include "bridge/forward.h"
#include "bridge/link.h"
#include "conf/config.h"
#include "proxy/core/mem.h"
#include "sidecar/ask.h"
#include "sidecar/capture.h"
#include "sidecar/engine.h"
#include "sidecar/escape.h"
#include "sidecar/log.h"
#include "sidecar/nft.h"
#include "sidecar/pid1.h"
#include "sidecar/probe.h"
#include "sidecar/rules.h"
#include "sidecar/run.h"
#include "sidecar/srtsettings.h"

/* The distroless "nonroot" uid: numeric, because a scratch image has no
 * /etc/passwd to look a name up in. */
#define SC_DEFAULT_UID 65532u
#define SC_DEFAULT_TCP "tcp:127.0.0.1:3128"
#define SC_DEFAULT_UNIX "unix:/run/postern/proxy.sock"
#define SC_MAX_LIST 64

enum sc_mode { SC_MODE_SERVE, SC_MODE_CHECK, SC_MODE_UNLOCK, SC_MODE_RUN };

struct sc_opts {
	enum sc_mode mode;
	const char *config;
	const char *allow[SC_MAX_LIST];
	size_t n_allow;
	const char *listen[SC_MAX_LIST];
	size_t n_listen;
	const char *probe_addr[SC_MAX_LIST];
	size_t n_probe_addr;
	uid_t uid;
	int has_uid;          /* --user given */
	uid_t probe_uid;
	int has_probe_uid;
	const char *bridge;
	const char *connect;  /* run: --connect tcp:ADDR:PORT */
	const char *token_file; /* run: --token-file */
	const char *session_name;
	const char *session;  /* run: --session */
	int capture;          /* serve: --capture */
	int report;           /* run: --report */
	int learn;            /* run: --learn[=FILE] */
	const char *learn_file;
	int ask;              /* run: --ask */
	int notices;          /* run: --notices (run.h's SC_NOTICES_*) */
	int run_check;        /* run: --check */
	const char *settings; /* run: --settings FILE (srt's or Claude Code's) */
	int print_config;     /* run: --print-config */
	const char *home;     /* run: --home */
	uid_t run_uid;        /* run: --uid */
	int has_run_uid;
	const char *sockets[SC_MAX_LIST];   /* run: --socket */
	size_t n_sockets;
	const char *binds[SC_MAX_LIST];     /* run: --bind */
	size_t n_binds;
	const char *forwards[SC_MAX_LIST];  /* run: --forward */
	size_t n_forwards;
	const char *env[SC_MAX_LIST];       /* run: --env */
	size_t n_env;
	const char *secrets[SC_MAX_LIST];   /* run: --secret */
	size_t n_secrets;
	char *const *argv;
};

static void
sc_usage(FILE *f)
{
	fprintf(f,
	    "usage: postern-sidecar [-c FILE] [--allow PATTERN]... [--user UID]\n"
	    "                       [--listen ADDR]... [--probe-uid UID] [--probe-addr ADDR]...\n"
	    "                       [--capture]\n"
	    "       postern-sidecar lockdown-check [-c FILE] [--user UID] [--probe-uid UID]\n"
	    "                       [--probe-addr ADDR]...\n"
	    "       postern-sidecar unlock\n"
	    "       postern-sidecar run --check [-c FILE [--session NAME]] [--allow PATTERN]...\n"
	    "       postern-sidecar run --settings FILE --print-config\n"
	    "       postern-sidecar run [-c FILE [--session NAME] | --settings FILE]\n"
	    "                           [--allow PATTERN]... [--report]\n"
	    "                           [--learn[=FILE]]\n"
	    "                           [--ask] [--notices auto|terminal|file]\n"
	    "                           [--session-name NAME]\n"
	    "                           [--uid UID] [--home DIR] [--bind DIR]... [--socket PATH]...\n"
	    "                           [--env NAME]...\n"
	    "                           [--secret NAME]...\n"
	    "                           [--forward PORT[:HOST:HPORT]]... [--bridge PATH]\n"
	    "                           [--] CMD [ARGS...]\n"
	    "       postern-sidecar ask [--pid PID] [--list]\n"
	    "See postern-sidecar(8).\n");
}

/* "run --help": run's own options, not the whole program's. */
static void
sc_run_usage(FILE *f)
{
	fprintf(f,
	    "usage: postern-sidecar run --check [-c FILE [--session NAME]] [--allow PATTERN]...\n"
	    "       postern-sidecar run --settings FILE --print-config\n"
	    "       postern-sidecar run [-c FILE | --settings FILE] [--allow PATTERN]...\n"
	    "                           [--session-name NAME] [--report] [--learn[=FILE]]\n"
	    "                           [--notices WHERE]\n"
	    "                           [--uid UID] [--socket PATH]... [--bridge PATH]\n"
	    "                           [--connect tcp:ADDR:PORT [--token-file FILE]]\n"
	    "                           [--] CMD [ARGS...]\n"
	    "Runs CMD sealed: its only way out is a proxy started for it, which\n"
	    "allows what -c FILE or --settings FILE (default: the built-in config)\n"
	    "and each --allow allow.\n"
	    "  -c FILE              the proxy config (postern.ini(5))\n"
	    "  --check              judge -c FILE as run would load it, summarise it,\n"
	    "                       and start nothing (exit 0, or 2 with FILE:LINE errors)\n"
	    "  --allow PATTERN      an allow_hosts item on top of it (repeatable)\n"
	    "  --settings FILE      the policy is the network part of an srt settings\n"
	    "                       file or a Claude Code settings.json, not -c FILE\n"
	    "  --print-config       print the postern.ini --settings FILE stands for\n"
	    "  --session-name NAME  the session's name in refusals and logs\n"
	    "  --report             report mode: allow what the allowlist would refuse,\n"
	    "                       telling each as \"would refuse\" (deny rules, private\n"
	    "                       addresses, SNI and secrets are still enforced)\n"
	    "  --learn[=FILE]       report mode, and when CMD exits an allow_hosts block\n"
	    "                       of what would have been refused, on stderr or in FILE\n"
	    "  --ask                ask mode: hold what the allowlist would refuse until\n"
	    "                       it is answered (postern-sidecar ask in another\n"
	    "                       terminal, or a prompt here when stdin is not one)\n"
	    "  --notices WHERE      where refusals are told while CMD runs: terminal,\n"
	    "                       file (a log named at exit), or auto (default: the\n"
	    "                       file when CMD holds this terminal)\n"
	    "  --uid UID            (root) the uid CMD runs as (default SUDO_UID, else 65534)\n"
	    "  --home DIR           CMD's HOME (default, as root: the uid's own home,\n"
	    "                       else a fresh empty one)\n"
	    "  --bind DIR           show CMD this directory read-write, also under /tmp\n"
	    "                       (its host sockets stay covered; repeatable)\n"
	    "  --socket PATH        let CMD reach this host UNIX socket (repeatable)\n"
	    "  --env NAME           CMD also gets this variable (repeatable)\n"
	    "  --secret NAME        CMD gets a placeholder in NAME; the proxy puts the\n"
	    "                       real value (from this environment) on requests to\n"
	    "                       the secret's hosts only (repeatable)\n"
	    "  --bridge PATH        the postern-bridge binary\n"
	    "  --connect tcp:ADDR:PORT  no engine: a central proxy's auth=token listener\n"
	    "                       decides, reached by a relay outside the jail\n"
	    "  --token-file FILE    the session's token for it, read once at start\n"
	    "  -h, --help           this text\n"
	    "See postern-sidecar(8).\n");
}

/* Decimal uid: digits only, no sign, no leading zero, below (uid_t)-1,
 * which the kernel reserves as "no uid". */
static int
sc_parse_uid(const char *s, uid_t *out)
{
	uint64_t v;
	int rc;

	rc = bs_num_parse(s, strlen(s), UINT32_MAX - 1, 0, &v);
	if (rc < 0)
		return rc;
	*out = (uid_t)v;
	return 0;
}

/* A [secret] name as postern.ini(5) takes it: letters, digits, '-', '_',
 * '.', at most 64. */
static int
sc_secret_name_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 64)
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '_' || s[i] == '.'))
			return 0;
	return 1;
}

/* A variable name: a letter or '_', then letters, digits and '_', fewer
 * than 256 in all (the bridge's own limit). */
static int
sc_env_name_ok(const char *s)
{
	size_t i;

	if ((s[0] < 'A' || s[0] > 'Z') && (s[0] < 'a' || s[0] > 'z') && s[0] != '_')
		return 0;
	for (i = 1; s[i] != '\0'; i++)
		if (i >= 255 || ((s[i] < 'A' || s[i] > 'Z') && (s[i] < 'a' || s[i] > 'z') &&
		    (s[i] < '0' || s[i] > '9') && s[i] != '_'))
			return 0;
	return 1;
}

static int
sc_push(const char **list, size_t *n, const char *v, const char *what)
{
	if (*n >= SC_MAX_LIST) {
		sc_logx("too many %s options (at most %d)", what, SC_MAX_LIST);
		return -E2BIG;
	}
	list[(*n)++] = v;
	return 0;
}

/* The path of the first "unix:/PATH" listener, which capture relays to, or
 * NULL (an abstract name or none: the relay needs a path). */
static const char *
sc_capture_sock(const struct sc_opts *o)
{
	size_t i;

	for (i = 0; i < o->n_listen; i++)
		if (strncmp(o->listen[i], "unix:/", 6) == 0)
			return o->listen[i] + 5;
	return NULL;
}

/* The long options with no letter. */
enum {
	O_ALLOW = 256, O_LISTEN, O_PROBE_UID, O_PROBE_ADDR, O_BRIDGE, O_SESSION, O_VERSION,
	O_RUN_UID, O_SOCKET, O_FORWARD, O_ENV, O_SERVE_SESSION, O_SECRET,
	O_CAPTURE, O_REPORT, O_LEARN, O_ASK, O_RUN_CHECK, O_HOME, O_BIND,
	O_NOTICES, O_SETTINGS, O_PRINT_CONFIG, O_CONNECT, O_TOKEN_FILE
};

/*
 * One option only "run" takes, C from getopt_long and its argument in
 * optarg.  Returns 0, -EINVAL after saying what is wrong, or 1 when C is
 * not one of them.
 */
static int
sc_parse_run_opt(struct sc_opts *o, int c)
{
	switch (c) {
	case O_SESSION:
		if (o->mode != SC_MODE_RUN) {
			sc_logx("--session-name only applies to run");
			return -EINVAL;
		}
		o->session_name = optarg;
		break;
	case O_REPORT:
		if (o->mode != SC_MODE_RUN) {
			sc_logx("--report only applies to run (a config file says mode = report)");
			return -EINVAL;
		}
		o->report = 1;
		break;
	case O_LEARN:
		if (o->mode != SC_MODE_RUN) {
			sc_logx("--learn only applies to run");
			return -EINVAL;
		}
		if (optarg != NULL && optarg[0] == '\0') {
			sc_logx("--learn=FILE: the file name is empty");
			return -EINVAL;
		}
		/* Learning is report mode with a summary at the end. */
		o->report = 1;
		o->learn = 1;
		o->learn_file = optarg;
		break;
	case O_ASK:
		if (o->mode != SC_MODE_RUN) {
			sc_logx("--ask only applies to run (a config file says mode = ask)");
			return -EINVAL;
		}
		o->ask = 1;
		break;
	case O_NOTICES:
		if (o->mode != SC_MODE_RUN) {
			sc_logx("--notices only applies to run");
			return -EINVAL;
		}
		if (strcmp(optarg, "auto") == 0)
			o->notices = SC_NOTICES_AUTO;
		else if (strcmp(optarg, "terminal") == 0)
			o->notices = SC_NOTICES_TERMINAL;
		else if (strcmp(optarg, "file") == 0)
			o->notices = SC_NOTICES_FILE;
		else {
			sc_logx("--notices %s: say auto, terminal or file", optarg);
			return -EINVAL;
		}
		break;
	case O_SERVE_SESSION:
		if (o->mode != SC_MODE_RUN) {
			sc_logx("--session only applies to run");
			return -EINVAL;
		}
		o->session = optarg;
		break;
	case O_RUN_UID:
		if (o->mode != SC_MODE_RUN) {
			sc_logx("--uid only applies to run (the proxy's uid is --user)");
			return -EINVAL;
		}
		if (sc_parse_uid(optarg, &o->run_uid) < 0 || o->run_uid == 0) {
			sc_logx("--uid: '%s' is not a numeric uid other than 0", optarg);
			return -EINVAL;
		}
		o->has_run_uid = 1;
		break;
	case O_BIND:
		if (o->mode != SC_MODE_RUN) {
			sc_logx("--bind only applies to run");
			return -EINVAL;
		}
		if (optarg[0] != '/') {
			sc_logx("--bind: '%s' is not an absolute path", optarg);
			return -EINVAL;
		}
		if (sc_push(o->binds, &o->n_binds, optarg, "--bind") < 0)
			return -EINVAL;
		break;
	case O_SOCKET:
		if (o->mode != SC_MODE_RUN) {
			sc_logx("--socket only applies to run");
			return -EINVAL;
		}
		if (optarg[0] != '/') {
			sc_logx("--socket: '%s' is not an absolute path", optarg);
			return -EINVAL;
		}
		if (sc_push(o->sockets, &o->n_sockets, optarg, "--socket") < 0)
			return -EINVAL;
		break;
	case O_FORWARD: {
		struct br_forward f;
		const char *why;

		if (o->mode != SC_MODE_RUN) {
			sc_logx("--forward only applies to run");
			return -EINVAL;
		}
		/* The bridge checks it too, but only once all is set up. */
		if (br_forward_parse(optarg, &f, &why) < 0) {
			sc_logx("--forward: '%s': %s", optarg, why);
			return -EINVAL;
		}
		if (sc_push(o->forwards, &o->n_forwards, optarg, "--forward") < 0)
			return -EINVAL;
		break;
	}
	case O_ENV:
		if (o->mode != SC_MODE_RUN) {
			sc_logx("--env only applies to run");
			return -EINVAL;
		}
		/* A name only: a value given here would show in every
		 * process list (NAME=VALUE is refused as a name). */
		if (!sc_env_name_ok(optarg)) {
			sc_logx("--env: '%s' is not a variable name (letters, digits, '_'; "
			    "the value comes from this environment, never the command line)",
			    optarg);
			return -EINVAL;
		}
		if (sc_push(o->env, &o->n_env, optarg, "--env") < 0)
			return -EINVAL;
		break;
	case O_SECRET:
		if (o->mode != SC_MODE_RUN) {
			sc_logx("--secret only applies to run");
			return -EINVAL;
		}
		/* A name (the variable, or a [secret]'s name), never a
		 * value: a value here would show in every process list. */
		if (!sc_env_name_ok(optarg) && !sc_secret_name_ok(optarg)) {
			sc_logx("--secret: '%s' is not a variable or secret name (the value "
			    "comes from this environment, never the command line)", optarg);
			return -EINVAL;
		}
		if (sc_push(o->secrets, &o->n_secrets, optarg, "--secret") < 0)
			return -EINVAL;
		break;
	case O_RUN_CHECK:
		if (o->mode != SC_MODE_RUN) {
			sc_logx("--check only applies to run (the container mode's is "
			    "lockdown-check)");
			return -EINVAL;
		}
		o->run_check = 1;
		break;
	case O_SETTINGS:
		if (o->mode != SC_MODE_RUN) {
			sc_logx("--settings only applies to run");
			return -EINVAL;
		}
		if (o->settings != NULL) {
			sc_logx("--settings given twice");
			return -EINVAL;
		}
		o->settings = optarg;
		break;
	case O_PRINT_CONFIG:
		if (o->mode != SC_MODE_RUN) {
			sc_logx("--print-config only applies to run --settings FILE");
			return -EINVAL;
		}
		o->print_config = 1;
		break;
	case O_HOME:
		if (o->mode != SC_MODE_RUN) {
			sc_logx("--home only applies to run");
			return -EINVAL;
		}
		if (optarg[0] != '/') {
			sc_logx("--home: '%s' is not an absolute path", optarg);
			return -EINVAL;
		}
		o->home = optarg;
		break;
	default:
		return 1;
	}
	return 0;
}

/* What "run" needs once every option is read.  Returns 0 or -EINVAL after
 * saying what is wrong. */
static int
sc_check_run(struct sc_opts *o, int argc, char **argv)
{
	if (o->print_config) {
		if (o->settings == NULL || o->config != NULL || o->run_check ||
		    optind < argc) {
			sc_logx("run --print-config: only with --settings FILE, and no -c, "
			    "--check or command");
			return -EINVAL;
		}
		return 0;
	}
	/* --learn=FILE names the file to add to and run: a postern.ini. */
	if (o->settings != NULL && o->learn_file != NULL) {
		sc_logx("run: --learn=FILE and --settings exclude each other (use --learn, "
		    "or run -c with the output of --print-config)");
		return -EINVAL;
	}
	/* One policy file: the settings stand for a whole postern.ini. */
	if (o->settings != NULL && o->config != NULL) {
		sc_logx("run: -c and --settings exclude each other (merge the output of "
		    "run --settings %s --print-config into %s)", o->settings, o->config);
		return -EINVAL;
	}
	if (o->run_check && optind < argc) {
		sc_logx("run --check: unexpected command '%s' (--check starts nothing)",
		    argv[optind]);
		return -EINVAL;
	}
	if (!o->run_check && optind >= argc) {
		sc_logx("run: no command given");
		sc_usage(stderr);
		return -EINVAL;
	}
	/* --session picks a session of the file; --session-name
	 * names the default one, which it does not serve. */
	if (o->session != NULL && o->config == NULL) {
		sc_logx("run: --session %s needs -c FILE, whose [session %s] it serves",
		    o->session, o->session);
		return -EINVAL;
	}
	if (o->session != NULL && o->session_name != NULL) {
		sc_logx("run: --session and --session-name exclude each other (the "
		    "session served is named by --session)");
		return -EINVAL;
	}
	/* Letting through and holding are two answers to one
	 * question; the proxy would hold, but say so here. */
	if (o->report && o->ask) {
		sc_logx("run: %s and --ask exclude each other", o->learn ? "--learn" : "--report");
		return -EINVAL;
	}
	o->argv = argv + optind;
	return 0;
}

/* What serving, lockdown-check and unlock need once every option is read.
 * Returns 0 or -EINVAL after saying what is wrong. */
static int
sc_check_other(struct sc_opts *o, int argc, char **argv)
{
	if (optind < argc) {
		sc_logx("unexpected argument '%s'", argv[optind]);
		sc_usage(stderr);
		return -EINVAL;
	}
	if ((o->mode == SC_MODE_CHECK && (o->n_allow || o->n_listen)) ||
	    (o->mode == SC_MODE_UNLOCK && (o->config || o->n_allow || o->n_listen))) {
		sc_logx("--allow and --listen only apply when serving, -c also to lockdown-check");
		return -EINVAL;
	}
	/* lockdown-check gets them too, only so that -c is judged as served. */
	if ((o->mode == SC_MODE_SERVE || o->mode == SC_MODE_CHECK) && o->n_listen == 0) {
		o->listen[o->n_listen++] = SC_DEFAULT_TCP;
		o->listen[o->n_listen++] = SC_DEFAULT_UNIX;
	}
	if (o->capture && sc_capture_sock(o) == NULL) {
		sc_logx("--capture relays to the engine's UNIX listener: give a --listen "
		    "unix:/PATH (the default listeners have one)");
		return -EINVAL;
	}
	return 0;
}

/*
 * Fills O from the command line: the mode (serve, run, lockdown-check,
 * unlock), then its options.  Returns 0 or -EINVAL after saying what is
 * wrong; --help and --version print and exit.
 */
static int
sc_parse_args(int argc, char **argv, struct sc_opts *o)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "allow", required_argument, NULL, O_ALLOW },
		{ "user", required_argument, NULL, 'u' },
		{ "listen", required_argument, NULL, O_LISTEN },
		{ "probe-uid", required_argument, NULL, O_PROBE_UID },
		{ "probe-addr", required_argument, NULL, O_PROBE_ADDR },
		{ "bridge", required_argument, NULL, O_BRIDGE },
		{ "connect", required_argument, NULL, O_CONNECT },
		{ "token-file", required_argument, NULL, O_TOKEN_FILE },
		{ "session-name", required_argument, NULL, O_SESSION },
		{ "session", required_argument, NULL, O_SERVE_SESSION },
		{ "uid", required_argument, NULL, O_RUN_UID },
		{ "socket", required_argument, NULL, O_SOCKET },
		{ "forward", required_argument, NULL, O_FORWARD },
		{ "env", required_argument, NULL, O_ENV },
		{ "secret", required_argument, NULL, O_SECRET },
		{ "capture", no_argument, NULL, O_CAPTURE },
		{ "report", no_argument, NULL, O_REPORT },
		{ "learn", optional_argument, NULL, O_LEARN },
		{ "ask", no_argument, NULL, O_ASK },
		{ "notices", required_argument, NULL, O_NOTICES },
		{ "check", no_argument, NULL, O_RUN_CHECK },
		{ "settings", required_argument, NULL, O_SETTINGS },
		{ "print-config", no_argument, NULL, O_PRINT_CONFIG },
		{ "home", required_argument, NULL, O_HOME },
		{ "bind", required_argument, NULL, O_BIND },
		{ "version", no_argument, NULL, O_VERSION },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc, first = 1;

	memset(o, 0, sizeof(*o));
	o->uid = SC_DEFAULT_UID;
	if (argc > 1 && strcmp(argv[1], "run") == 0)
		o->mode = SC_MODE_RUN;
	else if (argc > 1 && strcmp(argv[1], "lockdown-check") == 0)
		o->mode = SC_MODE_CHECK;
	else if (argc > 1 && strcmp(argv[1], "unlock") == 0)
		o->mode = SC_MODE_UNLOCK;
	if (o->mode != SC_MODE_SERVE) {
		first = 2;
	}
	optind = first;
	/* "+": stop at CMD, whose own options are not ours. */
	while ((c = getopt_long(argc, argv, "+c:u:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->config = optarg;
			break;
		case O_ALLOW:
			if (sc_push(o->allow, &o->n_allow, optarg, "--allow") < 0)
				return -EINVAL;
			break;
		case 'u':
			if (sc_parse_uid(optarg, &o->uid) < 0 || o->uid == 0) {
				sc_logx("--user: '%s' is not a numeric uid other than 0", optarg);
				return -EINVAL;
			}
			o->has_uid = 1;
			break;
		case O_LISTEN:
			if (sc_push(o->listen, &o->n_listen, optarg, "--listen") < 0)
				return -EINVAL;
			break;
		case O_PROBE_UID:
			if (sc_parse_uid(optarg, &o->probe_uid) < 0) {
				sc_logx("--probe-uid: '%s' is not a numeric uid", optarg);
				return -EINVAL;
			}
			o->has_probe_uid = 1;
			break;
		case O_PROBE_ADDR:
			if (!sc_probe_addr_valid(optarg)) {
				sc_logx("--probe-addr: '%s' is not a numeric IPv4 or IPv6 address",
				    optarg);
				return -EINVAL;
			}
			if (sc_push(o->probe_addr, &o->n_probe_addr, optarg, "--probe-addr") < 0)
				return -EINVAL;
			break;
		case O_BRIDGE:
			o->bridge = optarg;
			break;
		case O_CONNECT:
		case O_TOKEN_FILE:
			if (o->mode != SC_MODE_RUN) {
				sc_logx("--connect and --token-file only apply to run");
				return -EINVAL;
			}
			*(c == O_CONNECT ? &o->connect : &o->token_file) = optarg;
			break;
		case O_CAPTURE:
			if (o->mode != SC_MODE_SERVE) {
				sc_logx("--capture only applies to the container mode (run "
				    "captures by default)");
				return -EINVAL;
			}
			o->capture = 1;
			break;
		case O_VERSION:
		case 'V':
			printf("postern-sidecar %s\n", PACKAGE_VERSION);
			exit(0);
		case 'h':
			if (o->mode == SC_MODE_RUN)
				sc_run_usage(stdout);
			else
				sc_usage(stdout);
			exit(0);
		default:
			rc = sc_parse_run_opt(o, c);
			if (rc < 0)
				return rc;
			if (rc > 0) {
				sc_usage(stderr);
				return -EINVAL;
			}
			break;
		}
	}
	if (o->mode == SC_MODE_RUN)
		return sc_check_run(o, argc, argv);
	return sc_check_other(o, argc, argv);
}

/*
 * The proxy uid: --user, else the config's [proxy] user, else 65532.  The
 * config is loaded here to read that key and so that a bad config is
 * refused (exit 2, FILE:LINE errors) before the namespace is touched.
 * Returns 0 or an exit status.
 */
static int
sc_resolve_uid(struct sc_opts *o)
{
	const struct cf_proxy_settings *p;
	struct cf_config *cfg;

	if (o->mode == SC_MODE_SERVE || (o->mode == SC_MODE_CHECK && o->config != NULL)) {
		/* The overrides the engine will get, so the file is judged
		 * exactly as it will be served. */
		cfg = sc_config_load_strict(o->config, o->allow, o->n_allow, o->listen,
		    o->n_listen, o->has_uid, o->uid);
		if (cfg == NULL)
			return 2;
		p = cf_config_proxy(cfg);
		if (p->has_user && !o->has_uid)
			o->uid = p->user;
		cf_config_free(cfg);
		if (o->uid == 0) {
			sc_logx("the proxy user must not be 0: root's sockets are locked too");
			return 2;
		}
	}
	if (!o->has_probe_uid)
		o->probe_uid = o->uid + 1 == UINT32_MAX ? o->uid - 1 : o->uid + 1;
	return 0;
}

/*
 * The identity a root caller's command runs as: --uid (gid the same
 * number), else the user sudo(8) ran us for (SUDO_UID and SUDO_GID), so
 * that `sudo postern-sidecar run` works on that user's files as that user,
 * else nobody (65534:65534).  Never 0: a SUDO_UID of 0 counts as none.  An
 * ordinary caller's command keeps the caller's ids, and --uid may only
 * repeat them.  Returns 0 or exit status 2.
 */
static int
sc_run_identity(const struct sc_opts *o, uid_t *uid, gid_t *gid)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	uid_t u, g;

	if (geteuid() != 0) {
		if (o->has_run_uid && o->run_uid != geteuid()) {
			sc_logx("--uid needs root: run by uid %u, the command keeps uid %u",
			    (unsigned)geteuid(), (unsigned)geteuid());
			return 2;
		}
		*uid = geteuid();
		*gid = getegid();
		return 0;
	}
	if (o->has_run_uid) {
		*uid = o->run_uid;
		*gid = (gid_t)o->run_uid;
		return 0;
	}
	if (su != NULL && sc_parse_uid(su, &u) == 0 && u != 0) {
		*uid = u;
		*gid = sg != NULL && sc_parse_uid(sg, &g) == 0 && g != 0 ? (gid_t)g : (gid_t)u;
		return 0;
	}
	*uid = 65534;
	*gid = 65534;
	return 0;
}

/* Lock the namespace and prove it; 0 when proven, else an exit status. */
static int
sc_lockdown(const struct sc_opts *o)
{
	struct sc_probe_opts po;
	struct sc_escape_opts eo;
	struct sc_nft_ifaces ifs, all;
	unsigned fams = 0;
	size_t i;
	int failed, no_egress = 0;
	int err;

	err = br_link_up_lo(NULL);
	if (err < 0) {
		sc_logerr(err, "check failed: cannot bring the loopback interface up");
		return 1;
	}
	err = sc_rules_install(o->uid, SC_FAM_V4 | SC_FAM_V6, &fams);
	if (err < 0) {
		sc_logerr(err, "check failed: cannot install the lock-down rules");
		return 1;
	}
	if (!(fams & SC_FAM_V4)) {
		sc_logx("check failed: no IPv4 rules could be installed");
		return 1;
	}
	if (sc_rules_verify(o->uid, fams) < 0)
		return 1;
	/* Routing cannot say "drop": a socket bound to an interface, or one
	 * sending to a broadcast or multicast address, is routed anyway.  The
	 * filter is what holds; the rules above stay as a second layer that
	 * gives an ordinary connect() a clear ENETUNREACH. */
	err = sc_nft_ifaces_get(&ifs);
	if (err < 0) {
		sc_logerr(err, "check failed: cannot list the network interfaces");
		return 1;
	}
	err = sc_nft_install(o->uid, &ifs);
	if ((err == -EOPNOTSUPP || err == -ENOENT) && ifs.n > 0) {
		/* A kernel without the netdev egress hook (before 5.16, or
		 * without CONFIG_NETFILTER_EGRESS) refuses the egress chains.
		 * The output chain still holds every IP socket; packet-socket
		 * frames then go unchecked, which must be said, and the
		 * probe does not pretend otherwise. */
		sc_logx("warning: NOT held by the lock-down: this kernel has no netdev "
		    "egress hook, so frames of AF_PACKET sockets (CAP_NET_RAW) are not "
		    "stopped; the agent must run without NET_RAW");
		ifs.n = 0;
		no_egress = 1;
		err = sc_nft_install(o->uid, &ifs);
	}
	if (err < 0) {
		sc_logerr(err, "check failed: cannot install the nftables lock-down");
		return 1;
	}
	if (sc_nft_verify(o->uid, &ifs, NULL, 0) < 0)
		return 1;
	memset(&po, 0, sizeof(po));
	po.proxy_uid = o->uid;
	po.probe_uid = o->probe_uid;
	po.probe_gid = (gid_t)o->probe_uid;
	po.families = fams;
	po.addrs = o->probe_addr;
	po.n_addrs = o->n_probe_addr;
	err = sc_probe_run(&po);
	if (err < 0 && err != -EPERM) {
		sc_logerr(err, "check failed: the probe could not run");
		return 1;
	}
	/* The escape probe runs even when the routing probe failed, so that
	 * one run shows every proof that does not hold. */
	failed = err < 0;
	memset(&eo, 0, sizeof(eo));
	eo.proxy_uid = o->uid;
	eo.probe_uid = o->probe_uid;
	eo.probe_gid = (gid_t)o->probe_uid;
	eo.families = fams;
	/* The escape probe walks the interfaces themselves (the egress
	 * chains may be missing, see above). */
	err = sc_nft_ifaces_get(&all);
	if (err < 0) {
		sc_logerr(err, "check failed: cannot list the network interfaces");
		return 1;
	}
	eo.ifs = &all;
	eo.nft_ifs = &ifs;
	eo.no_egress = no_egress;
	for (i = 0; i < o->n_probe_addr; i++) {
		if (strchr(o->probe_addr[i], ':') == NULL && eo.addr4 == NULL)
			eo.addr4 = o->probe_addr[i];
		else if (strchr(o->probe_addr[i], ':') != NULL && eo.addr6 == NULL)
			eo.addr6 = o->probe_addr[i];
	}
	err = sc_escape_run(&eo);
	if (err < 0 || failed)
		return 1;
	sc_logx("lock-down proven: only uid %u may leave this network namespace",
	    (unsigned)o->uid);
	return 0;
}

/* Nonzero when UID (with the gid of the same number and no other group)
 * may create files in DIR, by its mode bits. */
static int
sc_dir_writable_by(const char *dir, uid_t uid)
{
	struct stat st;

	if (stat(dir, &st) < 0)
		return 0;
	if (st.st_uid == uid)
		return (st.st_mode & (S_IWUSR | S_IXUSR)) == (S_IWUSR | S_IXUSR);
	if (st.st_gid == (gid_t)uid)
		return (st.st_mode & (S_IWGRP | S_IXGRP)) == (S_IWGRP | S_IXGRP);
	return (st.st_mode & (S_IWOTH | S_IXOTH)) == (S_IWOTH | S_IXOTH);
}

/* Create the directory of each UNIX listener when it is missing (with its
 * parents: a scratch image has no /run), the last one owned by the proxy uid
 * so that the engine, which runs as that uid, can create and remove its
 * socket there.  An existing directory (a shared volume) is left as it is. */
static void
sc_prepare_socket_dirs(const struct sc_opts *o)
{
	char dir[PATH_MAX];
	char *slash, *p;
	size_t i;

	for (i = 0; i < o->n_listen; i++) {
		if (strncmp(o->listen[i], "unix:", 5) != 0 || o->listen[i][5] != '/')
			continue;
		if ((size_t)snprintf(dir, sizeof(dir), "%s", o->listen[i] + 5) >= sizeof(dir))
			continue;
		slash = strrchr(dir, '/');
		if (slash == NULL || slash == dir)
			continue;
		*slash = '\0';
		for (p = strchr(dir + 1, '/'); p != NULL; p = strchr(p + 1, '/')) {
			*p = '\0';
			if (mkdir(dir, 0755) < 0 && errno != EEXIST)
				sc_logerr(errno, "cannot create %s", dir);
			*p = '/';
		}
		if (mkdir(dir, 0755) == 0) {
			/* A container may grant no CAP_CHOWN (NET_ADMIN,
			 * SETUID and SETGID are all the sidecar needs).  The
			 * directory is then one we just made in the
			 * container's own filesystem, where only our
			 * processes live: let any uid create in it, sticky
			 * (only the owner removes a file), not listable. */
			if (chown(dir, o->uid, (gid_t)o->uid) < 0 &&
			    (errno != EPERM || chmod(dir, 01733) < 0))
				sc_logerr(errno, "cannot give %s to uid %u", dir, (unsigned)o->uid);
		} else if (errno != EEXIST) {
			sc_logerr(errno, "cannot create %s", dir);
		} else if (!sc_dir_writable_by(dir, o->uid)) {
			/* Not ours to change (a volume, a host directory):
			 * the engine will fail to bind; say why. */
			sc_logx("warning: %s is not writable by uid %u, so the proxy cannot "
			    "create its socket there; use a volume writable by it (mode "
			    "0777 like an emptyDir, or owned by %u)", dir, (unsigned)o->uid,
			    (unsigned)o->uid);
		}
	}
}

/* Become UID (and the gid of the same number) for good: no groups, no
 * capabilities, no_new_privs (base/super.h). */
static int
sc_drop_privileges(uid_t uid)
{
	const char *what;

	return bs_drop_privileges(uid, (gid_t)uid, &what);
}

/*
 * Container mode: the engine runs in a child; this process stays as the
 * supervisor (PID 1 in a container), reaping every child, forwarding
 * SIGTERM, SIGINT and SIGHUP (reload) to the engine only, and exiting with
 * the engine's status once it has stopped and removed its sockets.
 */
static int
sc_serve(const struct sc_opts *o)
{
	struct px_engine_opts eo;
	struct signalfd_siginfo si;
	struct pollfd pfd[2];
	pid_t self = getpid(), engine, pid, capture = -1;
	int pipefd[2], sigfd, status, err, ready = 0, nfds, failed = 0, stopping = 0;
	char byte;

	sc_prepare_socket_dirs(o);
	sigfd = sc_sigfd_open();
	if (sigfd < 0) {
		sc_logerr(sigfd, "cannot set up signals");
		return 1;
	}
	if (o->capture) {
		/* Before the engine (and its ready pipe, which it must not
		 * hold), so that "serving" means the stub too; its first
		 * query only needs the engine by then. */
		capture = sc_capture_start(sc_capture_sock(o), o->uid, self);
		if (capture < 0) {
			sc_logx("transparent capture cannot start, not serving");
			return 1;
		}
	}
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		sc_logerr(errno, "pipe");
		return 1;
	}
	fflush(stdout);
	fflush(stderr);
	engine = fork();
	if (engine < 0) {
		sc_logerr(errno, "fork");
		return 1;
	}
	if (engine == 0) {
		/* The engine never runs as root: it binds its listeners as the
		 * proxy uid (the sidecar made their directories for it).  The
		 * drop happens here rather than in the engine because a change
		 * of uid clears the parent-death signal, which is set again
		 * after it: a sidecar killed with SIGKILL takes its engine
		 * along even when it is not PID 1. */
		err = sc_drop_privileges(o->uid);
		if (err < 0) {
			sc_logerr(err, "cannot drop to uid %u", (unsigned)o->uid);
			_exit(1);
		}
		sc_child_die_with_parent(self, SIGTERM);
		sc_child_signals_reset();
		close(sigfd);
		close(pipefd[0]);
		memset(&eo, 0, sizeof(eo));
		eo.config_path = o->config;
		eo.extra_allow = o->allow;
		eo.n_extra_allow = o->n_allow;
		eo.extra_listen = o->listen;
		eo.n_extra_listen = o->n_listen;
		eo.replace_listen = 1;
		/* The uid the rules let out, whatever the config says. */
		eo.has_user = 1;
		eo.user = o->uid;
		eo.ready_fd = pipefd[1];
		/* A ConfigMap edit reaches the engine by reload: only root (the
		 * kubelet) and the proxy's uid may be able to make one. */
		eo.strict_modes = 1;
		_exit(sc_engine_run(&eo));
	}
	close(pipefd[1]);
	/* The supervisor needs nothing but kill() on a child of the same uid
	 * from now on. */
	err = sc_drop_privileges(o->uid);
	if (err < 0) {
		sc_logerr(err, "cannot drop privileges");
		failed = 1;
		kill(engine, SIGTERM);
	}
	for (;;) {
		pfd[0].fd = sigfd;
		pfd[0].events = POLLIN;
		pfd[1].fd = pipefd[0];
		pfd[1].events = POLLIN;
		nfds = ready ? 1 : 2;
		if (poll(pfd, (nfds_t)nfds, -1) < 0 && errno != EINTR) {
			sc_logerr(errno, "poll");
			failed = 1;
			kill(engine, SIGTERM);
			sleep(1);
		}
		if (!ready && pfd[1].revents) {
			ready = 1;
			if (read(pipefd[0], &byte, 1) == 1 && !failed)
				sc_logx("serving as uid %u", (unsigned)o->uid);
			close(pipefd[0]);
		}
		while (bs_sigfd_read(sigfd, &si) == 1) {
			if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT ||
			    si.ssi_signo == SIGHUP) {
				kill(engine, (int)si.ssi_signo);
				if (capture > 0 && si.ssi_signo != SIGHUP) {
					kill(capture, (int)si.ssi_signo);
					stopping = 1;
				}
			}
		}
		while ((pid = bs_reap_one(&status)) > 0) {
			if (pid == capture) {
				/* A pod told it captures must not go on
				 * without: stop, and let it be restarted. */
				capture = -1;
				if (!stopping) {
					sc_logx("the capture process stopped; stopping the proxy");
					failed = 1;
					kill(engine, SIGTERM);
				}
			}
			if (pid == engine) {
				if (capture > 0)
					kill(capture, SIGTERM);
				return failed ? 1 : bs_exit_code(status);
			}
		}
	}
}

/* postern-sidecar ask [--pid PID] [--list]: options of its own. */
static int
sc_ask_args(int argc, char **argv)
{
	enum { O_PID = 256, O_LIST };
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, O_PID },
		{ "list", no_argument, NULL, O_LIST },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sc_ask_opts ao;
	uint64_t v;
	int c;

	memset(&ao, 0, sizeof(ao));
	optind = 2;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case O_PID:
			if (bs_num_parse(optarg, strlen(optarg), 0x7fffffff, 0, &v) < 0 || v == 0) {
				sc_logx("--pid: '%s' is not a process id", optarg);
				return 2;
			}
			ao.pid = (pid_t)v;
			break;
		case O_LIST:
			ao.list = 1;
			break;
		case 'h':
			printf("usage: postern-sidecar ask [--pid PID] [--list]\n"
			    "Answers the questions of a postern-sidecar run --ask of this user:\n"
			    "  a [DURATION]  allow for this run (a 10m: for ten minutes)\n"
			    "  o             allow once\n"
			    "  d             deny for this run\n"
			    "  n             deny once\n"
			    "  s             skip (it is refused at ask_timeout)\n"
			    "  --pid PID     the run to answer, when several are going\n"
			    "  --list        print the pending questions once and exit\n"
			    "See postern-sidecar(8).\n");
			return 0;
		default:
			return 2;
		}
	}
	if (optind < argc) {
		sc_logx("ask: unexpected argument '%s'", argv[optind]);
		return 2;
	}
	return sc_ask_main(&ao);
}

/*
 * run --settings FILE: read FILE (sidecar/srtsettings.h), tell what it
 * does not apply, and with --print-config print its postern.ini (*DONE
 * set).  Else that postern.ini, in a memory file of ours, becomes RO's
 * config, which run loads once, before CMD starts.  Returns 0, or exit
 * status 2 (FILE refused) or 1.
 */
static int
sc_run_settings(const struct sc_opts *o, struct sc_run_opts *ro, int *done)
{
	static char path[64];
	struct sc_srt s;
	size_t i, len, off;
	ssize_t n;
	char *ini;
	int fd, code = 1;

	*done = 0;
	(void)sc_srt_load(o->settings, &s);
	for (i = 0; i < s.nwarnings; i++)
		sc_logx("warning: %s", s.warnings[i]);
	if (s.nerrors != 0 || s.nomem) {
		for (i = 0; i < s.nerrors; i++)
			fprintf(stderr, "%s\n", s.errors[i]);
		if (s.nomem)
			sc_logx("%s: out of memory", o->settings);
		sc_logx("%s refused%s", o->settings, o->print_config ? "" : ", not starting");
		sc_srt_free(&s);
		return 2;
	}
	ini = sc_srt_ini(&s, o->settings);
	sc_srt_free(&s);
	if (ini == NULL) {
		sc_logx("%s: out of memory", o->settings);
		return 1;
	}
	if (o->print_config) {
		*done = 1;
		code = fputs(ini, stdout) < 0 || fflush(stdout) != 0 ? 1 : 0;
		free(ini);
		return code;
	}
	fd = memfd_create("postern-settings", MFD_CLOEXEC);
	if (fd < 0) {
		sc_logerr(-errno, "--settings: cannot make a memory file");
		free(ini);
		return 1;
	}
	len = strlen(ini);
	for (off = 0; off < len; off += (size_t)n) {
		n = write(fd, ini + off, len - off);
		if (n <= 0) {
			sc_logerr(-errno, "--settings: cannot write the memory file");
			close(fd);
			free(ini);
			return 1;
		}
	}
	free(ini);
	/* Left open for the process's life: run reads it by this name. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ro->config_path = path;
	ro->settings_path = o->settings;
	return 0;
}

int
main(int argc, char **argv)
{
	struct sc_opts o;
	struct sc_run_opts ro;
	int code;

	px_mem_init();
	if (argc > 1 && strcmp(argv[1], "ask") == 0)
		return sc_ask_args(argc, argv);
	if (sc_parse_args(argc, argv, &o) < 0)
		return 2;
	code = sc_resolve_uid(&o);
	if (code != 0)
		return code;
	switch (o.mode) {
	case SC_MODE_RUN:
		memset(&ro, 0, sizeof(ro));
		ro.config_path = o.config;
		ro.allow = o.allow;
		ro.n_allow = o.n_allow;
		ro.bridge = o.bridge;
		ro.connect = o.connect;
		ro.token_file = o.token_file;
		ro.session_name = o.session_name;
		ro.session = o.session;
		ro.report = o.report;
		ro.learn = o.learn;
		ro.learn_file = o.learn_file;
		ro.ask = o.ask;
		ro.notices = o.notices;
		ro.sockets = o.sockets;
		ro.n_sockets = o.n_sockets;
		ro.forwards = o.forwards;
		ro.n_forwards = o.n_forwards;
		ro.env = o.env;
		ro.n_env = o.n_env;
		ro.secrets = o.secrets;
		ro.n_secrets = o.n_secrets;
		ro.home = o.home;
		ro.binds = o.binds;
		ro.n_binds = o.n_binds;
		if (o.settings != NULL) {
			int done;

			code = sc_run_settings(&o, &ro, &done);
			if (code != 0 || done)
				return code;
		}
		if (o.run_check)
			return sc_run_check(&ro);
		code = sc_run_identity(&o, &ro.uid, &ro.gid);
		if (code != 0)
			return code;
		ro.argv = o.argv;
		return sc_run_main(&ro);
	case SC_MODE_UNLOCK:
		if (sc_rules_remove(SC_FAM_V4 | SC_FAM_V6) < 0 || sc_nft_remove() < 0)
			return 1;
		sc_logx("lock-down rules and nftables tables removed");
		return 0;
	case SC_MODE_CHECK:
		return sc_lockdown(&o);
	case SC_MODE_SERVE:
		break;
	}
	code = sc_lockdown(&o);
	if (code != 0) {
		sc_logx("refusing to start the proxy: the lock-down is not proven");
		sc_logx("not starting");
		return code;
	}
	return sc_serve(&o);
}
