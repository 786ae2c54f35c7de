/*
 * proxy/ctl.c: postern-proxy ctl (see ctl.h).
 *
 * A deliberately small HTTP/1.0 client: one request per connection, the
 * server closes after its answer, so the response is everything read
 * until EOF.  No libevent: this runs once and exits.  The server renders
 * text for a person when asked with "Accept: text/plain", so the JSON the
 * status endpoint serves to programs and the text printed here come from
 * the same place and cannot drift apart.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <ini.h>

#include "base/cursor.h"
#include "base/reply.h"
#include "base/unix.h"
#include "conf/config.h"
#include "proxy/ctl.h"

#define CTL_TIMEOUT_MS 10000
#define CTL_MAX_RESPONSE (64u << 20)

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: postern-proxy ctl COMMAND [--admin PATH] [-c FILE]\n"
	    "  status   what the running proxy serves: config generation, last reload, sessions\n"
	    "  reload   reload the config now; prints whether it was taken, or every error\n"
	    "  metrics  the Prometheus metrics, as served\n"
	    "  learn SESSION               an allow_hosts block of what SESSION's allowlist\n"
	    "                              refused or would refuse\n"
	    "  pending [--json]            the questions of sessions in mode = ask\n"
	    "  allow ID [--once] [--for DURATION]\n"
	    "                              allow question ID's requests, and (without --once) its\n"
	    "                              host and port for the session, for DURATION or no end\n"
	    "  deny ID [--once]            refuse them, and (without --once) for the session\n"
	    "  grants [--json] [--save]    the runtime grants in force; --save writes those\n"
	    "                              with no end to grants_file\n"
	    "  session list                every session: from the file or made at run time,\n"
	    "                              its listeners, its open connections\n"
	    "  session add NAME [--file F | KEY=VALUE ...]\n"
	    "                              make session NAME at run time from the lines of a\n"
	    "                              [session NAME] section: those of F (- for stdin),\n"
	    "                              or one KEY = VALUE line per argument\n"
	    "  session rm NAME             end runtime session NAME and its connections\n"
	    "  --admin PATH  the admin socket (default: `admin` in FILE's [proxy], else %s)\n"
	    "exit status: 0 done, 1 failed (for allow and deny: ID is not pending; for session:\n"
	    "the proxy's reason on stderr), 2 usage\n",
	    PX_CTL_DEFAULT_ADMIN);
}

/* ---- finding the socket -------------------------------------------------- */

struct find_admin {
	char value[512];
	int found;
};

static int
find_admin_cb(void *arg, const char *section, const char *name, const char *value)
{
	struct find_admin *f = arg;

	if (strcmp(section, "proxy") == 0 && strcmp(name, "admin") == 0) {
		snprintf(f->value, sizeof(f->value), "%s", value);
		f->found = 1;
	}
	return 1;   /* keep going: errors elsewhere are not ours to judge */
}

/*
 * The admin path FILE names, into OUT.  Read with inih directly rather
 * than through cf_config_load(), so that a file with an error elsewhere
 * (the very case `ctl reload` is for) still tells us where the proxy is.
 * Returns 0, or a negative errno after saying why.
 */
static int
admin_from_config(const char *file, char *out, size_t size)
{
	struct find_admin f;
	struct cf_listen l;
	const char *why = NULL;
	int rc;

	memset(&f, 0, sizeof(f));
	rc = ini_parse(file, find_admin_cb, &f);
	if (rc < 0) {
		fprintf(stderr, "postern-proxy ctl: cannot read %s\n", file);
		return -EIO;
	}
	if (!f.found) {
		fprintf(stderr, "postern-proxy ctl: %s has no admin = unix:PATH in [proxy]; use --admin PATH\n",
		    file);
		return -ENOENT;
	}
	memset(&l, 0, sizeof(l));
	if (cf_listen_parse(f.value, &l, &why) != 0 || l.kind != CF_LISTEN_UNIX) {
		fprintf(stderr, "postern-proxy ctl: %s: admin = %s is not unix:PATH%s%s\n", file, f.value,
		    why ? ": " : "", why ? why : "");
		free(l.text);
		return -EINVAL;
	}
	snprintf(out, size, "%s", l.path);
	free(l.text);
	return 0;
}

/* ---- the exchange -------------------------------------------------------- */

static long
ms_left(const struct timespec *deadline)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (deadline->tv_sec - now.tv_sec) * 1000L + (deadline->tv_nsec - now.tv_nsec) / 1000000L;
}

/* Wait for EVENTS on FD until DEADLINE; 0, or -ETIMEDOUT / -errno. */
static int
wait_fd(int fd, short events, const struct timespec *deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	long left;
	int n;

	for (;;) {
		left = ms_left(deadline);
		if (left <= 0)
			return -ETIMEDOUT;
		n = poll(&p, 1, (int)left);
		if (n > 0)
			return 0;
		if (n == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

int
px_ctl_exchange(const char *path, const char *req, int timeout_ms, size_t max, char **resp,
    size_t *len)
{
	struct sockaddr_un sun;
	struct timespec deadline;
	size_t off = 0, cap = 0, reqlen = strlen(req);
	char *buf = NULL;
	int fd, rc;

	*resp = NULL;
	*len = 0;
	rc = bs_unix_addr(&sun, NULL, path);
	if (rc < 0)
		return rc;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += timeout_ms / 1000;
	deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0) {
		/* A UNIX connect either completes or fails at once, except
		 * EAGAIN when the backlog is full: wait for it then. */
		if (errno != EAGAIN && errno != EINPROGRESS) {
			rc = -errno;
			goto out;
		}
		if ((rc = wait_fd(fd, POLLOUT, &deadline)) != 0)
			goto out;
		if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0 && errno != EISCONN) {
			rc = -errno;
			goto out;
		}
	}
	while (off < reqlen) {
		ssize_t n = send(fd, req + off, reqlen - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			if ((rc = wait_fd(fd, POLLOUT, &deadline)) != 0)
				goto out;
			continue;
		}
		if (n < 0) {
			rc = -errno;
			goto out;
		}
		off += (size_t)n;
	}
	off = 0;
	for (;;) {
		ssize_t n;
		if (cap - off < 4096 + 1) {
			char *nb;
			if (cap >= max) {
				rc = -EMSGSIZE;
				goto out;
			}
			cap = cap ? cap * 2 : 16384;
			nb = realloc(buf, cap);
			if (nb == NULL) {
				rc = -ENOMEM;
				goto out;
			}
			buf = nb;
		}
		n = recv(fd, buf + off, cap - off - 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			if ((rc = wait_fd(fd, POLLIN, &deadline)) != 0)
				goto out;
			continue;
		}
		if (n < 0) {
			rc = -errno;
			goto out;
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	buf[off] = '\0';
	*resp = buf;
	*len = off;
	buf = NULL;
	rc = 0;
out:
	free(buf);
	close(fd);
	return rc;
}

int
px_ctl_parse_response(const char *resp, size_t len, int *status, const char **body,
    size_t *bodylen)
{
	struct bs_reply r;

	if (bs_reply_parse(resp, len, &r) != 1)
		return -EINVAL;
	*status = r.status;
	*body = resp + r.head_len;
	*bodylen = len - r.head_len;
	return 0;
}

/* What the ctl command line asks for. */
struct ctl_opts {
	const char *admin;      /* --admin, or NULL */
	const char *file;       /* -c FILE, whose admin = is used */
	const char *cmd;
	const char *session;    /* learn's session */
	const char *id;         /* allow's and deny's question */
	const char *dur;        /* --for */
	int json;
	int once;
	int save;
	const char *sub;        /* session's list, add or rm */
	const char *from;       /* session add --file */
	char **kv;              /* session add's KEY=VALUE arguments */
	int nkv;
};

/*
 * Fills O from the command line.  Returns 0 to run, 1 when --help was
 * printed, or -EINVAL after saying what is wrong.
 */
static int
ctl_parse_args(int argc, char **argv, struct ctl_opts *o)
{
	static const struct option opts[] = {
		{ "admin", required_argument, NULL, 'a' },
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ "once", no_argument, NULL, 'o' },
		{ "for", required_argument, NULL, 'f' },
		{ "save", no_argument, NULL, 's' },
		{ "file", required_argument, NULL, 'F' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd;
	int ch;

	memset(o, 0, sizeof(*o));
	optind = 1;
	while ((ch = getopt_long(argc, argv, "+a:c:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'a':
			o->admin = optarg;
			break;
		case 'c':
			o->file = optarg;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	/* The command may come before or after the options. */
	if (optind >= argc) {
		usage(stderr);
		return -EINVAL;
	}
	cmd = o->cmd = argv[optind];
	/* The rest is parsed anew (optind 0 makes getopt start over, and in
	 * its permuting order, which the "+" above had fixed), so that
	 * options and an id may come in any order after the command. */
	argv += optind;
	argc -= optind;
	optind = 0;
	while ((ch = getopt_long(argc, argv, "a:c:h", opts, NULL)) != -1) {
		if (ch == 'a')
			o->admin = optarg;
		else if (ch == 'c')
			o->file = optarg;
		else if (ch == 'j')
			o->json = 1;
		else if (ch == 'o')
			o->once = 1;
		else if (ch == 'f')
			o->dur = optarg;
		else if (ch == 's')
			o->save = 1;
		else if (ch == 'F' && strcmp(cmd, "session") == 0)
			o->from = optarg;
		else {
			usage(ch == 'h' ? stdout : stderr);
			return ch == 'h' ? 1 : -EINVAL;
		}
	}
	/* learn takes the session's name, allow and deny the question's id
	 * (ctl pending lists them); every other command nothing. */
	if (strcmp(cmd, "learn") == 0 && optind < argc)
		o->session = argv[optind++];
	else if ((strcmp(cmd, "allow") == 0 || strcmp(cmd, "deny") == 0) && optind < argc)
		o->id = argv[optind++];
	else if (strcmp(cmd, "session") == 0) {
		o->sub = optind < argc ? argv[optind++] : "";
		if (strcmp(o->sub, "add") == 0 || strcmp(o->sub, "rm") == 0) {
			o->session = optind < argc ? argv[optind++] : "";
			if (strcmp(o->sub, "add") == 0) {
				o->kv = argv + optind;
				o->nkv = argc - optind;
				optind = argc;
			}
		} else if (strcmp(o->sub, "list") != 0) {
			fprintf(stderr, "postern-proxy ctl: session takes list, add NAME or rm NAME\n");
			return -EINVAL;
		}
		if (o->session != NULL && o->session[0] == '\0') {
			fprintf(stderr, "postern-proxy ctl: session %s needs the session's name\n", o->sub);
			return -EINVAL;
		}
		if (o->sub[0] == 'a' && (o->from != NULL) == (o->nkv > 0)) {
			fprintf(stderr, "postern-proxy ctl: session add takes --file F or KEY=VALUE "
			    "arguments (one of the two)\n");
			return -EINVAL;
		}
		if (o->from != NULL && o->sub[0] != 'a') {
			fprintf(stderr, "postern-proxy ctl: session %s takes no --file\n", o->sub);
			return -EINVAL;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "postern-proxy ctl: unexpected argument: %s\n", argv[optind]);
		return -EINVAL;
	}
	if ((o->json && strcmp(cmd, "pending") != 0 && strcmp(cmd, "grants") != 0) ||
	    (o->once && strcmp(cmd, "allow") != 0 && strcmp(cmd, "deny") != 0) ||
	    (o->dur != NULL && strcmp(cmd, "allow") != 0) || (o->save && strcmp(cmd, "grants") != 0)) {
		fprintf(stderr, "postern-proxy ctl: %s takes no %s\n", cmd,
		    o->json ? "--json" : o->once ? "--once" : o->dur != NULL ? "--for" : "--save");
		return -EINVAL;
	}
	return 0;
}

/* learn's request, in BUF.  Returns it, or NULL after saying what is wrong
 * with the session's name. */
static const char *
ctl_learn_request(const char *session, char *buf, size_t size)
{
	size_t i, n = session != NULL ? strlen(session) : 0;

	/* A session's name is letters, digits, '.', '_' and '-'
	 * (postern.ini(5)): nothing to escape in the query, and
	 * nothing else is sent. */
	for (i = 0; i < n; i++)
		if (!((session[i] >= 'a' && session[i] <= 'z') || (session[i] >= 'A' &&
		    session[i] <= 'Z') || (session[i] >= '0' && session[i] <= '9') ||
		    session[i] == '.' || session[i] == '_' || session[i] == '-'))
			break;
	if (n == 0 || n > 64 || i < n) {
		fprintf(stderr, "postern-proxy ctl: learn needs a session's name%s\n",
		    n == 0 ? "" : " (letters, digits, '.', '_', '-')");
		usage(stderr);
		return NULL;
	}
	snprintf(buf, size,
	    "GET /learn?session=%s HTTP/1.0\r\nHost: postern\r\nAccept: text/plain\r\n\r\n",
	    session);
	return buf;
}

/* allow's or deny's request, in BUF.  Returns it, or NULL after saying
 * what is wrong with the id or --for. */
static const char *
ctl_decide_request(const struct ctl_opts *o, char *buf, size_t size)
{
	char form[160];
	uint64_t v;
	unsigned ms;
	const char *why = NULL;

	if (o->id == NULL || bs_num_parse(o->id, strlen(o->id), UINT32_MAX, 0, &v) != 0 || v == 0) {
		fprintf(stderr, "postern-proxy ctl: %s takes the id of a pending question "
		    "(postern-proxy ctl pending)%s%s\n", o->cmd, o->id ? ", not " : "",
		    o->id ? o->id : "");
		return NULL;
	}
	if (o->dur != NULL && o->once) {
		fprintf(stderr, "postern-proxy ctl: --for is the length of a grant for the session; "
		    "--once leaves none\n");
		return NULL;
	}
	if (o->dur != NULL && cf_duration_parse(o->dur, &ms, &why) != 0) {
		fprintf(stderr, "postern-proxy ctl: --for %s: %s\n", o->dur, why);
		return NULL;
	}
	snprintf(form, sizeof(form), "id=%llu&answer=%s&scope=%s%s%s", (unsigned long long)v,
	    o->cmd, o->once ? "once" : "session", o->dur ? "&for=" : "", o->dur ? o->dur : "");
	snprintf(buf, size, "POST /decide HTTP/1.0\r\nHost: postern\r\n"
	    "Accept: text/plain\r\nContent-Type: application/x-www-form-urlencoded\r\n"
	    "Content-Length: %zu\r\n\r\n%s", strlen(form), form);
	return buf;
}

/* Nonzero when NAME is a session's name: nothing to escape in a path. */
static int
session_name_ok(const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
		    (name[i] >= '0' && name[i] <= '9') || name[i] == '.' || name[i] == '_' ||
		    name[i] == '-'))
			return 0;
	return n > 0 && n <= 64;
}

/* Append LEN bytes of P to *BUF (*LEN bytes so far); 0 or -ENOMEM. */
static int
grow(char **buf, size_t *len, const char *p, size_t n)
{
	char *nb = realloc(*buf, *len + n + 1);

	if (nb == NULL)
		return -ENOMEM;
	memcpy(nb + *len, p, n);
	*len += n;
	nb[*len] = '\0';
	*buf = nb;
	return 0;
}

/* The body of session add: the lines of --file F (- for stdin), or one
 * KEY = VALUE line per argument.  Returns it (to free), or NULL after
 * saying why. */
static char *
ctl_session_body(const struct ctl_opts *o, size_t *len)
{
	char *body = NULL, chunk[4096];
	int i;

	*len = 0;
	if (o->from != NULL) {
		FILE *f = strcmp(o->from, "-") == 0 ? stdin : fopen(o->from, "r");
		size_t n;

		if (f == NULL) {
			fprintf(stderr, "postern-proxy ctl: %s: %s\n", o->from, strerror(errno));
			return NULL;
		}
		while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
			if (*len + n > 64 * 1024 || grow(&body, len, chunk, n) != 0) {
				fprintf(stderr, "postern-proxy ctl: %s: larger than 64 KiB\n", o->from);
				goto fail;
			}
		if (ferror(f)) {
			fprintf(stderr, "postern-proxy ctl: %s: cannot read\n", o->from);
			goto fail;
		}
		if (f != stdin)
			fclose(f);
		if (body == NULL)
			fprintf(stderr, "postern-proxy ctl: %s is empty\n", o->from);
		else if (memchr(body, '\0', *len) != NULL) {
			fprintf(stderr, "postern-proxy ctl: %s holds a NUL byte\n", o->from);
			free(body);
			return NULL;
		}
		return body;
fail:
		if (f != stdin)
			fclose(f);
		free(body);
		return NULL;
	}
	for (i = 0; i < o->nkv; i++) {
		const char *eq = strchr(o->kv[i], '=');

		/* One argument, one line: a newline would make two. */
		if (eq == NULL || eq == o->kv[i] || strpbrk(o->kv[i], "\r\n") != NULL) {
			fprintf(stderr, "postern-proxy ctl: session add: %s is not KEY=VALUE on one line\n",
			    o->kv[i]);
			free(body);
			return NULL;
		}
		if (grow(&body, len, o->kv[i], (size_t)(eq - o->kv[i])) != 0 ||
		    grow(&body, len, " = ", 3) != 0 || grow(&body, len, eq + 1, strlen(eq + 1)) != 0 ||
		    grow(&body, len, "\n", 1) != 0) {
			fprintf(stderr, "postern-proxy ctl: out of memory\n");
			free(body);
			return NULL;
		}
	}
	return body;
}

/* session's request, in *OWN (to free) or BUF.  Returns it, or NULL after
 * saying what is wrong. */
static const char *
ctl_session_request(const struct ctl_opts *o, char *buf, size_t size, char **own)
{
	char *body;
	size_t len;

	if (strcmp(o->sub, "list") == 0)
		return "GET /sessions HTTP/1.0\r\nHost: postern\r\nAccept: text/plain\r\n\r\n";
	if (!session_name_ok(o->session)) {
		fprintf(stderr, "postern-proxy ctl: %s is not a session's name (letters, digits, "
		    "'.', '_', '-', at most 64)\n", o->session);
		return NULL;
	}
	if (strcmp(o->sub, "rm") == 0) {
		snprintf(buf, size, "DELETE /sessions/%s HTTP/1.0\r\nHost: postern\r\n"
		    "Accept: text/plain\r\nContent-Length: 0\r\n\r\n", o->session);
		return buf;
	}
	if ((body = ctl_session_body(o, &len)) == NULL)
		return NULL;
	if (asprintf(own, "PUT /sessions/%s HTTP/1.0\r\nHost: postern\r\nAccept: text/plain\r\n"
	    "Content-Type: text/plain\r\nContent-Length: %zu\r\n\r\n%s", o->session, len,
	    body) < 0) {
		*own = NULL;
		fprintf(stderr, "postern-proxy ctl: out of memory\n");
	}
	free(body);
	return *own;
}

/* The request command O sends, fixed or built in BUF.  Returns it, or
 * NULL after saying what is wrong. */
static const char *
ctl_request(const struct ctl_opts *o, char *buf, size_t size, char **own)
{
	const char *cmd = o->cmd;
	int json = o->json;

	if (strcmp(cmd, "status") == 0)
		return "GET /status HTTP/1.0\r\nHost: postern\r\nAccept: text/plain\r\n\r\n";
	if (strcmp(cmd, "metrics") == 0)
		return "GET /metrics HTTP/1.0\r\nHost: postern\r\n\r\n";
	if (strcmp(cmd, "learn") == 0)
		return ctl_learn_request(o->session, buf, size);
	if (strcmp(cmd, "reload") == 0)
		return "POST /reload HTTP/1.0\r\nHost: postern\r\nAccept: text/plain\r\n"
		    "Content-Length: 0\r\n\r\n";
	if (strcmp(cmd, "pending") == 0)
		return json ? "GET /pending HTTP/1.0\r\nHost: postern\r\n\r\n" :
		    "GET /pending HTTP/1.0\r\nHost: postern\r\nAccept: text/plain\r\n\r\n";
	if (strcmp(cmd, "grants") == 0 && o->save)
		return json ? "POST /grants/save HTTP/1.0\r\nHost: postern\r\nContent-Length: 0\r\n\r\n" :
		    "POST /grants/save HTTP/1.0\r\nHost: postern\r\nAccept: text/plain\r\n"
		    "Content-Length: 0\r\n\r\n";
	if (strcmp(cmd, "grants") == 0)
		return json ? "GET /grants HTTP/1.0\r\nHost: postern\r\n\r\n" :
		    "GET /grants HTTP/1.0\r\nHost: postern\r\nAccept: text/plain\r\n\r\n";
	if (strcmp(cmd, "allow") == 0 || strcmp(cmd, "deny") == 0)
		return ctl_decide_request(o, buf, size);
	if (strcmp(cmd, "session") == 0)
		return ctl_session_request(o, buf, size, own);
	fprintf(stderr, "postern-proxy ctl: unknown command: %s\n", cmd);
	usage(stderr);
	return NULL;
}

/* Prints the answer ADMIN gave to command O: the body on stdout when it
 * is the answer, else why not on stderr.  Returns the exit status. */
static int
ctl_print_answer(const struct ctl_opts *o, const char *admin, int status, const char *body,
    size_t bodylen)
{
	size_t i;

	if (o->id != NULL && status == 404) {
		/* Answered already, expired, or never asked: the body says. */
		fprintf(stderr, "postern-proxy ctl: ");
		fwrite(body, 1, bodylen, stderr);
		return 1;
	}
	if (o->save && status == 409) {
		/* No grants_file, or it could not be written: the body says. */
		fprintf(stderr, "postern-proxy ctl: ");
		fwrite(body, 1, bodylen, stderr);
		return 1;
	}
	if (strcmp(o->cmd, "reload") == 0 && (status == 422 || status == 409)) {
		/* The body says what was wrong, line by line; it is the answer. */
		fwrite(body, 1, bodylen, stdout);
		return 1;
	}
	if (o->sub != NULL && status != 200) {
		/* The proxy's reasons, one a line: for a script's log. */
		const char *p = body, *e = body + bodylen;
		while (p < e) {
			const char *nl = memchr(p, '\n', (size_t)(e - p));
			size_t n = nl ? (size_t)(nl - p) : (size_t)(e - p);
			fprintf(stderr, "postern-proxy ctl: %.*s\n", (int)n, p);
			p += n + 1;
		}
		if (bodylen == 0)
			fprintf(stderr, "postern-proxy ctl: %s answered %d\n", admin, status);
		return 1;
	}
	if (o->session != NULL && status == 404) {
		fprintf(stderr, "postern-proxy ctl: the proxy at %s has no session %s\n", admin,
		    o->session);
		return 1;
	}
	if (status != 200) {
		fprintf(stderr, "postern-proxy ctl: %s answered %d: ", admin, status);
		/* Whatever answers on the socket: at most 200 bytes, and only
		 * printable ones, reach the terminal. */
		for (i = 0; i < bodylen && i < 200; i++)
			fputc(body[i] >= 0x20 && body[i] < 0x7f ? body[i] : '.', stderr);
		fputc('\n', stderr);
		return 1;
	}
	fwrite(body, 1, bodylen, stdout);
	return fflush(stdout) == 0 ? 0 : 1;
}

int
px_ctl_main(int argc, char **argv)
{
	struct ctl_opts o;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
	char reqbuf[512];
	const char *admin, *req, *body;
	char *resp = NULL, *own = NULL;
	size_t len = 0, bodylen = 0;
	int rc, status = 0, err;

	err = ctl_parse_args(argc, argv, &o);
	if (err != 0)
		return err > 0 ? 0 : 2;
	req = ctl_request(&o, reqbuf, sizeof(reqbuf), &own);
	if (req == NULL)
		return o.sub != NULL && o.sub[0] == 'a' ? 1 : 2;

	admin = o.admin;
	if (admin == NULL && o.file != NULL) {
		if (admin_from_config(o.file, path, sizeof(path)) < 0)
			return 1;
		admin = path;
	}
	if (admin == NULL)
		admin = PX_CTL_DEFAULT_ADMIN;

	err = px_ctl_exchange(admin, req, CTL_TIMEOUT_MS, CTL_MAX_RESPONSE, &resp, &len);
	if (err != 0) {
		fprintf(stderr, "postern-proxy ctl: %s: %s%s\n", admin, strerror(-err),
		    err == -ENOENT || err == -ECONNREFUSED ?
		    " (is postern-proxy running with admin = unix:PATH set?)" : "");
		rc = 1;
	} else if (px_ctl_parse_response(resp, len, &status, &body, &bodylen) != 0) {
		fprintf(stderr, "postern-proxy ctl: %s: not an HTTP response\n", admin);
		rc = 1;
	} else
		rc = ctl_print_answer(&o, admin, status, body, bodylen);
	free(resp);
	free(own);
	return rc;
}
