/*
 * tests/unit/test-allocfail.c: every allocation of a config load and of
 * the codecs fails in turn (tests/unit/allocfail.h).  Each walk makes
 * allocation 1 fail, then 2, then 3, ... until the operation runs with
 * none failing.  Each failure must come back as the operation's error,
 * with nothing half made (no config, the buffer as it was, no question
 * left), and free what was made before it: the sanitizer build
 * (--enable-sanitizers) reports a leak or a crash on any failure path.
 * A run with no failure must give the reference result.
 *
 * The codecs' errors are what the flow closes a request on: a session
 * answer that cannot be rendered, a head that cannot be built, a body
 * that cannot be decoded or scanned closes the connection
 * (px_conn_free(c, "out of memory") and its neighbours).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ares.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <openssl/crypto.h>
#include <openssl/err.h>

#include "conf/config.h"
#include "conf/host.h"
#include "conf/rule.h"
#include "conf/secret.h"
#include "proxy/proto/bridgereply.h"
#include "proxy/proto/dns.h"
#include "proxy/proto/http.h"
#include "proxy/proto/scrub.h"
#include "proxy/proto/sni.h"
#include "proxy/proto/socks.h"
#include "tests/unit/allocfail.h"
#include "tests/unit/tap.h"

/* No walk here comes near this many allocations. */
#define WALK_MAX 100000

/*
 * One run of an operation with allocation N failing (0: none): 0 when it
 * gave the reference result (with N failing too, when it took another way
 * round the failure), 1 when it failed as it must, -1 (and a diagnostic)
 * when it did neither: a half-made result, or an error without a cause.
 */
typedef int walk_fn(unsigned long n, void *arg);

/* Walk N = 1, 2, ... over FN until no allocation fails; one check for the
 * failures and one for the whole run. */
static void
walk(const char *what, walk_fn *fn, void *arg)
{
	unsigned long n, failed = 0, bad = 0, errors = 0;
	int rc = -1;

	for (n = 1; n < WALK_MAX; n++) {
		rc = fn(n, arg);
		if (!allocfail_hit())
			break;
		failed++;
		errors += rc == 1;
		if (rc < 0 && bad++ < 5)
			tap_diag("%s: with allocation %lu failing: a wrong outcome", what, n);
	}
	tap_cmp_int(bad, "==", 0, "%s: each of its %lu allocations failing is an error (%lu) or the "
	    "result all the same, nothing half made", what, failed, errors);
	tap_cmp_int(rc, "==", 0, "%s: with none failing, the reference result", what);
}

/* The text of B (NUL-terminated, the caller's). */
static char *
buf_text(struct evbuffer *b)
{
	size_t n = evbuffer_get_length(b);
	char *s = malloc(n + 1);

	if (s == NULL)
		abort();
	evbuffer_copyout(b, s, n);
	s[n] = '\0';
	return s;
}

/* ---- conf: a config load ------------------------------------------------- */

static const char config_text[] =
	"[proxy]\n"
	"listen = unix:/run/postern/proxy.sock\n"
	"listen = tcp:127.0.0.1:3128\n"
	"admin = unix:/run/postern/admin.sock\n"
	"log = stderr\n"
	"dns_servers = 10.96.0.10, [fd00::53]:5353\n"
	"sni = strict\n"
	"connect_timeout = 10s\n"
	"max_connections = 10000\n"
	"max_header_bytes = 32k\n"
	"[defaults]\n"
	"allow_hosts = api.anthropic.com, api.openai.com, a.test:8443\n"
	"allow_hosts = a.test/v1/ private, *.githubusercontent.com\n"
	"deny_hosts = uploads.example.com\n"
	"secrets = s, anthropic\n"
	"[secret s]\n"
	"from_env = AF_SECRET\n"
	"inject = a.test:8443 header x-api-key\n"
	"[session agent-1]\n"
	"listen = unix:/run/postern/agent-1.sock owner=1000 group=0 mode=0600\n"
	"allow_hosts = control.internal:8080 private\n"
	"deny_hosts = bad.test\n"
	"mode = ask\n";

struct conf_arg {
	const char *path;
	char *want;	/* the reference fingerprint */
};

/* What C holds, as text: a config half made differs from the whole one. */
static char *
conf_print(const struct cf_config *c)
{
	char *p = NULL;
	size_t len = 0, i, k;
	FILE *f;

	allocfail_off();
	if ((f = open_memstream(&p, &len)) == NULL)
		abort();
	fprintf(f, "%s %s %zu %zu\n", cf_config_path(c), cf_config_hash(c), cf_config_nsessions(c),
	    cf_config_nsecrets(c));
	for (i = 0; i < cf_config_nsessions(c); i++) {
		const struct cf_session *s = cf_config_session(c, i);

		fprintf(f, "[%s] %d %d %zu %zu %zu %zu\n", s->name, s->ask, s->report, s->nlisten,
		    s->nallow, s->ndeny, cf_session_nsecrets(s));
		for (k = 0; k < s->nlisten; k++)
			fprintf(f, " listen %s\n", s->listen[k].path);
		for (k = 0; k < s->nallow; k++)
			fprintf(f, " allow %s:%d\n", s->allow[k]->text, s->allow[k]->line);
		for (k = 0; k < s->ndeny; k++)
			fprintf(f, " deny %s:%d\n", s->deny[k]->text, s->deny[k]->line);
		for (k = 0; k < cf_session_nsecrets(s); k++)
			fprintf(f, " secret %s %s\n", cf_secret_name(cf_session_secret(s, k)),
			    cf_session_placeholder(s, k) != NULL ? "placeholder" : "none");
	}
	if (fclose(f) != 0)
		abort();
	return p;
}

/*
 * Judge the load of walk step N that gave C (or NULL) and D: 1 for an
 * error with a reason (unless the diag itself is what could not grow), 0
 * for the result of step 0 (kept in *WANT), -1 for anything else.  Frees
 * C and D.
 */
static int
conf_judge(unsigned long n, struct cf_config *c, struct cf_diag *d, char **want)
{
	char *got;
	int rc;

	if (c == NULL) {
		rc = n != 0 && allocfail_hit() && d->nerrors > 0 ? 1 : -1;
		if (rc < 0)
			tap_diag("the config does not load: %s", d->nerrors ? d->errors[0] : "?");
	} else {
		got = conf_print(c);
		if (n == 0) {
			*want = got;
			got = NULL;
			rc = 0;
		} else {
			rc = strcmp(got, *want) == 0 ? 0 : -1;
			if (rc < 0)
				tap_diag("half made:\n%s", got);
		}
		free(got);
	}
	cf_config_free(c);
	cf_diag_free(d);
	return rc;
}

static int
conf_load(unsigned long n, void *arg)
{
	struct conf_arg *a = arg;
	struct cf_diag d;
	struct cf_config *c;

	memset(&d, 0, sizeof(d));
	allocfail_set(n);
	c = cf_config_load(a->path, NULL, &d);
	allocfail_off();
	return conf_judge(n, c, &d, &a->want);
}

static void
test_conf(void)
{
	struct conf_arg a;
	char dir[] = "/tmp/test-allocfail.XXXXXX", path[64];
	int fd;

	memset(&a, 0, sizeof(a));
	if (mkdtemp(dir) == NULL)
		abort();
	snprintf(path, sizeof(path), "%s/postern.ini", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || write(fd, config_text, sizeof(config_text) - 1) !=
	    (ssize_t)(sizeof(config_text) - 1))
		abort();
	close(fd);
	setenv("AF_SECRET", "af-Secret-Value-0123456789abcdef", 1);
	setenv("ANTHROPIC_API_KEY", "af-anthropic-0123456789abcdefgh", 1);
	a.path = path;
	if (!tap_ok(conf_load(0, &a) == 0, "the config loads"))
		return;
	walk("conf: a config load", conf_load, &a);
	free(a.want);
	unlink(path);
	rmdir(dir);
}

/* The built-in default with the overrides postern-sidecar run gives. */
static int
conf_default(unsigned long n, void *arg)
{
	static const char *const allow[] = { "extra.test:8443", "b.test/v1/ private" };
	static const char *const listen[] = { "unix:/tmp/af/run.sock" };
	char **want = arg;
	struct cf_overrides ov;
	struct cf_diag d;
	struct cf_config *c;

	memset(&ov, 0, sizeof(ov));
	ov.extra_allow = allow;
	ov.n_extra_allow = 2;
	ov.extra_listen = listen;
	ov.n_extra_listen = 1;
	ov.replace_listen = 1;
	ov.admin = "unix:/tmp/af/admin.sock";
	ov.default_name = "run";
	ov.cli_hints = 1;
	memset(&d, 0, sizeof(d));
	allocfail_set(n);
	c = cf_config_parse("<built-in>", cf_default_text(), strlen(cf_default_text()), &ov, &d);
	allocfail_off();
	return conf_judge(n, c, &d, want);
}

static void
test_conf_default(void)
{
	char *want = NULL;

	if (tap_cmp_int(conf_default(0, &want), "==", 0, "the built-in default with overrides loads"))
		walk("conf: the built-in default with overrides", conf_default, &want);
	free(want);
}

/* ---- proxy/proto/http.c -------------------------------------------------- */

#define NH 32

/* A request and a response with big headers, so that the heads span
 * several of libevent's buffer chains. */
static char http_req[8192], http_resp[8192];
static size_t http_req_len, http_resp_len;

/* FIRST, four X-Big headers of FILL, then LAST, into OUT. */
static size_t
make_head(char *out, size_t size, const char *first, char fill, const char *last)
{
	char big[1500];
	int k, n;

	memset(big, fill, sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	n = snprintf(out, size, "%s", first);
	for (k = 0; k < 4; k++)
		n += snprintf(out + n, size - (size_t)n, "X-Big-%d: %s\r\n", k, big);
	n += snprintf(out + n, size - (size_t)n, "%s", last);
	return (size_t)n;
}

static void
make_http_req(void)
{
	http_req_len = make_head(http_req, sizeof(http_req),
	    "POST http://a.test:8080/hooks/x?y=1 HTTP/1.1\r\n"
	    "Host: a.test:8080\r\n"
	    "Connection: keep-alive, X-Hop\r\n"
	    "X-Hop: 1\r\n"
	    "Proxy-Authorization: Basic eDp5\r\n"
	    "Content-Length: 2\r\n", 'v', "Accept: */*\r\n\r\n");
}

static void
make_http_resp(void)
{
	http_resp_len = make_head(http_resp, sizeof(http_resp),
	    "HTTP/1.1 200 Fine\r\n"
	    "Server: s\r\n"
	    "Keep-Alive: timeout=5\r\n", 'w', "Transfer-Encoding: chunked\r\n\r\n");
}

static const char http_chunked[] =
	"5\r\nhello\r\n1;ext=1\r\n \r\n400\r\n"
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	"\r\n0\r\nX-Trailer: t\r\n\r\n";

enum head_kind { HEAD_UPSTREAM, HEAD_TLS, HEAD_CLIENT, HEAD_DECHUNK };

struct head_arg {
	enum head_kind kind;
	struct px_http_request req;
	struct px_http_response resp;
	struct px_http_header h[NH];
	char *want;	/* the reference output */
};

/* Build A's head (or decode the chunked body) into a buffer that already
 * holds a byte: 0 and the result, or an error. */
static int
head_run(struct head_arg *a, struct evbuffer *out)
{
	struct px_chunked ch;
	const char *why = NULL;
	int done = 0;
	ssize_t used;

	switch (a->kind) {
	case HEAD_UPSTREAM:
		return px_http_build_upstream_head(&a->req, out);
	case HEAD_TLS:
		return px_http_build_tls_head(&a->req, "a.test", 8443, "key=S", 5,
		    "X-Extra: 1\r\n", 12, out);
	case HEAD_CLIENT:
		return px_http_build_client_head(&a->resp, 1, out);
	case HEAD_DECHUNK:
		px_chunked_init(&ch, NULL);
		used = px_chunked_decode(&ch, http_chunked, sizeof(http_chunked) - 1, out, &done, &why);
		/* Out of memory is its own code: the caller says so when it
		 * closes, not "bad chunked response". */
		if (used < 0)
			return used == -ENOMEM && why != NULL && strcmp(why, "out of memory") == 0 ?
			    -ENOMEM : -EINVAL;
		return (size_t)used == sizeof(http_chunked) - 1 && done ? 0 : -EINVAL;
	}
	return -EINVAL;
}

static int
head_walk(unsigned long n, void *arg)
{
	struct head_arg *a = arg;
	struct evbuffer *out = evbuffer_new();
	char *got;
	int rc;

	if (out == NULL || evbuffer_add(out, "@", 1) != 0)
		abort();
	allocfail_set(n);
	rc = head_run(a, out);
	allocfail_off();
	got = buf_text(out);
	if (n == 0) {
		a->want = got;
		evbuffer_free(out);
		return rc;
	}
	if (allocfail_hit()) {
		/* The caller closes the connection on -ENOMEM; what OUT
		 * holds then is never sent, but what was there stays. */
		rc = rc == -ENOMEM && got[0] == '@' ? 1 : -1;
	} else {
		rc = rc == 0 && strcmp(got, a->want) == 0 ? 0 : -1;
	}
	free(got);
	evbuffer_free(out);
	return rc;
}

static void
test_http(void)
{
	static const char *const names[] = {
		"http: the upstream head", "http: the head inside a TLS tunnel",
		"http: the client head", "http: a chunked body decoded"
	};
	struct head_arg a;
	size_t hl = 0;
	int status = 0, k;
	const char *why = NULL;

	memset(&a, 0, sizeof(a));
	make_http_req();
	px_http_request_init(&a.req, a.h, NH);
	allocfail_set(0);
	tap_cmp_int(px_http_parse_request(http_req, http_req_len, NULL, &a.req, &hl, &status, &why),
	    "==", PX_HTTP_OK, "http: the request parses (%s)", why ? why : "ok");
	tap_cmp_int(allocfail_count(), "==", 0, "http: parsing a request allocates nothing");
	for (k = HEAD_UPSTREAM; k <= HEAD_DECHUNK; k++) {
		if (k == HEAD_CLIENT) {
			make_http_resp();
			px_http_response_init(&a.resp, a.h, NH);
			allocfail_set(0);
			tap_cmp_int(px_http_parse_response(http_resp, http_resp_len, NULL, 0, &a.resp,
			    &hl, &why), "==", PX_HTTP_OK, "http: the response parses (%s)", why ? why : "ok");
			tap_cmp_int(allocfail_count(), "==", 0, "http: parsing a response allocates nothing");
		}
		a.kind = (enum head_kind)k;
		if (!tap_cmp_int(head_walk(0, &a), "==", 0, "%s: built", names[k]))
			continue;
		walk(names[k], head_walk, &a);
		free(a.want);
		a.want = NULL;
	}
}

/* ---- proxy/proto/scrub.c ------------------------------------------------- */

#define SCRUB_A "af-scrub-Value-0123456789abcdef"
#define SCRUB_B "af-scrub-Other-fedcba9876543210"

/* Two unmasked server text frames carrying both values, the first frame
 * cut in the middle of one. */
static size_t
ws_frames(unsigned char *p)
{
	static const char f1[] = "data " SCRUB_A " and " SCRUB_B;
	static const char f2[] = " more " SCRUB_B;
	size_t k = 0;

	p[k++] = 0x81;
	p[k++] = sizeof(f1) - 1;
	memcpy(p + k, f1, sizeof(f1) - 1);
	k += sizeof(f1) - 1;
	p[k++] = 0x81;
	p[k++] = sizeof(f2) - 1;
	memcpy(p + k, f2, sizeof(f2) - 1);
	return k + sizeof(f2) - 1;
}

struct scrub_arg {
	unsigned char want[256];
	size_t want_len;
	long want_go;
};

static int
scrub_walk(unsigned long n, void *arg)
{
	struct scrub_arg *a = arg;
	struct px_scrub_ws ws;
	struct px_scrub *s;
	unsigned char buf[256];
	size_t len = ws_frames(buf), masked = 0;
	const char *name = NULL;
	long go = -2;
	int rc = -1, failed = 0;

	memset(&ws, 0, sizeof(ws));
	allocfail_set(n);
	s = px_scrub_new();
	if (s == NULL || px_scrub_add(s, "a", SCRUB_A, strlen(SCRUB_A)) != 0 ||
	    px_scrub_add(s, "b", SCRUB_B, strlen(SCRUB_B)) != 0)
		failed = 1;
	else
		go = px_scrub_ws(s, &ws, buf, len, 1, &masked, &name);
	allocfail_off();
	if (n == 0) {
		memcpy(a->want, buf, len);
		a->want_len = len;
		a->want_go = go;
		rc = go == (long)len && masked > 0 && memmem(buf, len, SCRUB_A, strlen(SCRUB_A)) == NULL ?
		    0 : -1;
	} else if (!failed && go == a->want_go && memcmp(buf, a->want, len) == 0) {
		/* The secure heap failing, the plain one takes the value. */
		rc = 0;
	} else {
		/* Unscanned bytes never go: the caller closes, and says out
		 * of memory, not unreadable frames. */
		rc = allocfail_hit() && (failed || go == -ENOMEM) ? 1 : -1;
	}
	px_scrub_free(s);
	return rc;
}

static void
test_scrub(void)
{
	struct scrub_arg a;

	memset(&a, 0, sizeof(a));
	if (!tap_cmp_int(scrub_walk(0, &a), "==", 0, "scrub: two values masked in WebSocket frames"))
		return;
	walk("scrub: a table and a WebSocket scan", scrub_walk, &a);
}

/* ---- proxy/proto/dns.c --------------------------------------------------- */

static void
dns_cb(int status, const struct px_dns_result *res, const char *errmsg, void *arg)
{
	(void)status;
	(void)res;
	(void)errmsg;
	(void)arg;
	abort();   /* cancelled before the loop runs */
}

static int
dns_walk(unsigned long n, void *arg)
{
	struct event_base *base = arg;
	struct px_dns_opts o;
	struct px_dns *d;
	struct px_dns_query *q = NULL;
	char err[256] = "";
	int rc, e = 0;

	px_dns_opts_init(&o);
	/* No resolv.conf of the machine's: the servers are given. */
	o.resolv_conf = "/dev/null";
	allocfail_set(n);
	d = px_dns_new(base, "127.0.0.1:1", &o, err, sizeof(err));
	if (d == NULL)
		e = errno;
	else if ((q = px_dns_resolve(d, "af.test", dns_cb, NULL)) == NULL)
		e = errno;
	allocfail_off();
	if (d != NULL && q != NULL)
		rc = 0;
	else if (!allocfail_hit())
		rc = -1;
	else if (d == NULL)
		rc = err[0] != '\0' ? 1 : -1;
	else
		rc = e == ENOMEM ? 1 : -1;
	if (rc < 0)
		tap_diag("dns: errno %d, %s", e, err);
	px_dns_cancel(q);
	px_dns_free(d);
	return rc;
}

static void
test_dns(void)
{
	struct event_base *base = event_base_new();

	if (base == NULL)
		abort();
	if (tap_cmp_int(dns_walk(0, base), "==", 0, "dns: a resolver and one lookup"))
		walk("dns: a resolver and one lookup", dns_walk, base);
	event_base_free(base);
}

/* ---- proxy/proto/socks.c ------------------------------------------------- */

static void
test_socks(void)
{
	static const unsigned char greet[] = { 5, 2, 0, 2 };
	static const unsigned char req[] = { 5, 1, 0, 3, 6, 'a', '.', 't', 'e', 's', 't', 0x01, 0xbb };
	struct px_socks_request r;
	const char *why = NULL;
	size_t used = 0;
	int noauth = 0, rep = 0;

	allocfail_set(0);
	tap_cmp_int(px_socks_greeting(greet, sizeof(greet), &used, &noauth, &why), "==", PX_SOCKS_OK,
	    "socks: the greeting parses");
	tap_cmp_int(px_socks_request(req, sizeof(req), &used, &r, &rep, &why), "==", PX_SOCKS_OK,
	    "socks: the request parses");
	tap_cmp_str(r.host.name, "a.test", "socks: its host");
	tap_cmp_int(allocfail_count(), "==", 0, "socks: parsing allocates nothing");
}

/* ---- proxy/proto/sni.c --------------------------------------------------- */

struct sni_arg {
	unsigned char hello[4096];
	size_t len;
};

static int
sni_walk(unsigned long n, void *arg)
{
	struct sni_arg *a = arg;
	struct px_sni *s;
	enum px_sni_result r = PX_SNI_NEED_MORE;
	struct cf_host h;
	int rc, e = 0;

	allocfail_set(n);
	s = px_sni_new(64 * 1024);
	if (s == NULL)
		e = errno;
	else
		r = px_sni_feed(s, a->hello, a->len);
	allocfail_off();
	if (s != NULL && r == PX_SNI_HELLO && px_sni_name(s, &h) == 1 && strcmp(h.name, "name.test") == 0)
		rc = 0;
	else if (!allocfail_hit())
		rc = -1;
	else if (s == NULL)
		rc = e == ENOMEM || e == EPROTO ? 1 : -1;
	else
		rc = r == PX_SNI_BAD && px_sni_why(s) != NULL ? 1 : -1;
	if (rc < 0)
		tap_diag("sni: %s, errno %d, result %d (%s)", s == NULL ? "no inspector" : "an inspector",
		    e, (int)r, s != NULL && px_sni_why(s) != NULL ? px_sni_why(s) : "-");
	if (ERR_peek_error() != 0) {
		tap_diag("sni: OpenSSL's error queue is not empty");
		ERR_clear_error();
		rc = -1;
	}
	px_sni_free(s);
	/* The shared context too, so that the next walk step makes it. */
	px_sni_cleanup();
	return rc;
}

static void
test_sni(void)
{
	struct sni_arg a;
	FILE *f = fopen(SNI_DATA_DIR "/curl-hello-name.test.bin", "rb");

	if (!tap_ok(f != NULL, "sni: the captured ClientHello"))
		return;
	a.len = fread(a.hello, 1, sizeof(a.hello), f);
	fclose(f);
	if (tap_cmp_int(sni_walk(0, &a), "==", 0, "sni: the ClientHello names name.test"))
		walk("sni: an inspector fed a ClientHello", sni_walk, &a);
}

/* ---- proxy/proto/bridgereply.c ------------------------------------------- */

#define CA_PEM "-----BEGIN CERTIFICATE-----\nMIIBaf==\n-----END CERTIFICATE-----\n"

static int
reply_walk(unsigned long n, void *arg)
{
	static const char *const names[] = { "POSTERN_S", "ANTHROPIC_API_KEY" };
	static const char *const values[] = { "postern-placeholder-s-0123", "postern-placeholder-a-4567" };
	char **want = arg;
	struct evbuffer *out = evbuffer_new();
	char *got;
	int rc;

	if (out == NULL || evbuffer_add(out, "@", 1) != 0)
		abort();
	allocfail_set(n);
	rc = px_bridgereply_render(out, names, values, 2, CA_PEM);
	allocfail_off();
	got = buf_text(out);
	if (n == 0) {
		*want = got;
		evbuffer_free(out);
		return rc;
	}
	if (allocfail_hit())
		/* Never half an answer: OUT as it was. */
		rc = rc == -ENOMEM && strcmp(got, "@") == 0 ? 1 : -1;
	else
		rc = rc == 0 && strcmp(got, *want) == 0 ? 0 : -1;
	free(got);
	evbuffer_free(out);
	return rc;
}

static void
test_bridgereply(void)
{
	char *want = NULL;

	if (tap_cmp_int(reply_walk(0, &want), "==", 0, "bridgereply: the session answer renders"))
		walk("bridgereply: the session answer", reply_walk, &want);
	free(want);
}

/* OpenSSL's hooks carry the caller's file and line. */
static void *
ossl_malloc(size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	return af_malloc(n);
}

static void *
ossl_realloc(void *p, size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	return af_realloc(p, n);
}

static void
ossl_free(void *p, const char *file, int line)
{
	(void)file;
	(void)line;
	af_free(p);
}

int
main(void)
{
	/* The libraries' allocators count too; each must be set before the
	 * library allocates anything. */
	if (!CRYPTO_set_mem_functions(ossl_malloc, ossl_realloc, ossl_free))
		abort();
	event_set_mem_functions(af_malloc, af_realloc, af_free);
	if (ares_library_init_mem(ARES_LIB_INIT_ALL, af_malloc, af_free, af_realloc) != ARES_SUCCESS)
		abort();

	test_conf();
	test_conf_default();
	test_http();
	test_scrub();
	test_dns();
	test_socks();
	test_sni();
	test_bridgereply();
	ares_library_cleanup();
	return tap_done();
}
