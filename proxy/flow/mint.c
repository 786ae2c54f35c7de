/*
 * proxy/flow/mint.c: minted credentials and their cache (see mint.h).
 *
 * An entry is made the first time a session needs a secret's token and
 * lives as long as the process.  Its token, refresh token and waiters are
 * guarded by the module's one lock; a mint in flight is a px_fetch on the
 * minting server's loop, which only that loop touches.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <event2/event.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "base/filewrite.h"
#include "conf/config.h"
#include "conf/secmem.h"
#include "conf/secret.h"
#include "proxy/core/lock.h"
#include "proxy/core/log.h"
#include "proxy/core/server.h"
#include "proxy/flow/fetch.h"
#include "proxy/flow/mint.h"
#include "proxy/proto/mintmsg.h"

/* The whole exchange with an endpoint, at most. */
#define MINT_TIMEOUT_MS 10000
/* A token with no expires_in is taken as good for this long. */
#define MINT_DEFAULT_LIFE 3600

struct px_mint_wait {
	struct entry *e;
	struct event *ev;       /* on the waiter's loop, made active when done */
	px_mint_cb *cb;
	void *arg;
	int done, ok;
	char err[300];
	struct px_mint_wait *next;
};

struct entry {
	char *key;              /* secret NUL session, then what the mint depends on */
	char secret[72];
	char session[72];       /* a github-app's; "" for an oauth2 token */
	int github;             /* kind = github-app */
	/* Where a github-app token is revoked, as minted. */
	char api_host[256];
	uint16_t api_port;
	char api_prefix[1024];
	char *token;            /* secure heap, PX_MINT_TOKEN_MAX + 1; "" when none */
	size_t tlen;
	char *refresh;          /* the refresh token in use (rotated), "" when none */
	size_t rlen;
	int refresh_loaded;     /* REFRESH was taken from the config or state_dir */
	double refresh_at, use_until;
	unsigned long gen;
	struct px_fetch *fetch; /* the mint in flight */
	struct px_server *minter;
	char *state_path;       /* where a rotated refresh token is kept, or NULL */
	char conf_hash[65];     /* SHA-256 of the config's refresh token, hex, or "-" */
	struct px_mint_wait *waiters;
	struct entry *next;
};

static pthread_mutex_t mint_lock = PX_LOCK_INIT;
static struct entry *entries;

static int mint_start(struct entry *e, struct px_server *srv, const struct cf_secret *sec,
    char *err, size_t errsz);
static void mint_done(void *arg, int status, const char *body, size_t blen, const char *err);
static int github_start(struct entry *e, struct px_server *srv, const struct cf_secret *sec,
    char *err, size_t errsz);

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
px_mint_kind(const struct cf_secret *sec)
{
	return cf_secret_kind(sec) == CF_SECRET_OAUTH2 || cf_secret_kind(sec) == CF_SECRET_GITHUB_APP;
}

/* The entry's key for SEC and SESSION: an oauth2 token is the secret's. */
static int
entry_key(const char *session, const struct cf_secret *sec, char *out, size_t size)
{
	const char *u = cf_secret_mint(sec, CF_MINT_TOKEN_URL), *id = cf_secret_mint(sec, CF_MINT_CLIENT_ID);
	const char *scope = cf_secret_mint(sec, CF_MINT_SCOPE);
	int n;

	if (cf_secret_kind(sec) == CF_SECRET_GITHUB_APP) {
		/* One token per session, for its repositories only. */
		const char *api = cf_secret_mint(sec, CF_MINT_API_URL);
		n = snprintf(out, size, "%s\n%s\n%s\n%s\n%s", cf_secret_name(sec), session,
		    api ? api : "", cf_secret_mint(sec, CF_MINT_APP_ID),
		    cf_secret_mint(sec, CF_MINT_INSTALLATION));
		return n < 0 || (size_t)n >= size ? -1 : 0;
	}
	n = snprintf(out, size, "%s\n\n%s\n%s\n%s", cf_secret_name(sec), u ? u : "", id ? id : "",
	    scope ? scope : "");
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

static struct entry *
entry_find(const char *key)
{
	struct entry *e;

	for (e = entries; e != NULL; e = e->next)
		if (strcmp(e->key, key) == 0)
			return e;
	return NULL;
}

static struct entry *
entry_get(const char *session, const struct cf_secret *sec)
{
	char key[2048];
	struct entry *e;

	if (entry_key(session, sec, key, sizeof(key)) != 0)
		return NULL;
	if ((e = entry_find(key)) != NULL)
		return e;
	if ((e = calloc(1, sizeof(*e))) == NULL)
		return NULL;
	e->key = strdup(key);
	e->token = cf_secmem_alloc(PX_MINT_TOKEN_MAX + 1);
	e->refresh = cf_secmem_alloc(PX_MINT_TOKEN_MAX + 1);
	if (e->key == NULL || e->token == NULL || e->refresh == NULL) {
		free(e->key);
		OPENSSL_secure_clear_free(e->token, PX_MINT_TOKEN_MAX + 1);
		OPENSSL_secure_clear_free(e->refresh, PX_MINT_TOKEN_MAX + 1);
		free(e);
		return NULL;
	}
	snprintf(e->secret, sizeof(e->secret), "%s", cf_secret_name(sec));
	e->github = cf_secret_kind(sec) == CF_SECRET_GITHUB_APP;
	if (e->github)
		snprintf(e->session, sizeof(e->session), "%s", session);
	e->next = entries;
	entries = e;
	return e;
}

long
px_mint_token(struct px_server *srv, const char *session, const struct cf_secret *sec,
    char *out, size_t size, unsigned long *gen)
{
	PX_LOCKED(&mint_lock);
	struct entry *e = entry_get(session, sec);
	double t = now();

	if (e == NULL || e->tlen == 0 || t >= e->use_until || e->tlen + 1 > size)
		return 0;
	memcpy(out, e->token, e->tlen + 1);
	*gen = e->gen;
	if (t >= e->refresh_at && e->fetch == NULL) {
		/* A refresh in the background: nobody waits for it. */
		char err[300];
		if (mint_start(e, srv, sec, err, sizeof(err)) != 0)
			log_warnx("secret %s: %s", e->secret, err);
	}
	return (long)e->tlen;
}

/* ---- the refresh token kept in state_dir -------------------------------- */

static void
hex_sha256(const char *s, size_t n, char out[65])
{
	unsigned char md[32];
	unsigned int ml = 0;
	size_t i;

	if (s == NULL || n == 0 || EVP_Digest(s, n, md, &ml, EVP_sha256(), NULL) != 1) {
		snprintf(out, 65, "-");
		return;
	}
	for (i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* Take E's refresh token: the one kept in state_dir when the config's is
 * still the one it replaced, else the config's. */
static void
refresh_load(struct entry *e, const struct cf_secret *sec, const char *state_dir)
{
	const char *conf;
	size_t clen = 0;
	char buf[PX_MINT_TOKEN_MAX + 80];
	ssize_t n;
	int fd;

	conf = cf_secret_refresh_token(sec, &clen);
	hex_sha256(conf, clen, e->conf_hash);
	e->refresh_loaded = 1;
	e->rlen = 0;
	e->refresh[0] = '\0';
	if (conf != NULL && clen <= PX_MINT_TOKEN_MAX) {
		memcpy(e->refresh, conf, clen + 1);
		e->rlen = clen;
	}
	free(e->state_path);
	e->state_path = NULL;
	if (state_dir == NULL || conf == NULL ||
	    asprintf(&e->state_path, "%s/oauth2-%s.refresh", state_dir, e->secret) < 0) {
		e->state_path = NULL;
		return;
	}
	fd = open(e->state_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 66 && memcmp(buf, e->conf_hash, 64) == 0 && buf[64] == ' ') {
		size_t tl = (size_t)n - 65;

		if (tl > 0 && buf[65 + tl - 1] == '\n')
			tl--;
		if (tl > 0 && tl <= PX_MINT_TOKEN_MAX) {
			memcpy(e->refresh, buf + 65, tl);
			e->refresh[tl] = '\0';
			e->rlen = tl;
			log_info("secret %s: the refresh token kept in state_dir is used", e->secret);
		}
	} else if (n > 0) {
		log_info("secret %s: the refresh token kept in state_dir is not used: the config "
		    "gives another", e->secret);
	}
	OPENSSL_cleanse(buf, sizeof(buf));
}

/* Keep E's refresh token in its state file: "HASH TOKEN\n", 0600, a
 * temporary file renamed over it. */
static void
refresh_save(struct entry *e)
{
	size_t len;
	char *text;
	int rc;

	if (e->state_path == NULL)
		return;
	len = 64 + 1 + e->rlen + 1;
	if ((text = cf_secmem_alloc(len + 1)) == NULL)
		return;
	memcpy(text, e->conf_hash, 64);
	text[64] = ' ';
	memcpy(text + 65, e->refresh, e->rlen);
	text[65 + e->rlen] = '\n';
	if ((rc = bs_file_replace(e->state_path, text, len)) != 0)
		log_warnx("secret %s: cannot keep the rotated refresh token in %s: %s", e->secret,
		    e->state_path, strerror(-rc));
	OPENSSL_secure_clear_free(text, len + 1);
}

/* ---- minting --------------------------------------------------------------- */

/* Tell E's waiters the mint ended (OK, or ERR), each on its own loop.
 * Under the lock. */
static void
wake(struct entry *e, int ok, const char *err)
{
	struct px_mint_wait *w;

	for (w = e->waiters; w != NULL; w = w->next) {
		if (w->done)
			continue;
		w->done = 1;
		w->ok = ok;
		snprintf(w->err, sizeof(w->err), "%s", err != NULL ? err : "");
		event_active(w->ev, EV_READ, 0);
	}
}

static void
mint_done(void *arg, int status, const char *body, size_t blen, const char *err)
{
	PX_LOCKED(&mint_lock);
	struct entry *e = arg;
	struct px_mint_token *tok;
	const char *why = NULL;
	char msg[300];
	double t = now(), life;
	int rotated = 0;

	e->fetch = NULL;
	e->minter = NULL;
	if (status == 0) {
		snprintf(msg, sizeof(msg), "the token endpoint failed: %s", err);
		log_warnx("secret %s: %s", e->secret, msg);
		wake(e, 0, msg);
		return;
	}
	if ((tok = (struct px_mint_token *)cf_secmem_alloc(sizeof(*tok))) == NULL) {
		wake(e, 0, "out of memory");
		return;
	}
	if (px_mint_token_parse(body, blen, tok, &why) != 0) {
		snprintf(msg, sizeof(msg), "the token endpoint answered %d with a body that %s", status, why);
	} else if ((status != 200 && !(e->github && status == 201)) || tok->access_token[0] == '\0') {
		snprintf(msg, sizeof(msg), "the token endpoint answered %d%s%s%s%s%s", status,
		    tok->error[0] ? ": " : " without an access token", tok->error,
		    tok->error_description[0] ? " (" : "", tok->error_description,
		    tok->error_description[0] ? ")" : "");
	} else if (tok->token_type[0] != '\0' && strcasecmp(tok->token_type, "bearer") != 0) {
		snprintf(msg, sizeof(msg), "the token endpoint gave a token of type %s, not Bearer",
		    tok->token_type);
	} else {
		msg[0] = '\0';
	}
	if (msg[0] != '\0') {
		log_warnx("secret %s: %s", e->secret, msg);
		OPENSSL_secure_clear_free(tok, sizeof(*tok));
		wake(e, 0, msg);
		return;
	}
	e->tlen = strlen(tok->access_token);
	memcpy(e->token, tok->access_token, e->tlen + 1);
	e->gen++;
	life = tok->expires_in >= 0 ? (double)tok->expires_in : MINT_DEFAULT_LIFE;
	{
		time_t at;
		if (tok->expires_at[0] != '\0' && px_mint_time_parse(tok->expires_at, &at) == 0)
			life = difftime(at, time(NULL)) > 0 ? difftime(at, time(NULL)) : 0;
	}
	/* Refreshed when half its life or five minutes are left, given
	 * until a quarter or a minute is. */
	e->refresh_at = t + life - (life / 2 < 300 ? life / 2 : 300);
	e->use_until = t + life - (life / 4 < 60 ? life / 4 : 60);
	if (tok->refresh_token[0] != '\0' && strcmp(tok->refresh_token, e->refresh) != 0) {
		e->rlen = strlen(tok->refresh_token);
		memcpy(e->refresh, tok->refresh_token, e->rlen + 1);
		refresh_save(e);
		rotated = 1;
	}
	log_info("secret %s: minted %s good for %.0f s%s%s", e->secret,
	    e->github ? "an installation token" : "an access token", life,
	    e->github ? " for session " : "", e->github ? e->session : "");
	if (rotated)
		log_info("secret %s: the refresh token was rotated", e->secret);
	OPENSSL_secure_clear_free(tok, sizeof(*tok));
	wake(e, 1, NULL);
}

/* The base64 of the N bytes at S into OUT. */
static void
b64(const char *s, size_t n, char *out)
{
	EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)s, (int)n);
}

/* Start minting E for SEC on SRV's loop.  Under the lock.  Returns 0 or
 * -1 with ERR. */
static int
mint_start(struct entry *e, struct px_server *srv, const struct cf_secret *sec, char *err,
    size_t errsz)
{
	const struct cf_proxy_settings *p = cf_config_proxy(px_server_config(srv));
	const char *u = cf_secret_mint(sec, CF_MINT_TOKEN_URL), *id = cf_secret_mint(sec, CF_MINT_CLIENT_ID);
	const char *scope = cf_secret_mint(sec, CF_MINT_SCOPE), *why = NULL, *cs;
	struct px_mint_url url;
	size_t cslen = 0, used = 0, rlen, idl = 0;
	char hostport[300];
	char *body, *req, *cred = NULL, *cred64 = NULL;
	int n, rc = -1;

	if (cf_secret_kind(sec) == CF_SECRET_GITHUB_APP)
		return github_start(e, srv, sec, err, errsz);
	if (px_mint_url_parse(u, &url, &why) != 0) {
		snprintf(err, errsz, "token_url %s", why);
		return -1;
	}
	if (e->refresh_loaded) {
		/* A reload that gives another refresh token (from a file)
		 * starts over from it. */
		char h[65];
		const char *conf = cf_secret_refresh_token(sec, &cslen);
		hex_sha256(conf, cslen, h);
		if (strcmp(h, e->conf_hash) != 0)
			e->refresh_loaded = 0;
	}
	if (!e->refresh_loaded)
		refresh_load(e, sec, p->state_dir);
	cs = cf_secret_value(sec, &cslen);
	body = cf_secmem_alloc(3 * PX_MINT_TOKEN_MAX + 4096);
	req = cf_secmem_alloc(6 * PX_MINT_TOKEN_MAX + 8192);
	if (body == NULL || req == NULL)
		goto oom;
	if (e->rlen > 0) {
		px_mint_form_add(body, 3 * PX_MINT_TOKEN_MAX + 4096, &used, "grant_type", "refresh_token", 13);
		px_mint_form_add(body, 3 * PX_MINT_TOKEN_MAX + 4096, &used, "refresh_token", e->refresh,
		    e->rlen);
	} else {
		px_mint_form_add(body, 3 * PX_MINT_TOKEN_MAX + 4096, &used, "grant_type",
		    "client_credentials", 18);
	}
	if (scope != NULL && px_mint_form_add(body, 3 * PX_MINT_TOKEN_MAX + 4096, &used, "scope", scope,
	    strlen(scope)) != 0)
		goto oom;
	if (cs == NULL && px_mint_form_add(body, 3 * PX_MINT_TOKEN_MAX + 4096, &used, "client_id", id,
	    strlen(id)) != 0)
		goto oom;
	if (cs != NULL) {
		/* RFC 6749 §2.3.1: Basic over the form-encoded id and secret. */
		size_t cl = 3 * (strlen(id) + cslen) + 8, cu = 0;
		if ((cred = cf_secmem_alloc(cl)) == NULL || (cred64 = cf_secmem_alloc(cl * 2)) == NULL)
			goto oom;
		/* "ID=SECRET", encoded, then the '=' made the ':'. */
		px_mint_form_add(cred, cl, &cu, "", id, strlen(id));
		idl = cu;
		px_mint_form_add(cred, cl, &cu, "", cs, cslen);
		/* CRED is now "=ID&=SECRET": squeeze it to "ID:SECRET". */
		memmove(cred, cred + 1, idl - 1);
		cred[idl - 1] = ':';
		memmove(cred + idl, cred + idl + 2, cu - idl - 2);
		cu -= 2;
		cred[cu] = '\0';
		b64(cred, cu, cred64);
	}
	if (url.port != 443)
		snprintf(hostport, sizeof(hostport), "%s%s%s:%u", strchr(url.host, ':') ? "[" : "", url.host,
		    strchr(url.host, ':') ? "]" : "", url.port);
	else
		snprintf(hostport, sizeof(hostport), "%s%s%s", strchr(url.host, ':') ? "[" : "", url.host,
		    strchr(url.host, ':') ? "]" : "");
	n = snprintf(req, 6 * PX_MINT_TOKEN_MAX + 8192,
	    "POST %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: postern\r\nAccept: application/json\r\n"
	    "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: %zu\r\n"
	    "Connection: close\r\n%s%s%s\r\n%s",
	    url.path, hostport, used,
	    cred64 ? "Authorization: Basic " : "", cred64 ? cred64 : "", cred64 ? "\r\n" : "", body);
	if (n < 0 || n >= 6 * PX_MINT_TOKEN_MAX + 8192)
		goto oom;
	rlen = (size_t)n;
	e->fetch = px_fetch_start(srv, url.host, url.port, req, rlen, MINT_TIMEOUT_MS, mint_done, e);
	if (e->fetch == NULL) {
		snprintf(err, errsz, "cannot ask the token endpoint (no TLS context, or out of memory)");
		goto out;
	}
	e->minter = srv;
	rc = 0;
	goto out;
oom:
	snprintf(err, errsz, "out of memory");
out:
	if (body != NULL)
		OPENSSL_secure_clear_free(body, 3 * PX_MINT_TOKEN_MAX + 4096);
	if (req != NULL)
		OPENSSL_secure_clear_free(req, 6 * PX_MINT_TOKEN_MAX + 8192);
	if (cred != NULL)
		OPENSSL_secure_clear_free(cred, 3 * (strlen(id) + cslen) + 8);
	if (cred64 != NULL)
		OPENSSL_secure_clear_free(cred64, 2 * (3 * (strlen(id) + cslen) + 8));
	return rc;
}

/* "Host: ..." of URL. */
static void
host_header(const struct px_mint_url *url, char *out, size_t size)
{
	int v6 = strchr(url->host, ':') != NULL;

	if (url->port != 443)
		snprintf(out, size, "%s%s%s:%u", v6 ? "[" : "", url->host, v6 ? "]" : "", url->port);
	else
		snprintf(out, size, "%s%s%s", v6 ? "[" : "", url->host, v6 ? "]" : "");
}

/* Start minting E, a github-app token for its session (the snapshot's
 * github_repositories and github_permissions), on SRV's loop. */
static int
github_start(struct entry *e, struct px_server *srv, const struct cf_secret *sec, char *err,
    size_t errsz)
{
	const struct cf_session *s = cf_config_find_session(px_server_config(srv), e->session);
	const char *api = cf_secret_mint(sec, CF_MINT_API_URL), *why = NULL, *pem;
	struct px_mint_url url;
	char body[8192], jwt[4096], hostport[300];
	size_t pemlen = 0, plen;
	char *req;
	long bl, jl;
	int n, rc = -1;

	if (px_mint_url_parse(api != NULL ? api : "https://api.github.com", &url, &why) != 0) {
		snprintf(err, errsz, "api_url %s", why);
		return -1;
	}
	if (s == NULL || cf_session_github(s, 0) == NULL) {
		snprintf(err, errsz, "session %s has no github_repositories", e->session);
		return -1;
	}
	if ((pem = cf_secret_private_key(sec, &pemlen)) == NULL) {
		snprintf(err, errsz, "no private key was read");
		return -1;
	}
	if ((bl = px_mint_github_body(cf_session_github(s, 0), cf_session_github(s, 1), body,
	    sizeof(body))) < 0) {
		snprintf(err, errsz, "the list of repositories and permissions is too long");
		return -1;
	}
	if ((jl = px_mint_jwt(pem, pemlen, cf_secret_mint(sec, CF_MINT_APP_ID), time(NULL), jwt,
	    sizeof(jwt), &why)) < 0) {
		snprintf(err, errsz, "the app's JWT: %s", why);
		return -1;
	}
	/* An API below a path (GitHub Enterprise's /api/v3): no '/' twice. */
	plen = strcspn(url.path, "?");
	while (plen > 0 && url.path[plen - 1] == '/')
		plen--;
	snprintf(e->api_host, sizeof(e->api_host), "%s", url.host);
	e->api_port = url.port;
	snprintf(e->api_prefix, sizeof(e->api_prefix), "%.*s", (int)plen, url.path);
	host_header(&url, hostport, sizeof(hostport));
	if ((req = cf_secmem_alloc(16384)) == NULL) {
		OPENSSL_cleanse(jwt, sizeof(jwt));
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	n = snprintf(req, 16384, "POST %s/app/installations/%s/access_tokens HTTP/1.1\r\nHost: %s\r\n"
	    "User-Agent: postern\r\nAccept: application/vnd.github+json\r\n"
	    "X-GitHub-Api-Version: 2022-11-28\r\nAuthorization: Bearer %s\r\n"
	    "Content-Type: application/json\r\nContent-Length: %ld\r\nConnection: close\r\n\r\n%s",
	    e->api_prefix, cf_secret_mint(sec, CF_MINT_INSTALLATION), hostport, jwt, bl, body);
	OPENSSL_cleanse(jwt, sizeof(jwt));
	if (n < 0 || n >= 16384) {
		snprintf(err, errsz, "the request is too long");
	} else if ((e->fetch = px_fetch_start(srv, url.host, url.port, req, (size_t)n, MINT_TIMEOUT_MS,
	    mint_done, e)) == NULL) {
		snprintf(err, errsz, "cannot ask GitHub's API (no TLS context, or out of memory)");
	} else {
		e->minter = srv;
		rc = 0;
	}
	OPENSSL_secure_clear_free(req, 16384);
	return rc;
}

/* ---- revocation ------------------------------------------------------------ */

static unsigned revokes_pending;

struct revoke {
	char secret[72], session[72];
};

static void
revoke_done(void *arg, int status, const char *body, size_t blen, const char *err)
{
	struct revoke *r = arg;

	(void)body;
	(void)blen;
	{
		PX_LOCKED(&mint_lock);
		revokes_pending--;
	}
	if (status == 204)
		log_info("secret %s: the installation token of session %s was revoked", r->secret,
		    r->session);
	else if (status != 0)
		log_warnx("secret %s: revoking the token of session %s: GitHub answered %d", r->secret,
		    r->session, status);
	else
		log_warnx("secret %s: revoking the token of session %s: %s", r->secret, r->session, err);
	free(r);
}

/* Revoke E's token (DELETE /installation/token with it) from SRV's loop,
 * and forget it.  Under the lock. */
static void
revoke_entry(struct entry *e, struct px_server *srv)
{
	struct px_mint_url url;
	struct revoke *r;
	char hostport[300], *req;
	int n;

	if (!e->github || e->tlen == 0 || e->api_host[0] == '\0')
		return;
	snprintf(url.host, sizeof(url.host), "%s", e->api_host);
	url.port = e->api_port;
	host_header(&url, hostport, sizeof(hostport));
	req = cf_secmem_alloc(PX_MINT_TOKEN_MAX + 2048);
	r = calloc(1, sizeof(*r));
	if (req != NULL && r != NULL) {
		snprintf(r->secret, sizeof(r->secret), "%s", e->secret);
		snprintf(r->session, sizeof(r->session), "%s", e->session);
		n = snprintf(req, PX_MINT_TOKEN_MAX + 2048, "DELETE %s/installation/token HTTP/1.1\r\n"
		    "Host: %s\r\nUser-Agent: postern\r\nAccept: application/vnd.github+json\r\n"
		    "X-GitHub-Api-Version: 2022-11-28\r\nAuthorization: Bearer %s\r\n"
		    "Content-Length: 0\r\nConnection: close\r\n\r\n", e->api_prefix, hostport, e->token);
		if (n > 0 && n < PX_MINT_TOKEN_MAX + 2048 &&
		    px_fetch_start(srv, e->api_host, e->api_port, req, (size_t)n, 5000, revoke_done, r) != NULL) {
			revokes_pending++;
			r = NULL;
		}
	}
	if (r != NULL)
		log_warnx("secret %s: the token of session %s could not be revoked: out of memory",
		    e->secret, e->session);
	free(r);
	if (req != NULL)
		OPENSSL_secure_clear_free(req, PX_MINT_TOKEN_MAX + 2048);
	OPENSSL_cleanse(e->token, e->tlen);
	e->tlen = 0;
	e->use_until = e->refresh_at = 0;
}

void
px_mint_session_ended(struct px_server *srv, const char *session)
{
	PX_LOCKED(&mint_lock);
	struct entry *e;

	for (e = entries; e != NULL; e = e->next)
		if (e->github && strcmp(e->session, session) == 0)
			revoke_entry(e, srv);
}

void
px_mint_revoke_all(struct px_server *srv, unsigned timeout_ms)
{
	struct timespec t0, t;
	unsigned pending;

	{
		PX_LOCKED(&mint_lock);
		struct entry *e;

		for (e = entries; e != NULL; e = e->next)
			revoke_entry(e, srv);
		pending = revokes_pending;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* The loop has stopped: turn it until the answers are in, or the
	 * time is up. */
	while (pending > 0) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >= (long)timeout_ms)
			break;
		event_base_loop(px_server_base(srv), EVLOOP_ONCE | EVLOOP_NONBLOCK);
		usleep(5000);
		PX_LOCKED(&mint_lock);
		pending = revokes_pending;
	}
	if (pending > 0)
		log_warnx("%u installation token%s not revoked in time", pending, pending == 1 ? "" : "s");
}

/* W's mint ended: on W's own loop now. */
static void
wait_fire(evutil_socket_t fd, short what, void *arg)
{
	struct px_mint_wait *w = arg, **pp;
	char err[sizeof(w->err)];
	int ok;

	(void)fd;
	(void)what;
	{
		PX_LOCKED(&mint_lock);
		for (pp = &w->e->waiters; *pp != NULL && *pp != w; pp = &(*pp)->next)
			;
		if (*pp == w)
			*pp = w->next;
		ok = w->ok;
		memcpy(err, w->err, sizeof(err));
	}
	event_free(w->ev);
	w->cb(w->arg, ok, err);
	free(w);
}

struct px_mint_wait *
px_mint_wait(struct px_server *srv, const char *session, const struct cf_secret *sec,
    px_mint_cb *cb, void *arg)
{
	PX_LOCKED(&mint_lock);
	struct entry *e = entry_get(session, sec);
	struct px_mint_wait *w;
	char err[300];

	if (e == NULL || (w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->e = e;
	w->cb = cb;
	w->arg = arg;
	if ((w->ev = event_new(px_server_base(srv), -1, 0, wait_fire, w)) == NULL) {
		free(w);
		return NULL;
	}
	w->next = e->waiters;
	e->waiters = w;
	if (e->fetch == NULL && mint_start(e, srv, sec, err, sizeof(err)) != 0) {
		log_warnx("secret %s: %s", e->secret, err);
		/* Told on the next loop iteration, never inside this call. */
		wake(e, 0, err);
	}
	return w;
}

void
px_mint_wait_cancel(struct px_mint_wait *w)
{
	struct px_mint_wait **pp;

	if (w == NULL)
		return;
	{
		PX_LOCKED(&mint_lock);
		for (pp = &w->e->waiters; *pp != NULL && *pp != w; pp = &(*pp)->next)
			;
		if (*pp == w)
			*pp = w->next;
	}
	event_free(w->ev);
	free(w);
}

void
px_mint_rejected(const char *session, const char *secret, unsigned long gen)
{
	PX_LOCKED(&mint_lock);
	struct entry *e;

	for (e = entries; e != NULL; e = e->next)
		if (strcmp(e->secret, secret) == 0 && e->gen == gen && e->tlen > 0 &&
		    (!e->github || strcmp(e->session, session) == 0)) {
			OPENSSL_cleanse(e->token, e->tlen);
			e->tlen = 0;
			log_info("secret %s: the upstream refused its access token (401): dropped",
			    e->secret);
		}
}

void
px_mint_server_gone(struct px_server *srv)
{
	PX_LOCKED(&mint_lock);
	struct entry *e;

	for (e = entries; e != NULL; e = e->next)
		if (e->fetch != NULL && e->minter == srv) {
			px_fetch_cancel(e->fetch);
			e->fetch = NULL;
			e->minter = NULL;
			wake(e, 0, "the proxy is stopping");
		}
}
