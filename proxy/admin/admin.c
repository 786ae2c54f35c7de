/*
 * proxy/admin/admin.c: the admin socket (see admin.h).
 *
 * The socket is a UNIX socket only (the config refuses anything else), so
 * that who may reload the proxy or read its status is decided by file
 * permissions: 0600 (root and the proxy's own uid) unless admin_group
 * opens it to one group.  libevent's evhttp parses the requests; its
 * limits are set small because nothing legitimate sends more than a
 * request line and a few headers, but a runtime session's lines (PUT
 * /sessions/NAME, up to PX_RTSESS_MAX_TEXT, checked per route).
 *
 * evhttp runs on a thread and event base of its own, so that the relay
 * loop, however busy, never delays the admin socket's I/O.  Everything a
 * request reads or changes is the loop's, and is done there: the admin
 * thread hands it over as a job (px_loopcall_run) and waits.
 *
 * The metrics listener (`metrics = tcp:ADDR:PORT`) is a second evhttp on
 * the same thread with a request callback of its own that knows one route,
 * GET /metrics: no other route of this file is reachable from it.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/eventfd.h>
#include <sys/queue.h>
#include <sys/un.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "base/cursor.h"
#include "conf/config.h"
#include "proxy/admin/admin.h"
#include "proxy/policy/ask.h"
#include "proxy/core/audit.h"
#include "proxy/policy/grants.h"
#include "proxy/policy/learn.h"
#include "proxy/core/log.h"
#include "proxy/core/loopcall.h"
#include "proxy/reload.h"
#include "proxy/core/server.h"
#include "proxy/admin/status.h"
#include "proxy/flow/conns.h"
#include "proxy/policy/rtsess.h"

/* Nothing a client of the admin socket sends is larger than this, but a
 * runtime session's lines (PX_RTSESS_MAX_TEXT), on its route only. */
#define ADMIN_MAX_HEADERS 8192
#define ADMIN_MAX_BODY 4096
#define ADMIN_TIMEOUT_S 10

/* A scraper sends a request line and a few headers, never a body. */
#define METRICS_MAX_HEADERS 4096

/* How long the admin thread waits for a busy loop before answering 503. */
#define LOOP_TIMEOUT_MS 5000

struct px_admin {
	struct px_server *srv;
	px_reload_fn *reload;     /* POST /reload */
	px_session_fn *session;   /* PUT, DELETE /sessions/NAME; may be NULL */
	void *reload_arg;
	struct event_base *base;  /* the admin thread's own loop */
	struct evhttp *http;	  /* on BASE; NULL without an admin socket */
	struct evhttp *mhttp;	  /* on BASE: the metrics listener, or NULL */
	struct event *stop_ev;	  /* on BASE: STOP_FD readable */
	int stop_fd;
	struct px_loopcall *lc;	  /* on the proxy's loop */
	pthread_t thread;
	int started;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)]; /* "": none */
	int made_dir;
};

/* ---- the socket ---------------------------------------------------------- */

/*
 * Bind (px_unix_bind(): the file is born 0600, so that it never exists
 * with wider permissions, not even between bind(2) and chmod(2)) and
 * listen on the admin socket at A->path with MODE.  GID (or -1) becomes
 * the file's group before the mode opens it to that group.  Returns the
 * descriptor or a negative errno.
 */
static int
bind_admin(struct px_admin *a, mode_t mode, uid_t uid, gid_t gid)
{
	char dir[sizeof(a->path)], *slash;
	int fd, e;

	fd = px_unix_bind(a->path, &a->made_dir);
	if (fd < 0)
		return fd;
	/* Owner and group first, then the mode that may open it to the
	 * group: never a moment where the wrong group may connect. */
	if ((uid != (uid_t)-1 || gid != (gid_t)-1) && chown(a->path, uid, gid) != 0)
		goto fail;
	if (chmod(a->path, mode) != 0 || listen(fd, 16) != 0)
		goto fail;
	if (a->made_dir && uid != (uid_t)-1) {
		memcpy(dir, a->path, sizeof(dir));
		slash = strrchr(dir, '/');
		if (slash != NULL)
			*slash = '\0';
		if (chown(dir, uid, (gid_t)-1) != 0)
			log_warn("chown %s", dir);
	}
	return fd;
fail:
	e = errno;
	unlink(a->path);
	close(fd);
	return -e;
}

/* Bind and listen on the metrics listener L (TCP); the descriptor or a
 * negative errno. */
static int
bind_metrics(const struct cf_listen *l)
{
	int fd, one = 1, e;

	fd = socket(l->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(fd, (const struct sockaddr *)&l->addr, l->addrlen) != 0 || listen(fd, 16) != 0) {
		e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

/* ---- requests ------------------------------------------------------------ */

/* Nonzero when the client asked for text/plain (postern-proxy ctl does). */
static int
wants_text(struct evhttp_request *req)
{
	const char *acc = evhttp_find_header(evhttp_request_get_input_headers(req), "Accept");

	return acc != NULL && strstr(acc, "text/plain") != NULL;
}

static void
reply(struct evhttp_request *req, int code, const char *reason, const char *type,
    struct evbuffer *body)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);

	evhttp_add_header(h, "Content-Type", type);
	evhttp_add_header(h, "Cache-Control", "no-store");
	evhttp_send_reply(req, code, reason, body);
}

static void
reply_error(struct evhttp_request *req, int code, const char *reason, const char *allow)
{
	struct evbuffer *b = evbuffer_new();

	if (allow != NULL)
		evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", allow);
	if (b == NULL) {
		evhttp_send_error(req, code, reason);
		return;
	}
	evbuffer_add_printf(b, "{\"error\":");
	px_status_json_str(b, reason);
	evbuffer_add_printf(b, "}\n");
	reply(req, code, reason, "application/json", b);
	evbuffer_free(b);
}

/*
 * A failed reload is 409 when the file itself was valid but could not be
 * applied (a new listener could not be bound: the state of the machine
 * conflicts with it), 422 when the file has errors.  The engine reports the
 * former as "FILE:LINE: cannot listen on ADDR".
 */
static int
refusal_code(const struct cf_diag *d)
{
	size_t i;

	for (i = 0; i < d->nerrors; i++)
		if (strstr(d->errors[i], ": cannot listen on ") == NULL)
			return 422;
	return d->nerrors > 0 ? 409 : 422;
}

/* On the loop: reload and describe the outcome in B; the HTTP status. */
static int
reload_into(struct px_admin *a, int text, struct evbuffer *b)
{
	const struct px_server *srv = a->srv;
	struct cf_diag diag;
	int code = 200;
	size_t i;

	memset(&diag, 0, sizeof(diag));
	/* The generation and hash are read after the reload: the new ones
	 * when it was taken. */
	if (a->reload(a->reload_arg, &diag, "admin", NULL) == 0) {
		if (text)
			evbuffer_add_printf(b, "taken: generation %lu (sha256 %s)\n",
			    px_server_generation(srv), cf_config_hash(px_server_config(srv)));
		else
			evbuffer_add_printf(b, "{\"taken\":true,\"generation\":%lu,\"hash\":\"%s\"}\n",
			    px_server_generation(srv), cf_config_hash(px_server_config(srv)));
	} else {
		code = refusal_code(&diag);
		if (text) {
			evbuffer_add_printf(b, "refused: generation %lu (sha256 %s) stays in force\n",
			    px_server_generation(srv), cf_config_hash(px_server_config(srv)));
			for (i = 0; i < diag.nerrors; i++)
				px_status_text_line(b, diag.errors[i], strlen(diag.errors[i]));
		} else {
			evbuffer_add_printf(b, "{\"taken\":false,\"generation\":%lu,\"errors\":[",
			    px_server_generation(srv));
			for (i = 0; i < diag.nerrors; i++) {
				if (i > 0)
					evbuffer_add(b, ",", 1);
				px_status_json_str(b, diag.errors[i]);
			}
			evbuffer_add_printf(b, "]}\n");
		}
	}
	cf_diag_free(&diag);
	return code;
}

/* On the loop: the learn summary of SESSION (learn.h) in B, for a session
 * of the config in force or one learned from since; the HTTP status (404
 * for a session neither knows, with a JSON error). */
static int
learn_into(struct px_admin *a, const char *session, struct evbuffer *b)
{
	const struct cf_session *s = cf_config_find_session(px_server_config(a->srv), session);
	struct px_learn *l = px_server_learn(a->srv);
	char *text;

	if (s == NULL && !px_learn_known(l, session)) {
		evbuffer_add_printf(b, "{\"error\":");
		px_status_json_str(b, "no such session");
		evbuffer_add_printf(b, ",\"session\":");
		px_status_json_str(b, session);
		evbuffer_add_printf(b, "}\n");
		return 404;
	}
	text = px_learn_render(l, session, s != NULL && s->is_default);
	if (text == NULL)
		return 500;
	evbuffer_add(b, text, strlen(text));
	free(text);
	return 200;
}

/*
 * What the admin thread asks of the loop: everything that reads or changes
 * the server's state runs there (loopcall.h), never on the admin thread.
 */
enum job_kind {
	JOB_STATUS, JOB_METRICS, JOB_RELOAD, JOB_LEARN, JOB_PENDING, JOB_DECIDE, JOB_GRANTS, JOB_SAVE,
	JOB_SESSIONS, JOB_SESSION
};

struct job {
	struct px_admin *a;
	enum job_kind kind;
	int text;
	const char *session; /* JOB_LEARN: in QUERY */
	struct evkeyvalq query; /* the request's query, parsed by a route */
	struct evbuffer *b; /* the admin thread's; written only by the loop
			     * while the job runs */
	int code;
	/* POST /decide, parsed on the admin thread: the question, the
	 * answer, a grant's time (0: none), and who asks (SO_PEERCRED). */
	unsigned id;
	enum px_ask_answer answer;
	unsigned for_ms;
	long uid;
	/* PUT /sessions/NAME (J->session the name, in the request's path):
	 * the body, or NULL for DELETE. */
	char *body;
	size_t bodylen;
};

/* On the loop: GET /sessions, every session of the snapshot in force,
 * where it comes from, its listeners and its open connections. */
static void
sessions_into(struct job *j)
{
	const struct cf_config *cfg = px_server_config(j->a->srv);
	size_t i, k;

	if (!j->text)
		evbuffer_add_printf(j->b, "{\"sessions\":[");
	for (i = 0; i < cf_config_nsessions(cfg); i++) {
		const struct cf_session *s = cf_config_session(cfg, i);
		uint64_t up, down;
		unsigned open = px_conns_relayed(j->a->srv, s->name, &up, &down);

		if (j->text) {
			evbuffer_add_printf(j->b, "%s\t%s\t%u open\t", s->name,
			    s->runtime ? "runtime" : "file", open);
			for (k = 0; k < s->nlisten; k++)
				evbuffer_add_printf(j->b, "%s%s", k ? ", " : "", s->listen[k].text);
			evbuffer_add_printf(j->b, "%s\n", s->nlisten ? "" : "-");
			continue;
		}
		evbuffer_add_printf(j->b, "%s{\"name\":", i ? "," : "");
		px_status_json_str(j->b, s->name);
		evbuffer_add_printf(j->b, ",\"from\":\"%s\",\"at\":", s->runtime ? "runtime" : "file");
		if (s->file != NULL) {
			char at[600];
			if (s->line > 0)
				snprintf(at, sizeof(at), "%s:%d", s->file, s->line);
			else
				snprintf(at, sizeof(at), "%s", s->file);
			px_status_json_str(j->b, at);
		} else {
			evbuffer_add_printf(j->b, "null");
		}
		evbuffer_add_printf(j->b, ",\"listen\":[");
		for (k = 0; k < s->nlisten; k++) {
			if (k)
				evbuffer_add(j->b, ",", 1);
			px_status_json_str(j->b, s->listen[k].text);
		}
		evbuffer_add_printf(j->b, "],\"connections\":%u}", open);
	}
	if (!j->text)
		evbuffer_add_printf(j->b, "],\"generation\":%lu}\n", px_server_generation(j->a->srv));
}

/* On the loop: PUT or DELETE /sessions/NAME; the HTTP status. */
static int
session_into(struct job *j)
{
	struct px_admin *a = j->a;
	struct cf_diag diag;
	int rc, code;
	size_t i;

	memset(&diag, 0, sizeof(diag));
	if (a->session == NULL) {
		rc = -EPERM;
		code = 409;
		if ((diag.errors = calloc(1, sizeof(char *))) != NULL &&
		    (diag.errors[0] = strdup("this proxy makes no session at run time")) != NULL)
			diag.nerrors = 1;
	} else {
		rc = a->session(a->reload_arg, j->session, j->body, j->bodylen, &diag);
		code = rc == 0 ? 200 : rc == -EINVAL ? refusal_code(&diag) : rc == -EPERM ||
		    rc == -EEXIST ? 409 : rc == -ENOENT ? 404 : 500;
		/* A bad field is the request's fault: 400. */
		if (code == 422)
			code = 400;
	}
	if (j->text) {
		if (rc == 0)
			evbuffer_add_printf(j->b, "session %s %s: generation %lu\n", j->session,
			    j->body != NULL ? "made" : "removed", px_server_generation(a->srv));
		for (i = 0; i < diag.nerrors; i++)
			px_status_text_line(j->b, diag.errors[i], strlen(diag.errors[i]));
	} else if (rc == 0) {
		evbuffer_add_printf(j->b, "{\"session\":");
		px_status_json_str(j->b, j->session);
		evbuffer_add_printf(j->b, ",\"%s\":true,\"generation\":%lu}\n",
		    j->body != NULL ? "made" : "removed", px_server_generation(a->srv));
	} else {
		evbuffer_add_printf(j->b, "{\"error\":");
		px_status_json_str(j->b, diag.nerrors > 0 ? diag.errors[0] : strerror(-rc));
		evbuffer_add_printf(j->b, ",\"errors\":[");
		for (i = 0; i < diag.nerrors; i++) {
			if (i > 0)
				evbuffer_add(j->b, ",", 1);
			px_status_json_str(j->b, diag.errors[i]);
		}
		evbuffer_add_printf(j->b, "]}\n");
	}
	cf_diag_free(&diag);
	return code;
}

/*
 * On the loop: answer question J->id.  An answer for the session leaves a
 * runtime grant first (audited: who, when, until), so that a request the
 * released ones make next finds it; then every waiter is released.
 */
static int
decide_into(struct job *j)
{
	struct px_server *srv = j->a->srv;
	struct px_ask *ask = px_server_ask(srv);
	struct px_ask_q q;
	int session = j->answer == PX_ASK_ALLOW_SESSION || j->answer == PX_ASK_DENY_SESSION;
	int allow = j->answer == PX_ASK_ALLOW_ONCE || j->answer == PX_ASK_ALLOW_SESSION;
	time_t now = time(NULL), until = 0;
	size_t released = 0;
	char until_s[32], msg[120];

	if (ask == NULL || px_ask_find(ask, j->id, &q) != 0) {
		snprintf(msg, sizeof(msg), "question %u is not pending (answered, expired, or never asked)",
		    j->id);
		if (j->text) {
			evbuffer_add_printf(j->b, "%s\n", msg);
			return 404;
		}
		evbuffer_add_printf(j->b, "{\"error\":");
		px_status_json_str(j->b, msg);
		evbuffer_add_printf(j->b, "}\n");
		return 404;
	}
	if (session) {
		struct px_json l;
		int rc;

		if (j->for_ms > 0)
			until = now + (time_t)((j->for_ms + 999) / 1000);
		rc = px_grants_add(px_server_grants(srv), q.session, q.host, q.port,
		    allow ? PX_GRANT_ALLOW : PX_GRANT_DENY, j->uid, now, until);
		if (rc != 0) {
			evbuffer_add_printf(j->b, "{\"error\":\"%s\"}\n", strerror(-rc));
			return 500;
		}
		px_json_begin(&l, "grant");
		px_json_str(&l, "session", q.session);
		px_json_str(&l, "host", q.host);
		px_json_num(&l, "port", q.port);
		px_json_str(&l, "grant", allow ? "allow" : "deny");
		px_json_num(&l, "asked", j->id);
		px_json_num(&l, "uid", j->uid);
		px_status_iso_time(now, until_s, sizeof(until_s));
		px_json_str(&l, "when", until_s);
		if (until != 0) {
			px_status_iso_time(until, until_s, sizeof(until_s));
			px_json_str(&l, "until", until_s);
		}
		px_json_num(&l, "generation", (int64_t)px_server_generation(srv));
		px_json_emit(&l, px_server_audit(srv));
	}
	log_info("question %u (session %s, %s:%u) answered %s by uid %ld", j->id, q.session, q.host,
	    q.port, px_ask_answer_word(j->answer), j->uid);
	/* Q's strings are the question's: not used past this point. */
	(void)px_ask_answer(ask, j->id, j->answer, &released);
	if (j->text) {
		evbuffer_add_printf(j->b, "question %u: %s %s (%zu request%s released)", j->id,
		    allow ? "allow" : "deny", session ? "for the session" : "once", released,
		    released == 1 ? "" : "s");
		if (session && until != 0) {
			px_status_iso_time(until, until_s, sizeof(until_s));
			evbuffer_add_printf(j->b, ", until %s\n", until_s);
		} else {
			evbuffer_add_printf(j->b, "%s\n", session ? ", until the proxy restarts" : "");
		}
		return 200;
	}
	evbuffer_add_printf(j->b, "{\"id\":%u,\"answer\":\"%s\",\"scope\":\"%s\",\"released\":%zu,"
	    "\"until\":", j->id, allow ? "allow" : "deny", session ? "session" : "once", released);
	if (until != 0) {
		px_status_iso_time(until, until_s, sizeof(until_s));
		evbuffer_add_printf(j->b, "\"%s\"}\n", until_s);
	} else {
		evbuffer_add_printf(j->b, "null}\n");
	}
	return 200;
}

/* On the loop: POST /grants/save, the grants with no end into grants_file. */
static int
save_into(struct job *j)
{
	struct px_server *srv = j->a->srv;
	const char *path = cf_config_proxy(px_server_config(srv))->grants_file;
	size_t saved = 0, skipped = 0;
	char why[600];

	if (path == NULL) {
		snprintf(why, sizeof(why), "no grants_file in [proxy] of %s: there is nowhere to save "
		    "the grants", cf_config_path(px_server_config(srv)));
		goto fail;
	}
	if (px_grants_save(px_server_grants(srv), path, time(NULL), &saved, &skipped, why,
	    sizeof(why)) != 0)
		goto fail;
	log_info("grants_file %s: %zu grant(s) saved, %zu timed one(s) not", path, saved, skipped);
	if (j->text) {
		evbuffer_add_printf(j->b, "saved %zu grant(s) to %s\n", saved, path);
		if (skipped > 0)
			evbuffer_add_printf(j->b, "not saved: %zu grant(s) with an end (--for): read back, "
			    "a grant has none; each is a comment in the file\n", skipped);
		return 200;
	}
	evbuffer_add_printf(j->b, "{\"saved\":%zu,\"not_saved_timed\":%zu,\"path\":", saved, skipped);
	px_status_json_str(j->b, path);
	evbuffer_add_printf(j->b, "}\n");
	return 200;
fail:
	if (j->text) {
		evbuffer_add_printf(j->b, "%s\n", why);
	} else {
		evbuffer_add_printf(j->b, "{\"error\":");
		px_status_json_str(j->b, why);
		evbuffer_add_printf(j->b, "}\n");
	}
	return 409;
}

static void
job_run(void *arg)
{
	struct job *j = arg;

	j->code = 200;
	switch (j->kind) {
	case JOB_METRICS:
		px_status_metrics(j->a->srv, j->b);
		break;
	case JOB_STATUS:
		if (j->text)
			px_status_text(j->a->srv, j->b);
		else
			px_status_json(j->a->srv, j->b);
		break;
	case JOB_RELOAD:
		j->code = reload_into(j->a, j->text, j->b);
		break;
	case JOB_LEARN:
		j->code = learn_into(j->a, j->session, j->b);
		break;
	case JOB_PENDING:
		px_status_pending(j->a->srv, j->text, j->b);
		break;
	case JOB_GRANTS:
		px_status_grants(j->a->srv, j->text, j->b);
		break;
	case JOB_DECIDE:
		j->code = decide_into(j);
		break;
	case JOB_SAVE:
		j->code = save_into(j);
		break;
	case JOB_SESSIONS:
		sessions_into(j);
		break;
	case JOB_SESSION:
		j->code = session_into(j);
		break;
	}
}

/* On the admin thread: have the loop do J and answer REQ with its result. */
static void
serve_job(struct px_admin *a, struct evhttp_request *req, struct job *j)
{
	const char *type;
	int rc;

	j->a = a;
	j->text = wants_text(req);
	if ((j->b = evbuffer_new()) == NULL) {
		evhttp_send_error(req, 500, "out of memory");
		return;
	}
	rc = px_loopcall_run(a->lc, job_run, j, LOOP_TIMEOUT_MS);
	if (rc != 0) {
		evbuffer_free(j->b);
		reply_error(req, 503, rc == -ECANCELED ? "shutting down" :
		    "the proxy's event loop did not answer in time", NULL);
		return;
	}
	if (j->kind == JOB_METRICS)
		/* The Prometheus text exposition format, version 0.0.4. */
		type = "text/plain; version=0.0.4; charset=utf-8";
	else if (j->kind == JOB_LEARN)
		/* A config block; its error is JSON, as every other one. */
		type = j->code == 200 ? "text/plain; charset=utf-8" : "application/json";
	else
		type = j->text ? "text/plain; charset=utf-8" : "application/json";
	reply(req, j->code, j->code == 200 ? "OK" : j->code == 409 ? "Conflict" :
	    j->code == 404 ? "Not Found" : j->code == 500 ? "Internal Server Error" :
	    j->code == 400 ? "Bad Request" : "Unprocessable Entity", type, j->b);
	evbuffer_free(j->b);
}

/* The uid of the admin client on REQ's connection (SO_PEERCRED), -1 when
 * it cannot be told: who answered is in every grant. */
static long
peer_uid(struct evhttp_request *req)
{
	struct evhttp_connection *con = evhttp_request_get_connection(req);
	struct bufferevent *bev = con != NULL ? evhttp_connection_get_bufferevent(con) : NULL;
	int fd = bev != NULL ? bufferevent_getfd(bev) : -1;
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0)
		return -1;
	return (long)cr.uid;
}

/*
 * POST /decide's body, application/x-www-form-urlencoded (parsed by
 * libevent's evhttp_parse_query_str()): id=N&answer=allow|deny
 * [&scope=once|session (default session)][&for=DURATION (allow for the
 * session only)].  Fills J, and who asks; 0, or -EINVAL with one sentence
 * in *WHY.
 */
static int
parse_decide(struct evhttp_request *req, struct job *j, const char **why)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t n = evbuffer_get_length(in);
	struct evkeyvalq kv;
	struct evkeyval *e;
	const char *id = NULL, *answer = NULL, *scope = NULL, *dur = NULL;
	char body[ADMIN_MAX_BODY + 1];
	uint64_t v;
	int rc = -EINVAL;

	TAILQ_INIT(&kv);
	*why = "the body is id=N&answer=allow|deny[&scope=once|session][&for=DURATION]";
	if (n > ADMIN_MAX_BODY)
		return -EINVAL;
	evbuffer_copyout(in, body, n);
	body[n] = '\0';
	if (strlen(body) != n || evhttp_parse_query_str(body, &kv) != 0)
		goto out;
	TAILQ_FOREACH(e, &kv, next) {
		const char **slot = strcmp(e->key, "id") == 0 ? &id : strcmp(e->key, "answer") == 0 ?
		    &answer : strcmp(e->key, "scope") == 0 ? &scope : strcmp(e->key, "for") == 0 ? &dur :
		    NULL;

		if (slot == NULL || *slot != NULL)
			goto out;   /* unknown or given twice */
		*slot = e->value;
	}
	if (id == NULL || bs_num_parse(id, strlen(id), UINT32_MAX, 0, &v) != 0 || v == 0) {
		*why = "id is the question's number (GET /pending)";
		goto out;
	}
	j->id = (unsigned)v;
	if (scope == NULL)
		scope = "session";
	if (answer == NULL || (strcmp(answer, "allow") != 0 && strcmp(answer, "deny") != 0) ||
	    (strcmp(scope, "once") != 0 && strcmp(scope, "session") != 0)) {
		*why = "answer is allow or deny, scope once or session";
		goto out;
	}
	if (answer[0] == 'a')
		j->answer = scope[0] == 'o' ? PX_ASK_ALLOW_ONCE : PX_ASK_ALLOW_SESSION;
	else
		j->answer = scope[0] == 'o' ? PX_ASK_DENY_ONCE : PX_ASK_DENY_SESSION;
	if (dur != NULL) {
		if (j->answer != PX_ASK_ALLOW_SESSION) {
			*why = "for is given only with answer=allow and scope=session";
			goto out;
		}
		if (cf_duration_parse(dur, &j->for_ms, why) != 0)
			goto out;
	}
	j->uid = peer_uid(req);
	rc = 0;
out:
	evhttp_clear_headers(&kv);
	return rc;
}

/* GET /learn's query: session=NAME.  Fills J->session (in J->query); 0,
 * or -EINVAL with one sentence in *WHY. */
static int
parse_learn(struct evhttp_request *req, struct job *j, const char **why)
{
	const char *query = evhttp_uri_get_query(evhttp_request_get_evhttp_uri(req));

	*why = "GET /learn needs ?session=NAME";
	if (query == NULL || evhttp_parse_query_str(query, &j->query) != 0 ||
	    (j->session = evhttp_find_header(&j->query, "session")) == NULL ||
	    j->session[0] == '\0')
		return -EINVAL;
	return 0;
}

/*
 * PUT or DELETE /sessions/NAME: NAME is a session's name (letters,
 * digits, '-', '_', '.', at most 64); PUT's body is the lines of its
 * [session NAME] section, as the config file writes them, judged on the
 * loop.  Fills J; 0, or -EINVAL with *WHY.
 */
static int
parse_session(struct evhttp_request *req, struct job *j, const char **why)
{
	const char *path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t n = evbuffer_get_length(in);

	j->session = path + strlen("/sessions/");
	if (!px_rtsess_name_ok(j->session) || strcmp(j->session, "default") == 0) {
		*why = "a session's name is letters, digits, '-', '_', '.', at most 64, not \"default\"";
		return -EINVAL;
	}
	if (evhttp_request_get_command(req) != EVHTTP_REQ_PUT)
		return 0;
	if (n == 0) {
		*why = "PUT /sessions/NAME takes the lines of its [session NAME] section as its body";
		return -EINVAL;
	}
	if ((j->body = malloc(n + 1)) == NULL) {
		*why = "out of memory";
		return -EINVAL;
	}
	evbuffer_copyout(in, j->body, n);
	j->body[n] = '\0';
	j->bodylen = n;
	return 0;
}

/*
 * The routes, one row each (the shape of OpenSSH's monitor dispatch
 * table): the path, the methods it takes (a 405 lists them in Allow:),
 * the job it asks of the loop, and for a route with arguments their
 * parser and the status when they are wrong.  Nothing else is served.
 */
#define ROUTE_GET (EVHTTP_REQ_GET | EVHTTP_REQ_HEAD)
#define ROUTE_POST EVHTTP_REQ_POST

typedef int route_parse_fn(struct evhttp_request *, struct job *, const char **);

static const struct route {
	const char *path;
	int methods;		/* evhttp_cmd_type bits */
	const char *allow;	/* METHODS, for Allow: */
	enum job_kind job;
	route_parse_fn *parse;	/* NULL: the route takes no arguments */
	int bad;		/* the status when PARSE refuses */
	int prefix;		/* PATH ends in '/' and the rest names a session */
	size_t max_body;	/* 0: ADMIN_MAX_BODY */
	int owner_only;		/* root and the proxy's own uid only, not admin_group */
} routes[] = {
	{ "/status",	  ROUTE_GET,  "GET, HEAD", JOB_STATUS,	NULL,	      0, 0, 0, 0 },
	{ "/metrics",	  ROUTE_GET,  "GET, HEAD", JOB_METRICS, NULL,	      0, 0, 0, 0 },
	{ "/learn",	  ROUTE_GET,  "GET, HEAD", JOB_LEARN,	parse_learn,  400, 0, 0, 0 },
	{ "/pending",	  ROUTE_GET,  "GET, HEAD", JOB_PENDING, NULL,	      0, 0, 0, 0 },
	{ "/grants",	  ROUTE_GET,  "GET, HEAD", JOB_GRANTS,	NULL,	      0, 0, 0, 0 },
	{ "/grants/save", ROUTE_POST, "POST",	   JOB_SAVE,	NULL,	      0, 0, 0, 0 },
	{ "/decide",	  ROUTE_POST, "POST",	   JOB_DECIDE,	parse_decide, 422, 0, 0, 0 },
	{ "/reload",	  ROUTE_POST, "POST",	   JOB_RELOAD,	NULL,	      0, 0, 0, 0 },
	{ "/sessions",	  ROUTE_GET,  "GET, HEAD", JOB_SESSIONS, NULL,	      0, 0, 0, 0 },
	{ "/sessions/",	  EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE, "PUT, DELETE", JOB_SESSION,
	    parse_session, 400, 1, PX_RTSESS_MAX_TEXT, 1 },
};

/* The route of PATH, or NULL. */
static const struct route *
route_find(const char *path)
{
	size_t i;

	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		size_t n = strlen(routes[i].path);
		if (routes[i].prefix ? strncmp(routes[i].path, path, n) == 0 && path[n] != '\0' :
		    strcmp(routes[i].path, path) == 0)
			return &routes[i];
	}
	return NULL;
}

/* On the admin thread: 400 without a path, 404 off the table, 405 (with
 * Allow:) for a method the route does not take, the route's own status
 * for wrong arguments; otherwise the route's job. */
static void
request_cb(struct evhttp_request *req, void *arg)
{
	struct px_admin *a = arg;
	const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(req);
	const char *path = u ? evhttp_uri_get_path(u) : NULL;
	const struct route *r;
	const char *why = NULL;
	struct job j;

	memset(&j, 0, sizeof(j));
	TAILQ_INIT(&j.query);
	if (path == NULL) {
		reply_error(req, 400, "Bad Request", NULL);
		return;
	}
	if ((r = route_find(path)) == NULL) {
		reply_error(req, 404, "Not Found", NULL);
		return;
	}
	if ((evhttp_request_get_command(req) & r->methods) == 0) {
		reply_error(req, 405, "Method Not Allowed", r->allow);
		return;
	}
	/* A session is a config section: admin_group answers questions and
	 * reads, the socket's owner (and root) alone writes the config. */
	if (r->owner_only) {
		long uid = peer_uid(req);

		if (uid < 0 || (uid != 0 && (uid_t)uid != geteuid())) {
			reply_error(req, 403, "only root and the proxy's own uid may make or end "
			    "a session", NULL);
			goto out;
		}
	}
	if (evbuffer_get_length(evhttp_request_get_input_buffer(req)) >
	    (r->max_body ? r->max_body : ADMIN_MAX_BODY)) {
		reply_error(req, 413, "Payload Too Large", NULL);
		goto out;
	}
	if (r->parse != NULL && r->parse(req, &j, &why) != 0) {
		reply_error(req, r->bad, why, NULL);
		goto out;
	}
	j.kind = r->job;
	serve_job(a, req, &j);
out:
	free(j.body);
	evhttp_clear_headers(&j.query);
}

/*
 * On the admin thread, for the metrics listener: GET or HEAD /metrics and
 * nothing else (404 for another path, 405 for another method, 413 for a
 * body), whoever connects.
 */
static void
metrics_cb(struct evhttp_request *req, void *arg)
{
	struct px_admin *a = arg;
	const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(req);
	const char *path = u ? evhttp_uri_get_path(u) : NULL;
	struct job j;

	memset(&j, 0, sizeof(j));
	TAILQ_INIT(&j.query);
	if (path == NULL || strcmp(path, "/metrics") != 0) {
		reply_error(req, 404, "Not Found", NULL);
		return;
	}
	if ((evhttp_request_get_command(req) & ROUTE_GET) == 0) {
		reply_error(req, 405, "Method Not Allowed", "GET, HEAD");
		return;
	}
	if (evbuffer_get_length(evhttp_request_get_input_buffer(req)) > 0) {
		reply_error(req, 413, "Payload Too Large", NULL);
		return;
	}
	j.kind = JOB_METRICS;
	serve_job(a, req, &j);
}

/* On the admin thread: px_admin_free() asks it to stop. */
static void
stop_cb(evutil_socket_t fd, short what, void *arg)
{
	struct px_admin *a = arg;

	(void)fd;
	(void)what;
	event_base_loopbreak(a->base);
}

static void *
admin_main(void *arg)
{
	struct px_admin *a = arg;

	event_base_dispatch(a->base);
	return NULL;
}

/* ---- life cycle ---------------------------------------------------------- */

struct px_admin *
px_admin_new(struct px_server *srv, px_reload_fn *reload, void *reload_arg)
{
	const struct cf_proxy_settings *p = cf_config_proxy(px_server_config(srv));
	struct px_admin *a = NULL;
	uid_t uid = (uid_t)-1;
	gid_t gid = (gid_t)-1;
	mode_t mode = 0600;
	int fd = -1, mfd = -1, e;

	if (p->admin.kind != CF_LISTEN_UNIX && p->metrics.kind != CF_LISTEN_TCP) {
		errno = ENOENT;
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (a == NULL)
		return NULL;
	a->srv = srv;
	a->reload = reload;
	a->reload_arg = reload_arg;
	a->stop_fd = -1;
	if (p->admin.kind != CF_LISTEN_UNIX)
		goto metrics;
	memcpy(a->path, p->admin.path, sizeof(a->path));
	a->path[sizeof(a->path) - 1] = '\0';
	/* The proxy's own uid keeps the file (so that it can remove it after
	 * the privilege drop); admin_group opens it to one group more. */
	if (p->has_user && geteuid() == 0)
		uid = p->user;
	if (p->has_admin_group) {
		gid = p->admin_group;
		mode = 0660;
	}
	fd = bind_admin(a, mode, uid, gid);
	if (fd < 0) {
		log_err_errno(-fd, "cannot listen on the admin socket %s", a->path);
		a->path[0] = '\0';
		errno = -fd;
		goto fail;
	}
metrics:
	/* Bound before anything else can fail, and like the admin socket
	 * while the process may still bind a low port. */
	if (p->metrics.kind == CF_LISTEN_TCP && (mfd = bind_metrics(&p->metrics)) < 0) {
		log_err_errno(-mfd, "%s:%d: metrics: cannot listen on %s", p->metrics.file,
		    p->metrics.line, p->metrics.text);
		errno = -mfd;
		goto fail;
	}
	errno = ENOMEM;
	if ((a->lc = px_loopcall_new(px_server_base(srv))) == NULL)
		goto fail;
	if ((a->base = event_base_new()) == NULL)
		goto fail;
	if ((a->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0)
		goto fail;
	a->stop_ev = event_new(a->base, a->stop_fd, EV_READ, stop_cb, a);
	if (a->stop_ev == NULL || event_add(a->stop_ev, NULL) != 0)
		goto fail;
	if (mfd >= 0) {
		if ((a->mhttp = evhttp_new(a->base)) == NULL)
			goto fail;
		/* Every method reaches metrics_cb, which answers 405 itself
		 * (evhttp's own refusal would be 501). */
		evhttp_set_allowed_methods(a->mhttp, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD |
		    EVHTTP_REQ_POST | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS |
		    EVHTTP_REQ_PATCH | EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT);
		evhttp_set_max_headers_size(a->mhttp, METRICS_MAX_HEADERS);
		evhttp_set_max_body_size(a->mhttp, 0);
		evhttp_set_timeout(a->mhttp, ADMIN_TIMEOUT_S);
		evhttp_set_gencb(a->mhttp, metrics_cb, a);
		if (evhttp_accept_socket_with_handle(a->mhttp, mfd) == NULL)
			goto fail;
		mfd = -1;
		log_info("metrics %s (GET /metrics only)", p->metrics.text);
	}
	if (fd < 0)
		return a;
	a->http = evhttp_new(a->base);
	if (a->http == NULL)
		goto fail;
	evhttp_set_allowed_methods(a->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD | EVHTTP_REQ_POST |
	    EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS | EVHTTP_REQ_PATCH |
	    EVHTTP_REQ_TRACE);
	evhttp_set_max_headers_size(a->http, ADMIN_MAX_HEADERS);
	evhttp_set_max_body_size(a->http, PX_RTSESS_MAX_TEXT);
	evhttp_set_timeout(a->http, ADMIN_TIMEOUT_S);
	evhttp_set_gencb(a->http, request_cb, a);
	/* evhttp takes the descriptor and closes it in evhttp_free(). */
	if (evhttp_accept_socket_with_handle(a->http, fd) == NULL)
		goto fail;
	fd = -1;
	log_info("admin socket %s (mode %04o%s)", a->path, (unsigned)mode,
	    p->has_admin_group ? ", admin_group" : "");
	return a;
fail:
	e = errno ? errno : ENOMEM;
	if (mfd >= 0)
		close(mfd);
	if (a->mhttp != NULL)
		evhttp_free(a->mhttp);
	if (fd >= 0) {
		close(fd);
		unlink(a->path);
	}
	if (a->http != NULL) {
		evhttp_free(a->http);
		unlink(a->path);
	}
	if (a->stop_ev != NULL)
		event_free(a->stop_ev);
	if (a->stop_fd >= 0)
		close(a->stop_fd);
	if (a->base != NULL)
		event_base_free(a->base);
	px_loopcall_free(a->lc);
	free(a);
	errno = e;
	return NULL;
}

int
px_admin_start(struct px_admin *a)
{
	sigset_t all, old;
	int e;

	/* Signals are the loop's business (libevent's handlers write to its
	 * own socket pair); the admin thread takes none. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&a->thread, NULL, admin_main, a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e != 0) {
		errno = e;
		return -e;
	}
	a->started = 1;
	return 0;
}

void
px_admin_free(struct px_admin *a)
{
	if (a == NULL)
		return;
	if (a->started) {
		uint64_t one = 1;
		ssize_t w;

		/* A request waiting for the loop (which no longer runs) is
		 * answered 503 first, so that the thread can see the stop. */
		px_loopcall_close(a->lc);
		w = write(a->stop_fd, &one, sizeof(one));
		(void)w;
		pthread_join(a->thread, NULL);
	}
	if (a->http != NULL)
		evhttp_free(a->http);
	if (a->mhttp != NULL)
		evhttp_free(a->mhttp);
	event_free(a->stop_ev);
	close(a->stop_fd);
	event_base_free(a->base);
	px_loopcall_free(a->lc);
	if (a->path[0] != '\0' && unlink(a->path) != 0 && errno != ENOENT)
		log_warn("cannot remove %s", a->path);
	if (a->made_dir) {
		char dir[sizeof(a->path)], *slash;
		memcpy(dir, a->path, sizeof(dir));
		slash = strrchr(dir, '/');
		if (slash != NULL && slash != dir) {
			*slash = '\0';
			/* Only when empty: the listeners may share it. */
			(void)rmdir(dir);
		}
	}
	free(a);
}

void
px_admin_set_sessions(struct px_admin *a, px_session_fn *session)
{
	a->session = session;
}

const char *
px_admin_path(const struct px_admin *a)
{
	return a->path;
}
