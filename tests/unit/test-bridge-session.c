/*
 * tests/unit/test-bridge-session.c: the bridge's parser of the proxy's
 * session info (bridge/session.c), case by case: good bodies, every
 * malformed form, caps, NUL bytes, CR LF, a body cut inside the PEM, and
 * the whole HTTP answer around it; then the bundle writer.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bridge/session.h"
#include "tests/unit/tap.h"

/* A real certificate (openssl req -x509, P-256), as PEM. */
#define CERT \
	"-----BEGIN CERTIFICATE-----\n" \
	"MIIBbjCCAROgAwIBAgIUcu+aLO9TJxGRdRFD4PDLxvREU90wCgYIKoZIzj0EAwIw\n" \
	"DDEKMAgGA1UEAwwBdDAeFw0yNjEyMDExNDMxMzNaFw0zNjExMjgxNDMxMzNaMAwx\n" \
	"CjAIBgNVBAMMAXQwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAASFx++IP1HJ5mOT\n" \
	"LnX63qW8h89xizxUivqXxn8zBfLmETIa7DRZoQZEfkyDlr4VrKL3yocu4ceoMra/\n" \
	"MZlf9Zy8o1MwUTAdBgNVHQ4EFgQUJAU0BWJKwvl+J20bMbKe4ntpOi8wHwYDVR0j\n" \
	"BBgwFoAUJAU0BWJKwvl+J20bMbKe4ntpOi8wDwYDVR0TAQH/BAUwAwEB/zAKBggq\n" \
	"hkjOPQQDAgNJADBGAiEA5G0yEjCtOzVNiBqUgCCnKVDuLowc1PBJ/Vv3mmcWG/QC\n" \
	"IQDZw8EnlzdmKq+1BwEtr6LZKkEhR5Nl0ljiGL76XLdk0g==\n" \
	"-----END CERTIFICATE-----\n"

struct body_case {
	const char *what;
	const char *body;
	size_t len;       /* 0: strlen(body) */
	int rc;           /* 0 or -EINVAL */
	size_t nenv;
	const char *name0, *value0;
	int has_ca;
};

#define V1 "postern-session 1\n"

static const struct body_case body_cases[] = {
	{ "version line alone", V1, 0, 0, 0, NULL, NULL, 0 },
	{ "one env line", V1 "env ANTHROPIC_API_KEY sk-ant-api03-XyZ_09\n", 0, 0, 1,
	    "ANTHROPIC_API_KEY", "sk-ant-api03-XyZ_09", 0 },
	{ "env then ca", V1 "env GH_TOKEN ghp_abcdef\nca\n" CERT, 0, 0, 1, "GH_TOKEN",
	    "ghp_abcdef", 1 },
	{ "ca alone", V1 "ca\n" CERT, 0, 0, 0, NULL, NULL, 1 },
	{ "two certificates", V1 "ca\n" CERT CERT, 0, 0, 0, NULL, NULL, 1 },
	{ "unknown keyword skipped", V1 "hint some future thing\nenv _x1 v\n", 0, 0, 1, "_x1",
	    "v", 0 },
	{ "unknown bare keyword skipped", V1 "x-new\n", 0, 0, 0, NULL, NULL, 0 },
	{ "value of every printable byte", V1 "env A !\"#$%&'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~\n",
	    0, 0, 1, "A", "!\"#$%&'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~", 0 },

	{ "empty body", "", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "no version line", "env A b\n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "version 2", "postern-session 2\n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "version line without LF", "postern-session 1", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "version with trailing space", "postern-session 1 \n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "CRLF version line", "postern-session 1\r\n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "CRLF env line", V1 "env A b\r\n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "last line without LF", V1 "env A b", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "empty line", V1 "\n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "env without value", V1 "env A\n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "env with empty value", V1 "env A \n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "env with two spaces", V1 "env A  b\n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "env value with a space", V1 "env A b c\n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "env value with a tab", V1 "env A b\tc\n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "env value with DEL", V1 "env A b\x7f\n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "env value with a high byte", V1 "env A b\xc3\xa9\n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "env name with a digit first", V1 "env 1A b\n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "env name with '='", V1 "env A=B c\n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "env name with '-'", V1 "env A-B c\n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "env name given twice", V1 "env A b\nenv A c\n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "env alone", V1 "env\n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "second version line", V1 V1, 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "ca with an argument", V1 "ca x\n" CERT, 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "upper-case keyword", V1 "Env A b\n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "keyword with a bad byte", V1 "hi_there x\n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "line starting with a space", V1 " env A b\n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "ca without PEM", V1 "ca\n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "ca then an env line", V1 "ca\n" CERT "env A b\n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "PEM without END", V1 "ca\n-----BEGIN CERTIFICATE-----\nAAAA\n", 0, -EINVAL, 0, NULL,
	    NULL, 0 },
	{ "PEM block with no base64", V1 "ca\n-----BEGIN CERTIFICATE-----\n"
	    "-----END CERTIFICATE-----\n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "PEM of a private key", V1 "ca\n-----BEGIN PRIVATE KEY-----\nAAAA\n"
	    "-----END PRIVATE KEY-----\n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "PEM with a bad byte", V1 "ca\n-----BEGIN CERTIFICATE-----\nAA*A\n"
	    "-----END CERTIFICATE-----\n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "PEM with CRLF", V1 "ca\n-----BEGIN CERTIFICATE-----\r\nAAAA\r\n"
	    "-----END CERTIFICATE-----\r\n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "PEM with an empty line", V1 "ca\n-----BEGIN CERTIFICATE-----\n\nAAAA\n"
	    "-----END CERTIFICATE-----\n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "PEM then junk", V1 "ca\n" CERT "junk\n", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "PEM END without LF", V1 "ca\n-----BEGIN CERTIFICATE-----\nAAAA\n"
	    "-----END CERTIFICATE-----", 0, -EINVAL, 0, NULL, NULL, 0 },
	{ "NUL in an env value", V1 "env A b\0c\n", sizeof(V1 "env A b\0c\n") - 1, -EINVAL, 0,
	    NULL, NULL, 0 },
	{ "NUL after the body", V1 "env A b\n\0", sizeof(V1 "env A b\n\0") - 1, -EINVAL, 0,
	    NULL, NULL, 0 },
	{ "NUL in the PEM", V1 "ca\n-----BEGIN CERTIFICATE-----\nAA\0A\n"
	    "-----END CERTIFICATE-----\n", sizeof(V1 "ca\n-----BEGIN CERTIFICATE-----\nAA\0A\n"
	    "-----END CERTIFICATE-----\n") - 1, -EINVAL, 0, NULL, NULL, 0 },
};

static void
run_body_cases(void)
{
	size_t i, len;
	struct br_session *s;
	const char *why, *name, *value;
	int rc;

	for (i = 0; i < sizeof(body_cases) / sizeof(body_cases[0]); i++) {
		const struct body_case *t = &body_cases[i];

		len = t->len ? t->len : strlen(t->body);
		s = NULL;
		why = NULL;
		rc = br_session_parse(t->body, len, &s, &why);
		tap_ok(rc == t->rc, "%s: rc %d, want %d%s%s", t->what, rc, t->rc,
		    why != NULL ? ": " : "", why != NULL ? why : "");
		if (rc != 0) {
			tap_ok(s == NULL && why != NULL, "%s: no session, a reason", t->what);
			continue;
		}
		tap_ok(br_session_nenv(s) == t->nenv, "%s: %zu env lines", t->what, t->nenv);
		if (t->nenv > 0) {
			br_session_env(s, 0, &name, &value);
			tap_ok(strcmp(name, t->name0) == 0 && strcmp(value, t->value0) == 0,
			    "%s: %s=%s", t->what, name, value);
		}
		tap_ok((br_session_ca(s) != NULL) == t->has_ca, "%s: CA %s", t->what,
		    t->has_ca ? "present" : "absent");
		if (t->has_ca)
			tap_ok(strncmp(br_session_ca(s), "-----BEGIN CERTIFICATE-----\n", 28) == 0 &&
			    strstr(br_session_ca(s), "-----END CERTIFICATE-----\n") != NULL,
			    "%s: the CA is the PEM after \"ca\"", t->what);
		br_session_free(s);
	}
}

/* Values at the 4096-byte cap and one past it; names at 255 and 256. */
static void
run_caps(void)
{
	char *b = malloc(70000);
	struct br_session *s = NULL;
	const char *name, *value;
	size_t n, i;
	int rc;

	n = (size_t)sprintf(b, V1 "env BIG ");
	memset(b + n, 'x', 4096);
	n += 4096;
	b[n++] = '\n';
	rc = br_session_parse(b, n, &s, NULL);
	tap_ok(rc == 0, "a 4096-byte value is taken");
	if (rc == 0) {
		br_session_env(s, 0, &name, &value);
		tap_ok(strlen(value) == 4096, "and kept whole");
		br_session_free(s);
		s = NULL;
	}
	n = (size_t)sprintf(b, V1 "env BIG ");
	memset(b + n, 'x', 4097);
	n += 4097;
	b[n++] = '\n';
	tap_ok(br_session_parse(b, n, &s, NULL) == -EINVAL, "a 4097-byte value is refused");
	n = (size_t)sprintf(b, V1 "env ");
	memset(b + n, 'N', 255);
	n += 255;
	n += (size_t)sprintf(b + n, " v\n");
	rc = br_session_parse(b, n, &s, NULL);
	tap_ok(rc == 0, "a 255-byte name is taken");
	br_session_free(s);
	s = NULL;
	n = (size_t)sprintf(b, V1 "env ");
	memset(b + n, 'N', 256);
	n += 256;
	n += (size_t)sprintf(b + n, " v\n");
	tap_ok(br_session_parse(b, n, &s, NULL) == -EINVAL, "a 256-byte name is refused");
	n = (size_t)sprintf(b, V1);
	for (i = 0; i < 256; i++)
		n += (size_t)sprintf(b + n, "env V%zu x\n", i);
	rc = br_session_parse(b, n, &s, NULL);
	tap_ok(rc == 0 && br_session_nenv(s) == 256, "256 env lines are taken");
	br_session_free(s);
	s = NULL;
	n += (size_t)sprintf(b + n, "env V256 x\n");
	tap_ok(br_session_parse(b, n, &s, NULL) == -EINVAL, "a 257th env line is refused");
	free(b);
}

/* A body cut anywhere in the PEM (or anywhere at all but after a whole
 * line before "ca") is refused. */
static void
run_cuts(void)
{
	static const char body[] = V1 "env A b\nca\n" CERT;
	size_t len = sizeof(body) - 1, cut, bad = 0, at = sizeof(V1 "env A b\nca\n") - 1;
	struct br_session *s;

	for (cut = at; cut < len; cut++) {
		s = NULL;
		if (br_session_parse(body, cut, &s, NULL) != -EINVAL) {
			bad++;
			tap_diag("cut at %zu of %zu accepted", cut, len);
		}
		br_session_free(s);
	}
	tap_ok(bad == 0, "every cut inside the CA's PEM (%zu of them) is refused", len - at);
}

struct resp_case {
	const char *what;
	const char *resp;
	int rc;         /* 1, 0 or -EINVAL */
	int status;
};

#define OKHEAD(n) "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\n" \
	"Content-Length: " #n "\r\nConnection: close\r\n\r\n"

static const struct resp_case resp_cases[] = {
	{ "200 with a body", OKHEAD(26) V1 "env A b\n", 1, 200 },
	{ "400 of an older proxy", "HTTP/1.1 400 Bad Request\r\nContent-Length: 3\r\n\r\nno\n", 0,
	    400 },
	{ "404 without a body", "HTTP/1.1 404 Not Found\r\n\r\n", 0, 404 },
	{ "closed at once", "", 0, 0 },
	{ "closed inside the head", "HTTP/1.1 200 OK\r\nContent-Le", 0, 0 },
	{ "not HTTP", "SSH-2.0-OpenSSH\r\n\r\n", -EINVAL, 0 },
	{ "200 cut short", OKHEAD(27) V1 "env A b\n", -EINVAL, 200 },
	{ "200 with bytes after", OKHEAD(25) V1 "env A b\n", -EINVAL, 200 },
	{ "200 without a length", "HTTP/1.1 200 OK\r\n\r\n" V1, -EINVAL, 200 },
	{ "200 with two lengths", "HTTP/1.1 200 OK\r\nContent-Length: 18\r\n"
	    "Content-Length: 18\r\n\r\n" V1, -EINVAL, 200 },
	{ "200 with a signed length", "HTTP/1.1 200 OK\r\nContent-Length: +18\r\n\r\n" V1,
	    -EINVAL, 200 },
	{ "200 with a leading zero", "HTTP/1.1 200 OK\r\nContent-Length: 018\r\n\r\n" V1,
	    -EINVAL, 200 },
	{ "200 chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
	    "Content-Length: 18\r\n\r\n" V1, -EINVAL, 200 },
	{ "200 with a bare LF in the head", "HTTP/1.1 200 OK\r\nX: a\nContent-Length: 18\r\n\r\n"
	    V1, -EINVAL, 200 },
	{ "200 length in any case, with spaces", "HTTP/1.1 200 OK\r\ncontent-LENGTH:  18 \r\n\r\n"
	    V1, 1, 200 },
	{ "200 with a malformed body", OKHEAD(18) "postern-session 2\n", -EINVAL, 200 },
};

static void
run_resp_cases(void)
{
	size_t i;
	struct br_session *s;
	const char *why;
	int rc, status;

	for (i = 0; i < sizeof(resp_cases) / sizeof(resp_cases[0]); i++) {
		const struct resp_case *t = &resp_cases[i];

		s = NULL;
		why = NULL;
		status = -1;
		rc = br_session_response(t->resp, strlen(t->resp), &status, &s, &why);
		tap_ok(rc == t->rc && (rc < 0 || status == t->status),
		    "%s: rc %d status %d, want %d %d%s%s", t->what, rc, status, t->rc, t->status,
		    why != NULL ? ": " : "", why != NULL ? why : "");
		tap_ok((rc == 1) == (s != NULL), "%s: a session exactly when 1", t->what);
		br_session_free(s);
	}
}

static char *
slurp(const char *path)
{
	static char buf[1 << 20];
	ssize_t k;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	k = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (k < 0)
		return NULL;
	buf[k] = '\0';
	return buf;
}

static void
run_bundle(void)
{
	char dir[] = "/tmp/postern-test-bundle.XXXXXX", roots[128], path[4096], *got;
	const char *used = "x";
	struct stat st;
	FILE *f;
	int rc;

	if (mkdtemp(dir) == NULL) {
		tap_ok(0, "mkdtemp");
		return;
	}
	snprintf(roots, sizeof(roots), "%s/roots.pem", dir);
	f = fopen(roots, "w");
	/* No final LF: the CA must still start on a line of its own. */
	fputs("ROOTS-GO-HERE", f);
	fclose(f);
	rc = br_bundle_write(roots, dir, CERT, path, sizeof(path), &used);
	tap_ok(rc == 0, "bundle written: %d", rc);
	if (rc != 0)
		return;
	tap_ok(strncmp(path, dir, strlen(dir)) == 0, "under TMPDIR: %s", path);
	tap_ok(used != NULL && strcmp(used, roots) == 0, "from SSL_CERT_FILE's roots");
	got = slurp(path);
	tap_ok(got != NULL && strcmp(got, "ROOTS-GO-HERE\n" CERT) == 0,
	    "roots, a line break, then the CA");
	tap_ok(stat(path, &st) == 0 && (st.st_mode & 07777) == 0644, "file mode 0644");
	*strrchr(path, '/') = '\0';
	tap_ok(stat(path, &st) == 0 && (st.st_mode & 07777) == 0755, "directory mode 0755");
	strcat(path, "/ca-bundle.pem");
	br_bundle_remove(path);
	*strrchr(path, '/') = '\0';
	tap_ok(stat(path, &st) < 0 && errno == ENOENT, "removed with its directory");

	/* An unreadable SSL_CERT_FILE falls back to the system's roots. */
	rc = br_bundle_write("/nonexistent/roots.pem", dir, CERT, path, sizeof(path), &used);
	tap_ok(rc == 0, "bundle without the named roots written");
	if (rc == 0) {
		got = slurp(path);
		tap_ok(got != NULL && strstr(got, CERT) != NULL &&
		    (used == NULL ? strcmp(got, CERT) == 0 : strlen(got) > strlen(CERT)),
		    "system roots (%s) then the CA", used != NULL ? used : "none");
		br_bundle_remove(path);
	}
	tap_ok(br_bundle_write(NULL, "/nonexistent", CERT, path, sizeof(path), &used) < 0,
	    "a TMPDIR that does not exist is an error");
	rmdir(dir);
	unlink(roots);
	rmdir(dir);
}

int
main(void)
{
	run_body_cases();
	run_caps();
	run_cuts();
	run_resp_cases();
	run_bundle();
	return tap_done();
}
