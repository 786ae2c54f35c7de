/*
 * proxy/flow/minthold.c: requests that wait for a minted token (see
 * minthold.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include "conf/config.h"
#include "conf/decide.h"
#include "conf/inject.h"
#include "conf/secret.h"
#include "proxy/flow/conn.h"
#include "proxy/flow/mint.h"
#include "proxy/flow/minthold.h"
#include "proxy/proto/mintmsg.h"

long
px_minthold_value(struct px_conn *c, size_t i, char *out, size_t size)
{
	const struct cf_secret *sec = cf_session_secret(c->sess, i);
	unsigned long gen = 0;
	long n;

	if (sec == NULL)
		return -EAGAIN;
	n = px_mint_token(c->srv, c->session, sec, out, size, &gen);
	if (n <= 0)
		return -EAGAIN;
	if (c->tm->mint_secret[0] == '\0') {
		snprintf(c->tm->mint_secret, sizeof(c->tm->mint_secret), "%s", cf_secret_name(sec));
		c->tm->mint_gen = gen;
	}
	return n;
}

/* The held request's mint ended. */
static void
mint_cb(void *arg, int ok, const char *err)
{
	struct px_conn *c = arg;
	const struct cf_secret *sec = cf_session_secret(c->sess, c->req.mint_sec);
	char d[sizeof(c->req.dec.detail)];

	c->req.mintw = NULL;
	if (ok && c->req.mint_tries < 2) {
		c->req.mint_resume(c);
		return;
	}
	snprintf(d, sizeof(d), "secret %s: no credential could be had for this request: %s",
	    sec != NULL ? cf_secret_name(sec) : "?", ok ? "the token minted expired at once" : err);
	px_conn_refuse(c, 503, CF_R_CREDENTIAL_UNAVAILABLE, c->req.dec.rule, d);
}

/* A mint outlives its own deadline only if the loop stalls: refuse. */
static void
mint_backstop(struct px_conn *c)
{
	px_mint_wait_cancel(c->req.mintw);
	c->req.mintw = NULL;
	px_conn_refuse(c, 503, CF_R_CREDENTIAL_UNAVAILABLE, c->req.dec.rule,
	    "no credential could be had for this request in time");
}

static const struct px_phase mint_phase = {
	.name = "mint", .cli_event = px_conn_event_close, .up_read = px_conn_held_up_read, .up_event = px_conn_held_up_event,
	.timeout = mint_backstop,
};

void
px_minthold(struct px_conn *c, size_t i, void (*resume)(struct px_conn *c))
{
	const struct cf_secret *sec = cf_session_secret(c->sess, i);

	c->req.mint_sec = i;
	c->req.mint_resume = resume;
	c->req.mint_tries++;
	bufferevent_disable(c->cli.bev, EV_READ);
	px_conn_enter(c, &mint_phase);
	px_conn_arm_timer(c, 30000);
	c->req.mintw = px_mint_wait(c->srv, c->session, sec, mint_cb, c);
	if (c->req.mintw == NULL)
		px_conn_free(c, "out of memory");
}

void
px_minthold_answer(struct px_conn *c, int status)
{
	if (status == 401 && c->tm != NULL && c->tm->mint_secret[0] != '\0')
		px_mint_rejected(c->session, c->tm->mint_secret, c->tm->mint_gen);
}

int
px_minthold_bound(const struct px_conn *c)
{
	size_t i, k, n = cf_session_nsecrets(c->sess);

	for (i = 0; i < n; i++) {
		const struct cf_secret *sec = cf_session_secret(c->sess, i);

		if (!px_mint_kind(sec))
			continue;
		for (k = 0; k < cf_secret_ninject(sec); k++) {
			const struct cf_inject *inj = cf_secret_inject(sec, k);

			if (inj->port == c->tm->port && strcmp(inj->host, c->tm->host.name) == 0)
				return 1;
		}
	}
	return 0;
}

int
px_minthold_repo_refused(struct px_conn *c, const char *path, size_t len)
{
	size_t i, k, n = cf_session_nsecrets(c->sess);
	char repo[256], d[sizeof(c->req.dec.detail)];

	for (i = 0; i < n; i++) {
		const struct cf_secret *sec = cf_session_secret(c->sess, i);
		const char *list = cf_session_github(c->sess, 0);

		if (cf_secret_kind(sec) != CF_SECRET_GITHUB_APP || list == NULL)
			continue;
		for (k = 0; k < cf_secret_ninject(sec); k++) {
			const struct cf_inject *inj = cf_secret_inject(sec, k);
			int rc;

			if (inj->port != c->tm->port || strcmp(inj->host, c->tm->host.name) != 0)
				continue;
			rc = px_mint_github_repo(path, len, inj->kind == CF_INJECT_HEADER, repo, sizeof(repo));
			if (rc == 0 || (rc == 1 && px_mint_repo_listed(list, repo)))
				continue;
			if (rc < 0)
				snprintf(d, sizeof(d), "secret %s: the path names a repository in a form postern "
				    "does not read (%%-escapes, dot segments), and session %s may reach only %s",
				    cf_secret_name(sec), c->session, list);
			else
				snprintf(d, sizeof(d), "secret %s: repository %s is not one of session %s's "
				    "github_repositories (%s)", cf_secret_name(sec), repo, c->session, list);
			px_conn_refuse(c, 403, CF_R_REPOSITORY_NOT_ALLOWED, c->req.dec.rule, d);
			return 1;
		}
	}
	return 0;
}
