/*
 * conf/awskey.c: the AWS part of an aws-sigv4 secret (see awskey.h).
 */
#include "conf/awskey.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <openssl/crypto.h>

#include "conf/build.h"
#include "conf/secmem.h"
#include "conf/host.h"

#define AWS_MAX_HOSTS 32
#define AWS_TOKEN_MAX 4096

struct aws_host {
	char name[CF_HOST_MAX];
	int wildcard;           /* "*.NAME": names below NAME only */
	uint16_t port;
};

struct cf_aws {
	char *key_id_lit, *key_id_env, *token_env, *token_file;
	char *hosts_text;
	struct aws_host hosts[AWS_MAX_HOSTS];
	size_t nhosts;
	char *key_id;           /* read: the literal or the variable's */
	char *token;            /* read; wiped when freed */
	size_t tlen;
};

static const char *const key_names[CF_AWS_NKEYS] = {
	"access_key_id", "access_key_id_env", "session_token_env", "session_token_file", "hosts",
};

const char *
cf_aws_key_name(enum cf_aws_key k)
{
	return k < CF_AWS_NKEYS ? key_names[k] : "?";
}

/* An access key id: 16 to 128 upper-case letters and digits. */
static int
key_id_ok(const char *v)
{
	size_t i, n = strlen(v);

	if (n < 16 || n > 128)
		return 0;
	for (i = 0; i < n; i++)
		if (!((v[i] >= 'A' && v[i] <= 'Z') || (v[i] >= '0' && v[i] <= '9')))
			return 0;
	return 1;
}

static int
env_ok(const char *v)
{
	size_t i, n = strlen(v);

	if (n == 0 || n > 128 || (v[0] >= '0' && v[0] <= '9'))
		return 0;
	for (i = 0; i < n; i++)
		if (!((v[i] >= 'A' && v[i] <= 'Z') || (v[i] >= 'a' && v[i] <= 'z') ||
		    (v[i] >= '0' && v[i] <= '9') || v[i] == '_'))
			return 0;
	return 1;
}

/* One item of hosts =: NAME or *.NAME, then :PORT or nothing (443). */
static int
host_parse(const char *s, size_t len, struct aws_host *out)
{
	const char *colon = memchr(s, ':', len);
	struct cf_host h;
	size_t hl = colon != NULL ? (size_t)(colon - s) : len;

	memset(out, 0, sizeof(*out));
	out->port = 443;
	if (colon != NULL && cf_port_parse(colon + 1, len - hl - 1, &out->port, NULL) != 0)
		return -EINVAL;
	if (hl > 2 && s[0] == '*' && s[1] == '.') {
		out->wildcard = 1;
		s += 2;
		hl -= 2;
	}
	if (cf_host_parse(s, hl, CF_HOST_NO_IP, &h, NULL) != 0 || h.kind != CF_HOST_NAME)
		return -EINVAL;
	/* A wildcard needs two labels below it: never "*.com". */
	if (out->wildcard && strchr(h.name, '.') == NULL)
		return -EINVAL;
	memcpy(out->name, h.name, sizeof(out->name));
	return 0;
}

/* Parse the list V into A (NULL A: only check).  Returns 0 or -EINVAL. */
static int
hosts_parse(const char *v, struct cf_aws *a)
{
	const char *p = v;
	size_t n = 0;

	while (*p != '\0') {
		size_t l;
		struct aws_host h;

		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (*p == '\0')
			break;
		l = strcspn(p, " \t,");
		if (n == AWS_MAX_HOSTS || host_parse(p, l, &h) != 0)
			return -EINVAL;
		if (a != NULL)
			a->hosts[n] = h;
		n++;
		p += l;
	}
	if (n == 0)
		return -EINVAL;
	if (a != NULL)
		a->nhosts = n;
	return 0;
}

const char *
cf_aws_key_check(enum cf_aws_key k, const char *v)
{
	switch (k) {
	case CF_AWS_KEY_ID:
		return key_id_ok(v) ? NULL : "access_key_id is 16 to 128 upper-case letters and digits "
		    "(what is written is not shown)";
	case CF_AWS_KEY_ID_ENV:
	case CF_AWS_TOKEN_ENV:
		return env_ok(v) ? NULL : "is an environment variable's name: letters, digits and _, "
		    "not starting with a digit, at most 128 (what is written is not shown: it may be "
		    "the secret itself)";
	case CF_AWS_TOKEN_FILE:
		return v[0] == '/' && strlen(v) < 4096 && strcspn(v, "\r\n") == strlen(v) ? NULL :
		    "session_token_file is an absolute path";
	case CF_AWS_HOSTS:
		return hosts_parse(v, NULL) == 0 ? NULL : "hosts is a list of host names or *.DOMAIN, "
		    "each with an optional :PORT (at most 32)";
	default:
		return "unknown key";
	}
}

struct cf_aws *
cfaws_new(struct cf_build *b, int line, const char *name, char **fields)
{
	struct cf_aws *a = calloc(1, sizeof(*a));

	if (a == NULL) {
		cfb_err(b, line, "out of memory");
		return NULL;
	}
	a->key_id_lit = fields[CF_AWS_KEY_ID];
	a->key_id_env = fields[CF_AWS_KEY_ID_ENV];
	a->token_env = fields[CF_AWS_TOKEN_ENV];
	a->token_file = fields[CF_AWS_TOKEN_FILE];
	a->hosts_text = fields[CF_AWS_HOSTS];
	memset(fields, 0, CF_AWS_NKEYS * sizeof(*fields));
	if (a->hosts_text == NULL && (a->hosts_text = strdup("*.amazonaws.com")) == NULL) {
		cfb_err(b, line, "out of memory");
		cfaws_free(a);
		return NULL;
	}
	if (hosts_parse(a->hosts_text, a) != 0)
		cfb_err(b, line, "secret %s: bad hosts", name);
	if ((a->key_id_lit == NULL) == (a->key_id_env == NULL))
		cfb_err(b, line, "secret %s (kind aws-sigv4) needs exactly one of access_key_id and "
		    "access_key_id_env", name);
	if (a->token_env != NULL && a->token_file != NULL)
		cfb_err(b, line, "secret %s: session_token_env and session_token_file both set: "
		    "give one", name);
	return a;
}

void
cfaws_free(struct cf_aws *a)
{
	if (a == NULL)
		return;
	free(a->key_id_lit);
	free(a->key_id_env);
	free(a->token_env);
	free(a->token_file);
	free(a->hosts_text);
	free(a->key_id);
	if (a->token != NULL)
		OPENSSL_secure_clear_free(a->token, a->tlen + 1);
	free(a);
}

/* The token in the secure heap, or the plain one when there is none. */
static char *
token_dup(const char *v, size_t n)
{
	char *p = cf_secmem_alloc(n + 1);

	if (p == NULL)
		return NULL;
	memcpy(p, v, n);
	p[n] = '\0';
	return p;
}

/* A session token: printable ASCII with no space (base64 and the like). */
static int
token_ok(const char *v, size_t n)
{
	size_t i;

	if (n == 0 || n > AWS_TOKEN_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)v[i] <= 0x20 || (unsigned char)v[i] >= 0x7f)
			return 0;
	return 1;
}

void
cfaws_read(struct cf_build *b, struct cf_aws *a, const char *name, int line)
{
	const char *v;

	if (a->key_id == NULL) {
		v = a->key_id_lit;
		if (a->key_id_env != NULL && (v = getenv(a->key_id_env)) == NULL) {
			cfb_err(b, line, "secret %s: $%s is not set", name, a->key_id_env);
			return;
		}
		if (v == NULL)
			return; /* reported with the [secret] */
		if (!key_id_ok(v)) {
			cfb_err(b, line, "secret %s: $%s is not an access key id (16 to 128 upper-case "
			    "letters and digits)", name, a->key_id_env);
			return;
		}
		if ((a->key_id = strdup(v)) == NULL) {
			cfb_err(b, line, "out of memory");
			return;
		}
	}
	if (a->token != NULL)
		return;
	if (a->token_env != NULL) {
		if ((v = getenv(a->token_env)) == NULL) {
			cfb_err(b, line, "secret %s: $%s is not set", name, a->token_env);
			return;
		}
		if (!token_ok(v, strlen(v))) {
			cfb_err(b, line, "secret %s: $%s is not a session token (1 to 4096 printable "
			    "characters, no space)", name, a->token_env);
			return;
		}
		a->tlen = strlen(v);
		if ((a->token = token_dup(v, a->tlen)) == NULL)
			cfb_err(b, line, "out of memory");
	} else if (a->token_file != NULL) {
		char buf[AWS_TOKEN_MAX + 3];
		size_t len = 0;
		struct stat st;
		int fd = open(a->token_file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

		if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
			cfb_err(b, line, "secret %s: cannot read %s: %s", name, a->token_file,
			    fd < 0 ? strerror(errno) : "not a regular file");
			if (fd >= 0)
				close(fd);
			return;
		}
		for (;;) {
			ssize_t n = read(fd, buf + len, sizeof(buf) - len);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0 || (len += (size_t)n) == sizeof(buf))
				break;
		}
		close(fd);
		while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
			len--;
		if (!token_ok(buf, len))
			cfb_err(b, line, "secret %s: %s does not hold a session token (1 to 4096 printable "
			    "characters, no space)", name, a->token_file);
		else if ((a->token = token_dup(buf, len)) == NULL)
			cfb_err(b, line, "out of memory");
		else
			a->tlen = len;
		OPENSSL_cleanse(buf, sizeof(buf));
	}
}

int
cf_aws_binds(const struct cf_aws *a, const char *host, uint16_t port)
{
	size_t i, hl = strlen(host);

	for (i = 0; a != NULL && i < a->nhosts; i++) {
		const struct aws_host *h = &a->hosts[i];
		size_t nl = strlen(h->name);

		if (h->port != port)
			continue;
		if (!h->wildcard && strcmp(h->name, host) == 0)
			return 1;
		if (h->wildcard && hl > nl + 1 && host[hl - nl - 1] == '.' &&
		    strcmp(host + hl - nl, h->name) == 0)
			return 1;
	}
	return 0;
}

const char *
cf_aws_term_name(const struct cf_aws *a, size_t i)
{
	return a != NULL && i < a->nhosts ? a->hosts[i].name : NULL;
}

const char *cf_aws_hosts_text(const struct cf_aws *a) { return a->hosts_text; }
const char *cf_aws_key_id(const struct cf_aws *a) { return a->key_id; }
int cf_aws_has_token(const struct cf_aws *a) { return a->token_env != NULL || a->token_file != NULL; }

const char *
cf_aws_token(const struct cf_aws *a, size_t *len)
{
	*len = a->tlen;
	return a->token;
}
