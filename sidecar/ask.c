/*
 * sidecar/ask.c: the run directory of an ask-mode run, and the asker that
 * answers its questions (see ask.h).
 *
 * The admin socket is the engine's own (proxy/admin/admin.h), 0600, in a 0700
 * directory of this user's, outside everything CMD sees: /run and /tmp
 * are fresh tmpfs in CMD's mount namespace, and the jail also covers the
 * run directory itself wherever it is (sidecar/jail.h), so CMD can neither
 * list nor connect to it.  No abstract socket is used (those are per
 * network namespace, and CMD's has none of ours anyway).  Who may answer
 * is who may enter the directory: the user who started run (root for a
 * run under sudo: an answer widens the sandbox as --allow would).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/cursor.h"
#include "base/unix.h"
#include "proxy/ctl.h"
#include "sidecar/ask.h"
#include "sidecar/log.h"
#include "sidecar/pending.h"
#include "sidecar/pid1.h"

/* How often the asker looks at the pending list. */
#define SC_ASK_POLL_MS 250
/* An admin socket that does not answer in this long is a failure. */
#define SC_ASK_IO_MS 5000
/* No answer of the admin socket is larger. */
#define SC_ASK_MAX_RESP (256u * 1024u)
/* Ids already asked (or skipped), remembered in a ring. */
#define SC_ASK_SEEN 256

static const char sc_ask_keys[] =
    "[a]llow for this run, allow [o]nce, [d]eny for this run, de[n]y once, [s]kip? ";

/* BASE for the caller's euid, created when missing; 0 or -errno. */
static int
sc_ask_base(char *out, size_t size)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	uid_t me = geteuid();
	struct stat st;

	if (me == 0)
		/* Not /run/postern: the shipped unit gives that to the
		 * proxy's user (RuntimeDirectory=), who must not be able to
		 * put a socket of its own where root's ask looks. */
		snprintf(out, size, "/run/postern-ask");
	else if (xdg != NULL && xdg[0] == '/' && stat(xdg, &st) == 0 && S_ISDIR(st.st_mode) &&
	    st.st_uid == me && strlen(xdg) < 64)
		snprintf(out, size, "%s/postern", xdg);
	else
		snprintf(out, size, "/tmp/postern-%u", (unsigned)me);
	if (mkdir(out, me == 0 ? 0755 : 0700) < 0 && errno != EEXIST)
		return -errno;
	/* Not a symbolic link, ours, and nobody else's to write: else
	 * another user could put a socket of theirs where ask looks. */
	if (lstat(out, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || (st.st_uid != me && st.st_uid != 0) ||
	    (st.st_mode & 022) != 0)
		return -EPERM;
	return 0;
}

/* Connect to the UNIX socket PATH; the fd, or -errno. */
static int
sc_ask_connect(const char *path)
{
	struct sockaddr_un sun;
	socklen_t len;
	int fd, err;

	err = bs_unix_addr(&sun, &len, path);
	if (err < 0)
		return err;
	/* Non-blocking: a connect(2) to a UNIX socket whose backlog is full
	 * (an engine that stopped accepting, a stale listener) would wait
	 * for ever; it fails with EAGAIN instead, and is tried again. */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, len) < 0 ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

static void
sc_ask_remove_stale(const char *dir)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/admin.sock", dir);
	(void)unlink(path);
	(void)rmdir(dir);
}

int
sc_ask_dir_make(struct sc_ask_dir *d, pid_t pid, uid_t owner)
{
	char base[96];
	int err;

	memset(d, 0, sizeof(*d));
	err = sc_ask_base(base, sizeof(base));
	if (err < 0) {
		sc_logerr(err, "--ask: cannot use %s for the run's admin socket", base);
		return err;
	}
	snprintf(d->dir, sizeof(d->dir), "%s/run-%ld", base, (long)pid);
	snprintf(d->sock, sizeof(d->sock), "%s/admin.sock", d->dir);
	snprintf(d->listen, sizeof(d->listen), "unix:%s", d->sock);
	/* Our PID is ours: a directory of that name is a dead run's. */
	if (mkdir(d->dir, 0700) < 0) {
		if (errno != EEXIST) {
			err = -errno;
			goto fail;
		}
		sc_ask_remove_stale(d->dir);
		if (mkdir(d->dir, 0700) < 0) {
			err = -errno;
			goto fail;
		}
	}
	if (owner != (uid_t)-1 && chown(d->dir, owner, (gid_t)owner) < 0) {
		err = -errno;
		goto fail;
	}
	return 0;
fail:
	sc_logerr(err, "--ask: cannot create %s", d->dir);
	(void)rmdir(d->dir);
	d->dir[0] = '\0';
	return err;
}

void
sc_ask_dir_remove(struct sc_ask_dir *d)
{
	if (d->dir[0] == '\0')
		return;
	if (unlink(d->sock) < 0 && errno != ENOENT)
		sc_logerr(errno, "cannot remove %s", d->sock);
	if (rmdir(d->dir) < 0 && errno != ENOENT)
		sc_logerr(errno, "cannot remove %s", d->dir);
	d->dir[0] = '\0';
}

/* Each live run under BASE: its pid into PIDS (at most MAX); the count. */
static size_t
sc_ask_runs(const char *base, pid_t except, pid_t *pids, size_t max)
{
	char sock[160];
	struct dirent *e;
	uint64_t v;
	size_t n = 0;
	DIR *d;
	int fd;

	d = opendir(base);
	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, "run-", 4) != 0 ||
		    bs_num_parse(e->d_name + 4, strlen(e->d_name + 4), 0x7fffffff, 0, &v) < 0 ||
		    (pid_t)v == except || v == 0)
			continue;
		/* A dead run's directory (killed by SIGKILL) has no listener. */
		snprintf(sock, sizeof(sock), "%s/%s/admin.sock", base, e->d_name);
		fd = sc_ask_connect(sock);
		if (fd < 0)
			continue;
		close(fd);
		if (n < max)
			pids[n] = (pid_t)v;
		n++;
	}
	closedir(d);
	return n;
}

size_t
sc_ask_count_runs(pid_t except)
{
	char base[96];

	if (sc_ask_base(base, sizeof(base)) < 0)
		return 0;
	return sc_ask_runs(base, except, NULL, 0);
}

/*
 * One request on the admin socket SOCK: METHOD PATH with BODY (NULL:
 * none), HTTP/1.0 so that the server closes when it is done.  The response
 * is read into a buffer of ours (*RESP, freed by the caller), at most
 * SC_ASK_MAX_RESP bytes, in at most SC_ASK_IO_MS.  Returns the status
 * code with *BODY_OFF, or a negative errno (-ECONNREFUSED, -ENOENT: no
 * engine listens).
 */
static int
sc_ask_http(const char *sock, const char *method, const char *path, const char *body,
    char **resp, size_t *len, size_t *body_off)
{
	char req[1024];
	const char *b;
	size_t blen;
	int hl, err, status;

	*resp = NULL;
	if (body != NULL)
		hl = snprintf(req, sizeof(req), "%s %s HTTP/1.0\r\nHost: postern\r\n"
		    "Content-Type: application/x-www-form-urlencoded\r\n"
		    "Content-Length: %zu\r\n\r\n%s", method, path, strlen(body), body);
	else
		hl = snprintf(req, sizeof(req), "%s %s HTTP/1.0\r\nHost: postern\r\n\r\n",
		    method, path);
	if (hl <= 0 || (size_t)hl >= sizeof(req))
		return -EMSGSIZE;
	err = px_ctl_exchange(sock, req, SC_ASK_IO_MS, SC_ASK_MAX_RESP, resp, len);
	if (err < 0)
		return err;
	if (px_ctl_parse_response(*resp, *len, &status, &b, &blen) != 0 || status < 100) {
		free(*resp);
		*resp = NULL;
		return -EPROTO;
	}
	*body_off = (size_t)(b - *resp);
	return status;
}

struct sc_asker {
	const char *sock;
	pid_t run;           /* the run's pid: the asker ends with it */
	int is_child;        /* run's own prompt: RUN is the parent */
	int in;
	FILE *out;
	int tty;             /* IN is a terminal: show the keys */
	int eof;
	char buf[512];
	size_t nbuf;
	uint64_t seen[SC_ASK_SEEN];
	size_t nseen;
	struct sc_pending list[SC_PENDING_MAX];
	int nlist;
};

static int
sc_asker_run_alive(const struct sc_asker *a)
{
	if (a->is_child)
		return getppid() == a->run;
	return kill(a->run, 0) == 0 || errno == EPERM;
}

/* Read the pending list into A->list; its length, or a negative errno. */
static int
sc_asker_fetch(struct sc_asker *a)
{
	size_t len, off;
	char *resp;
	int st;

	st = sc_ask_http(a->sock, "GET", "/pending", NULL, &resp, &len, &off);
	if (st < 0)
		return st;
	if (st != 200) {
		free(resp);
		return -EPROTO;
	}
	a->nlist = sc_pending_parse(resp + off, len - off, a->list, SC_PENDING_MAX);
	free(resp);
	if (a->nlist < 0) {
		a->nlist = 0;
		return -EPROTO;
	}
	return a->nlist;
}

static int
sc_asker_seen(const struct sc_asker *a, uint64_t id)
{
	size_t i, n = a->nseen < SC_ASK_SEEN ? a->nseen : SC_ASK_SEEN;

	for (i = 0; i < n; i++)
		if (a->seen[i] == id)
			return 1;
	return 0;
}

static void
sc_asker_mark(struct sc_asker *a, uint64_t id)
{
	a->seen[a->nseen++ % SC_ASK_SEEN] = id;
}

static const struct sc_pending *
sc_asker_find(const struct sc_asker *a, uint64_t id)
{
	int i;

	for (i = 0; i < a->nlist; i++)
		if (a->list[i].id == id)
			return &a->list[i];
	return NULL;
}

/* What a question's answer releases: "GET example.test:80 /path" or
 * "CONNECT example.test:443", and how much of it is not shown.  The proxy
 * shows a path escaped, without a space: what follows is ours. */
#define SC_ASK_WHAT (sizeof(((struct sc_pending *)0)->method) + \
    sizeof(((struct sc_pending *)0)->host) + sizeof(((struct sc_pending *)0)->path) + 96)

static void
sc_asker_what(const struct sc_pending *p, char *buf, size_t size)
{
	char cut[64] = "";

	if (p->path_cut > 0)
		snprintf(cut, sizeof(cut), " (cut: %llu more bytes not shown)",
		    (unsigned long long)p->path_cut);
	else if (p->cut)
		snprintf(cut, sizeof(cut), " (cut: more not shown)");
	snprintf(buf, size, "%s %s:%u%s%s%s", p->method[0] ? p->method : "CONNECT", p->host,
	    p->port, p->path[0] ? " " : "", p->path, cut);
}

static void
sc_asker_show(struct sc_asker *a, const struct sc_pending *p)
{
	char what[SC_ASK_WHAT];

	sc_asker_what(p, what, sizeof(what));
	fprintf(a->out, "postern: question %llu: session %s: %s (%llu waiting, %llu s left)\n",
	    (unsigned long long)p->id, p->session[0] ? p->session : "default", what,
	    (unsigned long long)p->waiting, (unsigned long long)((p->expires_in_ms + 999) / 1000));
}

/*
 * One line of A->in into LINE within TIMEOUT_MS: 1 got one, 0 timed out,
 * -1 at the end of the input.  A line longer than the buffer is dropped.
 */
static int
sc_asker_line(struct sc_asker *a, int timeout_ms, char *line, size_t size)
{
	struct pollfd pfd;
	char *nl;
	ssize_t r;
	size_t k;

	for (;;) {
		nl = memchr(a->buf, '\n', a->nbuf);
		if (nl != NULL) {
			k = (size_t)(nl - a->buf);
			snprintf(line, size, "%.*s", (int)k, a->buf);
			memmove(a->buf, nl + 1, a->nbuf - k - 1);
			a->nbuf -= k + 1;
			return 1;
		}
		if (a->eof) {
			if (a->nbuf > 0) {
				snprintf(line, size, "%.*s", (int)a->nbuf, a->buf);
				a->nbuf = 0;
				return 1;
			}
			return -1;
		}
		if (a->nbuf == sizeof(a->buf))
			a->nbuf = 0;
		pfd.fd = a->in;
		pfd.events = POLLIN;
		r = poll(&pfd, 1, timeout_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return 0;
		r = read(a->in, a->buf + a->nbuf, sizeof(a->buf) - a->nbuf);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0)
			a->eof = 1;
		else
			a->nbuf += (size_t)r;
		timeout_ms = 0;
	}
}

/* An answer typed: KEY [DURATION]; 0 with the form body, 1 for skip,
 * -EINVAL when it is not one. */
static int
sc_asker_parse(const char *line, uint64_t id, char *body, size_t size, const char **said)
{
	const char *answer, *scope, *dur;
	size_t i;

	while (*line == ' ' || *line == '\t')
		line++;
	dur = line + (line[0] != '\0');
	while (*dur == ' ' || *dur == '\t')
		dur++;
	switch (line[0]) {
	case 'a': answer = "allow"; scope = "session"; *said = "allowed for this run"; break;
	case 'o': answer = "allow"; scope = "once"; *said = "allowed once"; break;
	case 'd': answer = "deny"; scope = "session"; *said = "denied for this run"; break;
	case 'n': answer = "deny"; scope = "once"; *said = "denied once"; break;
	case 's': return line[1] == '\0' || line[1] == ' ' ? 1 : -EINVAL;
	default: return -EINVAL;
	}
	if (line[1] != '\0' && line[1] != ' ' && line[1] != '\t')
		return -EINVAL;
	/* A duration for a grant for this run ("a 10m"); its grammar is the
	 * proxy's, we only keep the bytes to digits and unit letters. */
	for (i = 0; dur[i] != '\0'; i++)
		if (!((dur[i] >= '0' && dur[i] <= '9') || (dur[i] >= 'a' && dur[i] <= 'z')) ||
		    i > 16)
			return -EINVAL;
	if (i > 0 && strcmp(scope, "session") != 0)
		return -EINVAL;
	snprintf(body, size, "id=%llu&answer=%s&scope=%s%s%s", (unsigned long long)id, answer,
	    scope, i > 0 ? "&for=" : "", dur);
	return 0;
}

/* Ask about P until it is answered, skipped, or no longer pending. */
static void
sc_asker_ask(struct sc_asker *a, struct sc_pending p)
{
	char line[128], body[160], what[SC_ASK_WHAT];
	struct timespec t0, t1;
	const char *said = "";
	size_t len, off;
	long waited;
	char *resp;
	int st, r;

	sc_asker_what(&p, what, sizeof(what));
	sc_asker_show(a, &p);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (a->eof && a->nbuf == 0) {
			fprintf(a->out, "postern: question %llu left to the timeout (no more "
			    "answers to read)\n", (unsigned long long)p.id);
			fflush(a->out);
			return;
		}
		if (a->tty)
			fputs(sc_ask_keys, a->out);
		fflush(a->out);
		for (;;) {
			r = sc_asker_line(a, SC_ASK_POLL_MS, line, sizeof(line));
			if (r != 0)
				break;
			if (!sc_asker_run_alive(a))
				return;
			/* A person thinks; the question may expire meanwhile,
			 * or be answered in another terminal. */
			if (sc_asker_fetch(a) >= 0 && sc_asker_find(a, p.id) == NULL) {
				clock_gettime(CLOCK_MONOTONIC, &t1);
				waited = (t1.tv_sec - t0.tv_sec) * 1000 +
				    (t1.tv_nsec - t0.tv_nsec) / 1000000;
				fprintf(a->out, "%spostern: question %llu (%s) %s\n", a->tty ? "\n" : "",
				    (unsigned long long)p.id, what,
				    waited + 2 * SC_ASK_POLL_MS >= (long)p.expires_in_ms ?
				    "was not answered in time: refused (ask_timeout)" :
				    "is no longer pending (answered elsewhere, or its requests went "
				    "away)");
				fflush(a->out);
				return;
			}
		}
		if (r < 0)
			continue;
		r = sc_asker_parse(line, p.id, body, sizeof(body), &said);
		if (r == 1)
			return;
		if (r < 0) {
			fprintf(a->out, "postern: answer a, o, d, n or s (\"a 10m\": allow for "
			    "10 minutes)\n");
			continue;
		}
		st = sc_ask_http(a->sock, "POST", "/decide", body, &resp, &len, &off);
		if (st == 200)
			fprintf(a->out, "postern: question %llu: %s: %s\n", (unsigned long long)p.id,
			    said, what);
		else if (st == 404)
			fprintf(a->out, "postern: question %llu (%s) is no longer pending (not "
			    "answered in time, answered elsewhere, or its requests went away): "
			    "nothing was released\n", (unsigned long long)p.id, what);
		else if (st > 0)
			fprintf(a->out, "postern: question %llu: the proxy refused the answer "
			    "(HTTP %d): %.200s\n", (unsigned long long)p.id, st, resp + off);
		else
			fprintf(a->out, "postern: question %llu: cannot answer: %s\n",
			    (unsigned long long)p.id, strerror(-st));
		if (st > 0)
			free(resp);
		fflush(a->out);
		return;
	}
}

/* Ask every new question until the run ends; LIST: print them once. */
static int
sc_asker_loop(struct sc_asker *a, int list)
{
	int n, i, asked;

	for (;;) {
		if (!sc_asker_run_alive(a)) {
			if (!a->is_child)
				fprintf(a->out, "postern: the run (pid %ld) ended\n", (long)a->run);
			return 0;
		}
		n = sc_asker_fetch(a);
		if (list) {
			if (n < 0) {
				sc_logerr(n, "%s", a->sock);
				return 1;
			}
			for (i = 0; i < n; i++)
				sc_asker_show(a, &a->list[i]);
			if (n == 0)
				fprintf(a->out, "postern: no question is pending\n");
			return 0;
		}
		asked = 0;
		for (i = 0; i < n; i++) {
			if (sc_asker_seen(a, a->list[i].id))
				continue;
			sc_asker_mark(a, a->list[i].id);
			sc_asker_ask(a, a->list[i]);
			asked = 1;
			break;
		}
		/* A failed fetch is an engine being restarted, or gone with
		 * the run, which the next round tells. */
		if (!asked)
			(void)poll(NULL, 0, SC_ASK_POLL_MS);
	}
}

int
sc_ask_main(const struct sc_ask_opts *o)
{
	struct sc_asker *a;
	char base[96], sock[160];
	pid_t pids[16];
	size_t n, i;
	int rc;

	if (sc_ask_base(base, sizeof(base)) < 0) {
		sc_logx("no ask-mode run is going (%s cannot be used)", base);
		return 1;
	}
	n = sc_ask_runs(base, 0, pids, 16);
	if (o->pid != 0) {
		for (i = 0; i < n && i < 16; i++)
			if (pids[i] == o->pid)
				break;
		if (i == n || i == 16) {
			sc_logx("no ask-mode run with pid %ld is going (in %s)", (long)o->pid, base);
			return 1;
		}
		pids[0] = o->pid;
	} else if (n == 0) {
		sc_logx("no ask-mode run is going (none in %s; start one with "
		    "postern-sidecar run --ask -- CMD%s)", base,
		    geteuid() == 0 ? "" : ", as this user");
		return 1;
	} else if (n > 1) {
		sc_logx("%zu ask-mode runs are going; choose one with --pid:", n);
		for (i = 0; i < n && i < 16; i++)
			fprintf(stderr, "  postern-sidecar ask --pid %ld\n", (long)pids[i]);
		return 1;
	}
	snprintf(sock, sizeof(sock), "%s/run-%ld/admin.sock", base, (long)pids[0]);
	a = calloc(1, sizeof(*a));
	if (a == NULL)
		return 1;
	a->sock = sock;
	a->run = pids[0];
	a->in = STDIN_FILENO;
	a->out = stdout;
	a->tty = isatty(STDIN_FILENO);
	if (!o->list)
		fprintf(a->out, "postern: answering the questions of run pid %ld\n", (long)a->run);
	fflush(a->out);
	rc = sc_asker_loop(a, o->list);
	free(a);
	return rc;
}

pid_t
sc_ask_prompt_start(const char *sock, int tty)
{
	pid_t parent = getpid(), pid;
	struct sc_asker *a;
	int fd;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid != 0)
		return pid;
	sc_child_die_with_parent(parent, SIGTERM);
	sc_child_signals_reset();
	/* ^C at the terminal is for CMD; run ends us with SIGTERM. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	a = calloc(1, sizeof(*a));
	fd = dup(tty);
	if (a == NULL || fd < 0 || (a->out = fdopen(fd, "w")) == NULL)
		_exit(1);
	a->sock = sock;
	a->run = parent;
	a->is_child = 1;
	a->in = tty;
	a->tty = 1;
	_exit(sc_asker_loop(a, 0));
}
