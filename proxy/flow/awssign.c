/*
 * proxy/flow/awssign.c: AWS SigV4 requests re-signed with the real keys
 * inside a terminated tunnel (see awssign.h).  The sandbox signs with the
 * placeholders its session got (an access key id, a secret key, a session
 * token); the access key id names the session, and only a request that
 * carries this session's is signed again.  The real secret key is read
 * only by px_sigv4_sign(), which wipes every key it derives.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "conf/awskey.h"
#include "conf/config.h"
#include "conf/secret.h"
#include "proxy/admin/stats.h"
#include "proxy/flow/awssign.h"
#include "proxy/flow/conn.h"
#include "proxy/proto/http.h"
#include "proxy/proto/scrub.h"
#include "proxy/proto/sigv4.h"

/* The most body held to hash it (no x-amz-content-sha256). */
#define BODY_MAX (1024 * 1024)

/* What the last request signed on this thread points into: its head is
 * built before the next one is read. */
static _Thread_local struct {
	const struct px_conn *c;
	const char *secret;
	char auth[PX_SIGV4_SIGNED_MAX + 512];
	char *target;
} last;

/* term_resume(), the same on every thread. */
static _Thread_local void (*resume_fn)(struct px_conn *);

int
px_awssign_host(const struct px_conn *c)
{
	return c->sess != NULL && c->tm != NULL &&
	    cf_session_aws_secret(c->sess, c->tm->host.name, c->tm->port) >= 0;
}

int
px_awssign_scrub(const struct px_conn *c, const struct cf_secret *sec, struct px_scrub **scrub)
{
	const struct cf_aws *aws = cf_secret_aws(sec);
	const char *token;
	size_t tlen = 0;

	if (aws == NULL || !cf_aws_binds(aws, c->tm->host.name, c->tm->port) ||
	    (token = cf_aws_token(aws, &tlen)) == NULL)
		return 0;
	if (*scrub == NULL && (*scrub = px_scrub_new()) == NULL)
		return -ENOMEM;
	return px_scrub_add(*scrub, cf_secret_name(sec), token, tlen) == -ENOMEM ? -ENOMEM : 0;
}

static int
is(const struct px_http_header *h, const char *name)
{
	size_t nl = strlen(name);

	return h->name_len == nl && strncasecmp(h->name, name, nl) == 0;
}

/* The only header of REQ named NAME, or NULL; *MANY when there are more. */
static struct px_http_header *
one_header(struct px_http_request *req, const char *name, int *many)
{
	struct px_http_header *f = NULL;
	size_t i;

	for (i = 0; i < req->nheaders; i++)
		if (is(&req->headers[i], name)) {
			if (f != NULL)
				*many = 1;
			f = &req->headers[i];
		}
	return f;
}

/* Refuse C's request with STATUS: WHAT (a sentence), about secret SEC. */
static int
refuse(struct px_conn *c, int status, const struct cf_secret *sec, const char *what)
{
	char d[sizeof(c->req.dec.detail)];

	snprintf(d, sizeof(d), "%s (secret %s, kind aws-sigv4, re-signs only requests signed with this "
	    "session's $%s and $AWS_SECRET_ACCESS_KEY)", what, cf_secret_name(sec),
	    cf_secret_placeholder_env(sec));
	px_conn_refuse(c, status, CF_R_SECRET_SIGNATURE, c->req.dec.rule, d);
	return 1;
}

/* ---- a body held to hash it --------------------------------------------- */

static void
body_read(struct bufferevent *bev, void *arg)
{
	struct px_conn *c = arg;

	(void)bev;
	px_conn_touch(c);
	resume_fn(c);
}

static const struct px_phase body_phase = {
	.name = "aws-body", .cli_read = body_read, .cli_event = px_conn_event_close,
	.up_read = px_conn_held_up_read, .up_event = px_conn_held_up_event, .timeout = px_conn_idle_timeout,
};

/* The SHA-256 of the LEN bytes after the head in C's input, as hex into
 * OUT.  Returns 0 or -EIO. */
static int
hash_body(struct px_conn *c, size_t head_len, size_t len, char out[65])
{
	static const char digits[] = "0123456789abcdef";
	struct evbuffer *in = bufferevent_get_input(c->cli.bev);
	struct evbuffer_ptr pos;
	struct evbuffer_iovec v[16];
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char md[32];
	unsigned int mdlen = 0;
	int rc = -EIO, i, n;

	if (ctx == NULL || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
		goto out;
	if (len > 0 && evbuffer_ptr_set(in, &pos, head_len, EVBUFFER_PTR_SET) != 0)
		goto out;
	while (len > 0) {
		n = evbuffer_peek(in, (ev_ssize_t)len, &pos, v, 16);
		if (n <= 0)
			goto out;
		for (i = 0; i < n && i < 16 && len > 0; i++) {
			size_t l = v[i].iov_len < len ? v[i].iov_len : len;
			if (EVP_DigestUpdate(ctx, v[i].iov_base, l) != 1)
				goto out;
			len -= l;
			if (evbuffer_ptr_set(in, &pos, l, EVBUFFER_PTR_ADD) != 0 && len > 0)
				goto out;
		}
	}
	if (EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 || mdlen != 32)
		goto out;
	for (i = 0; i < 32; i++) {
		out[2 * i] = digits[md[i] >> 4];
		out[2 * i + 1] = digits[md[i] & 15];
	}
	out[64] = '\0';
	rc = 0;
out:
	EVP_MD_CTX_free(ctx);
	return rc;
}

/* ---- the request ---------------------------------------------------------- */

/* The payload hash of REQ into OUT: its x-amz-content-sha256, or
 * UNSIGNED-PAYLOAD for a presigned request without one, or its body's
 * hash.  Returns 0, 1 after refusing C, or 2 when the body is held. */
static int
payload(struct px_conn *c, struct px_http_request *req, size_t head_len, const struct cf_secret *sec,
    int presigned, char out[65])
{
	struct px_http_header *f;
	int many = 0;
	size_t cl;

	f = one_header(req, "x-amz-content-sha256", &many);
	if (many)
		return refuse(c, 400, sec, "the request has two x-amz-content-sha256 headers");
	if (f != NULL) {
		if (f->value_len >= 10 && memcmp(f->value, "STREAMING-", 10) == 0 &&
		    !px_sigv4_payload_ok(f->value, f->value_len))
			return refuse(c, 403, sec, "the body is sent in signed chunks "
			    "(x-amz-content-sha256: STREAMING-AWS4-HMAC-SHA256-PAYLOAD), whose every chunk "
			    "would need signing again, which postern does not do: sign the payload whole, or "
			    "send UNSIGNED-PAYLOAD (the aws CLI and SDKs do over HTTPS)");
		if (!px_sigv4_payload_ok(f->value, f->value_len))
			return refuse(c, 400, sec, "x-amz-content-sha256 is not 64 lower-case hex digits, "
			    "UNSIGNED-PAYLOAD or STREAMING-UNSIGNED-PAYLOAD-TRAILER");
		memcpy(out, f->value, f->value_len);
		out[f->value_len] = '\0';
		return 0;
	}
	if (presigned) {
		strcpy(out, PX_SIGV4_UNSIGNED);
		return 0;
	}
	if (req->chunked)
		return refuse(c, 411, sec, "the body is chunked and the request has no x-amz-content-sha256: "
		    "its hash, which the signature covers, cannot be known before it is sent");
	cl = req->content_length > 0 ? (size_t)req->content_length : 0;
	if (cl > BODY_MAX)
		return refuse(c, 413, sec, "the request has no x-amz-content-sha256, so its body is hashed "
		    "before it is sent, and it is larger than the 1 MiB postern holds for that");
	if (evbuffer_get_length(bufferevent_get_input(c->cli.bev)) < head_len + cl) {
		px_conn_enter(c, &body_phase);
		bufferevent_enable(c->cli.bev, EV_READ);
		px_conn_arm_timer(c, px_conn_settings(c)->idle_timeout_ms);
		return 2;
	}
	if (hash_body(c, head_len, cl, out) != 0) {
		px_conn_free(c, "out of memory");
		return 1;
	}
	return 0;
}

int
px_awssign_request(struct px_conn *c, struct px_http_request *req, size_t head_len,
    void (*resume)(struct px_conn *))
{
	long idx = cf_session_aws_secret(c->sess, c->tm->host.name, c->tm->port);
	const struct cf_secret *sec;
	const struct cf_aws *aws;
	struct px_http_header *authz = NULL, *date = NULL, *tok = NULL;
	struct px_sigv4_auth a, q;
	struct px_sigv4_header *hs = NULL;
	const char *why = NULL, *ph, *secret, *token, *amz_date;
	char pl[65], hosthdr[CF_HOST_MAX + 8], sig[65], *cr = NULL, *t = NULL;
	size_t i, nh = 0, crlen = 0, slen = 0, tlen = 0, tl;
	int many = 0, r, rq, s3, rc = 1;

	resume_fn = resume;
	if (last.c == c)
		last.c = NULL;
	if (last.target != NULL) {
		OPENSSL_cleanse(last.target, strlen(last.target));
		free(last.target);
		last.target = NULL;
	}
	if (idx < 0)
		return 0;
	sec = cf_session_secret(c->sess, (size_t)idx);
	aws = cf_secret_aws(sec);
	ph = cf_session_placeholder(c->sess, (size_t)idx);
	secret = cf_secret_value(sec, &slen);
	if (aws == NULL || ph == NULL || secret == NULL || cf_aws_key_id(aws) == NULL)
		return 0;
	authz = one_header(req, "authorization", &many);
	if (many)
		return refuse(c, 400, sec, "the request has two Authorization headers");
	r = authz != NULL ? px_sigv4_parse_header(authz->value, authz->value_len, &a, &why) : 0;
	if (r < 0)
		return refuse(c, 400, sec, why);
	rq = px_sigv4_parse_query(req->path, req->path_len, &q, &why);
	if (rq < 0)
		return refuse(c, 400, sec, why);
	if (rq == 1 && r == 0)
		a = q;
	if (r == 1 && rq == 1)
		return refuse(c, 400, sec, "the request is signed both in its Authorization header and in "
		    "its query");
	if (r == 0 && rq == 0)
		return 0; /* not signed: nothing of the secret goes on it */
	/* The key id names the session: one of another session, the real
	 * one, or any other is refused, and none is shown. */
	if (strlen(a.cred.key_id) != strlen(ph) || CRYPTO_memcmp(a.cred.key_id, ph, strlen(ph)) != 0)
		return refuse(c, 403, sec, "the request is signed with an access key id that is not this "
		    "session's placeholder");
	if ((r = payload(c, req, head_len, sec, a.presigned, pl)) != 0)
		return 1;
	if (!a.presigned) {
		date = one_header(req, "x-amz-date", &many);
		if (date == NULL || many || date->value_len != 16 || memcmp(date->value, a.cred.date, 8) != 0)
			return refuse(c, 400, sec, "a request signed in its Authorization header needs one "
			    "X-Amz-Date on the credential's date");
		memcpy(a.amz_date, date->value, 16);
		a.amz_date[16] = '\0';
	}
	amz_date = a.amz_date;
	token = cf_aws_token(aws, &tlen);
	snprintf(a.cred.key_id, sizeof(a.cred.key_id), "%s", cf_aws_key_id(aws));

	/* The session token: the real one replaces the placeholder. */
	many = 0;
	tok = one_header(req, "x-amz-security-token", &many);
	if (many)
		return refuse(c, 400, sec, "the request has two X-Amz-Security-Token headers");
	if (token == NULL && (tok != NULL || a.has_token))
		return refuse(c, 403, sec, "the request carries a session token, and the secret has none");
	if (a.presigned) {
		/* The credential and the token are parameters: the target
		 * is written again, the signature last. */
		char cred[PX_SIGV4_KEYID_MAX + 4 * (PX_SIGV4_SCOPE_PART_MAX + 1) + 32];
		char enc[sizeof(cred) * 3];

		snprintf(cred, sizeof(cred), "%s/%s/%s/%s/aws4_request", a.cred.key_id, a.cred.date,
		    a.cred.region, a.cred.service);
		if (px_sigv4_encode(cred, strlen(cred), enc, sizeof(enc)) < 0 ||
		    (t = px_sigv4_set_param(req->path, req->path_len, "X-Amz-Credential", enc, &tl)) == NULL)
			goto oom;
		if (token != NULL) {
			size_t esz = tlen * 3 + 1;
			char *tokenc = malloc(esz), *t2 = NULL;

			if (tokenc != NULL && px_sigv4_encode(token, tlen, tokenc, esz) >= 0)
				t2 = px_sigv4_set_param(t, tl, "X-Amz-Security-Token", tokenc, &tl);
			if (tokenc != NULL) {
				OPENSSL_cleanse(tokenc, esz);
				free(tokenc);
			}
			OPENSSL_cleanse(t, strlen(t));
			free(t);
			if ((t = t2) == NULL)
				goto oom;
		}
	}
	if (token != NULL && (tok != NULL || !a.presigned)) {
		if (tok == NULL) {
			if (req->nheaders >= req->headers_cap)
				return refuse(c, 431, sec, "no room for the session token header");
			tok = &req->headers[req->nheaders++];
			tok->name = "X-Amz-Security-Token";
			tok->name_len = 20;
		}
		tok->value = token;
		tok->value_len = tlen;
	}

	/* The headers as they will be sent: Host as the proxy writes it. */
	if ((hs = calloc(req->nheaders + 1, sizeof(*hs))) == NULL)
		goto oom;
	if (c->tm->port == 443)
		snprintf(hosthdr, sizeof(hosthdr), "%s", c->tm->host.name);
	else
		snprintf(hosthdr, sizeof(hosthdr), "%s:%u", c->tm->host.name, c->tm->port);
	hs[nh].name = "host";
	hs[nh].name_len = 4;
	hs[nh].value = hosthdr;
	hs[nh++].value_len = strlen(hosthdr);
	for (i = 0; i < req->nheaders; i++) {
		if (is(&req->headers[i], "host"))
			continue;
		hs[nh].name = req->headers[i].name;
		hs[nh].name_len = req->headers[i].name_len;
		hs[nh].value = req->headers[i].value;
		hs[nh++].value_len = req->headers[i].value_len;
	}
	s3 = strncmp(a.cred.service, "s3", 2) == 0 && (a.cred.service[2] == '\0' || a.cred.service[2] == '-');
	cr = px_sigv4_canonical(req->method, req->method_len, t != NULL ? t : req->path,
	    t != NULL ? tl : req->path_len, hs, nh, a.signed_headers, pl, s3, a.presigned, &crlen, &why);
	if (cr == NULL) {
		rc = refuse(c, 400, sec, why);
		goto done;
	}
	if (px_sigv4_sign(secret, slen, amz_date, &a.cred, cr, crlen, sig) != 0) {
		rc = refuse(c, 400, sec, "the request could not be signed");
		goto done;
	}
	if (a.presigned) {
		char *t2 = px_sigv4_set_param(t, tl, "X-Amz-Signature", sig, &tl);
		free(t);
		if ((t = t2) == NULL)
			goto oom;
		last.target = t;
		t = NULL;
		req->path = last.target;
		req->path_len = tl;
	} else {
		long n = px_sigv4_auth_value(&a.cred, a.signed_headers, sig, last.auth, sizeof(last.auth));
		if (n < 0) {
			rc = refuse(c, 400, sec, "the Authorization header would be too long");
			goto done;
		}
		authz->value = last.auth;
		authz->value_len = (size_t)n;
	}
	last.c = c;
	last.secret = cf_secret_name(sec);
	rc = 0;
	goto done;
oom:
	px_conn_free(c, "out of memory");
	rc = 1;
done:
	if (t != NULL) {
		OPENSSL_cleanse(t, strlen(t));
		free(t);
	}
	free(cr);
	free(hs);
	return rc;
}

void
px_awssign_note(struct px_conn *c)
{
	if (last.c != c || last.secret == NULL)
		return;
	if (c->tm->secret[0] == '\0')
		snprintf(c->tm->secret, sizeof(c->tm->secret), "%s", last.secret);
	px_stats_secret(px_server_stats(c->srv), c->session, last.secret, PX_SECRET_INJECTED);
	last.c = NULL;
}
