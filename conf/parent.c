/*
 * conf/parent.c: a session's parent proxy (see parent.h).  The keys are
 * checked as they are read (keys.c calls cfp_check()); the credential is
 * read, and each session given its parent, once the file is read.
 */
#include "conf/parent.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "base/text.h"
#include "conf/build.h"
#include "conf/config.h"

/* user:password, as Basic takes it (RFC 7617 §2), before base64. */
#define AUTH_MAX 1024

/* "http://HOST:PORT" with nothing else: no userinfo, no path. */
static int
parse_url(const char *v, struct cf_host *host, uint16_t *port, const char **why)
{
	size_t n;
	const char *a;

	if (strncasecmp(v, "http://", 7) != 0) {
		*why = strstr(v, "://") != NULL ? "only http:// parents are supported (the CONNECT to it "
		    "is plain; what goes through it stays TLS end to end)" :
		    "write it as http://HOST:PORT";
		return -EINVAL;
	}
	a = v + 7;
	n = strlen(a);
	if (n > 0 && a[n - 1] == '/')
		n--;
	if (memchr(a, '@', n) != NULL) {
		*why = "no user:password in the URL: give the credential with upstream_proxy_auth";
		return -EINVAL;
	}
	if (memchr(a, '/', n) != NULL || memchr(a, '?', n) != NULL || memchr(a, '#', n) != NULL) {
		*why = "the URL is http://HOST:PORT, with no path";
		return -EINVAL;
	}
	if (n == 0 || memchr(a, ':', n) == NULL || a[n - 1] == ']') {
		*why = "the URL needs its port: http://HOST:PORT";
		return -EINVAL;
	}
	if (cf_authority_parse(a, n, 0, host, port, why) != 0)
		return -EINVAL;
	if (*port == 0) {
		*why = "port 0";
		return -EINVAL;
	}
	return 0;
}

/* One item of upstream_proxy_direct: a host, an address, or *.DOMAIN. */
static int
parse_direct_item(const char *p, size_t len, struct cf_host *out, const char **why)
{
	if (len >= 2 && p[0] == '*' && p[1] == '.') {
		char tmp[CF_HOST_MAX + 2];

		if (cf_host_parse(p + 2, len - 2, CF_HOST_NO_IP, out, why) != 0)
			return -EINVAL;
		/* Kept as ".DOMAIN": a suffix, never a name of its own. */
		snprintf(tmp, sizeof(tmp), ".%s", out->name);
		if (strlen(tmp) >= sizeof(out->name)) {
			*why = "name too long";
			return -EINVAL;
		}
		memcpy(out->name, tmp, strlen(tmp) + 1);
		return 0;
	}
	if (memchr(p, '*', len) != NULL) {
		*why = "a wildcard is only *.DOMAIN, at the start";
		return -EINVAL;
	}
	return cf_host_parse(p, len, 0, out, why);
}

/* Walk the list V, parsing each item into OUT[i] (OUT NULL: check only).
 * Returns the count, or -EINVAL with *WHY. */
static long
parse_direct(const char *v, struct cf_host *out, const char **why)
{
	long n = 0;

	for (;;) {
		const char *comma = strchr(v, ',');
		size_t len = comma ? (size_t)(comma - v) : strlen(v);
		struct cf_host h;

		while (len > 0 && cfb_blank(*v))
			v++, len--;
		while (len > 0 && cfb_blank(v[len - 1]))
			len--;
		if (len == 0) {
			*why = "empty item in the list";
			return -EINVAL;
		}
		if (parse_direct_item(v, len, &h, why) != 0)
			return -EINVAL;
		if (out != NULL)
			out[n] = h;
		n++;
		if (comma == NULL)
			return n;
		v = comma + 1;
	}
}

int
cfp_check(int key, const char *value, const char **why)
{
	struct cf_host h;
	uint16_t port;

	switch (key) {
	case CFP_PROXY:
		return parse_url(value, &h, &port, why);
	case CFP_AUTH:
		if ((strncmp(value, "env:", 4) == 0 && bs_env_name_ok(value + 4)) ||
		    (strncmp(value, "file:", 5) == 0 && value[5] != '\0'))
			return 0;
		*why = "write env:VARIABLE or file:PATH (the file or variable holds user:password)";
		return -EINVAL;
	case CFP_DIRECT:
		return parse_direct(value, NULL, why) < 0 ? -EINVAL : 0;
	case CFP_NAMES:
		if (strcmp(value, "yes") == 0 || strcmp(value, "no") == 0)
			return 0;
		*why = "yes or no";
		return -EINVAL;
	}
	*why = "unknown key";
	return -EINVAL;
}

/* Read the credential SRC names (env:VAR or file:PATH) into BUF (SIZE):
 * its length, or -1 with *WHY. */
static long
read_cred(const char *src, char *buf, size_t size, const char **why)
{
	size_t len = 0;

	if (strncmp(src, "env:", 4) == 0) {
		const char *v = getenv(src + 4);

		if (v == NULL) {
			*why = "the variable is not set";
			return -1;
		}
		len = strlen(v);
		if (len >= size) {
			*why = "the credential is too long";
			return -1;
		}
		memcpy(buf, v, len);
	} else {
		char path[4096 + 256];
		const char *f = src + 5, *dir = getenv("CREDENTIALS_DIRECTORY");
		struct stat st;
		int fd;

		if (f[0] == '/')
			snprintf(path, sizeof(path), "%s", f);
		else if (dir == NULL || dir[0] != '/') {
			*why = "the path is relative and $CREDENTIALS_DIRECTORY is not set to an absolute path";
			return -1;
		} else if (snprintf(path, sizeof(path), "%s/%s", dir, f) >= (int)sizeof(path)) {
			*why = "path too long";
			return -1;
		}
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
			*why = fd < 0 ? "cannot open the file" : "not a regular file";
			if (fd >= 0)
				close(fd);
			return -1;
		}
		for (;;) {
			ssize_t r = read(fd, buf + len, size - len);

			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				*why = "cannot read the file";
				close(fd);
				return -1;
			}
			if (r == 0)
				break;
			len += (size_t)r;
			if (len == size) {
				*why = "the credential is too long";
				close(fd);
				return -1;
			}
		}
		close(fd);
		/* One final newline, as an editor or echo leaves it. */
		if (len > 0 && buf[len - 1] == '\n')
			len--;
		if (len > 0 && buf[len - 1] == '\r')
			len--;
	}
	if (len == 0 || memchr(buf, ':', len) == NULL) {
		*why = "the credential is user:password";
		return -1;
	}
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f) {
			*why = "the credential holds a control character";
			return -1;
		}
	return (long)len;
}

/* The value of key K for session SB, or [defaults]' (D), and its line. */
static const char *
val(const struct cf_sess_build *sb, const struct cf_sess_build *d, int k, int *line)
{
	const struct cf_sess_build *from = sb->up_val[k] != NULL ? sb : d;

	*line = from->up_line[k];
	return from->up_val[k];
}

/* The parent of session SB (D: [defaults]), or NULL with *P NULL when it
 * has none.  Returns 0, -EINVAL (reported) or -ENOMEM. */
static int
one(struct cf_build *b, const struct cf_sess_build *sb, const struct cf_sess_build *d,
    struct cf_parent **pp)
{
	const char *url, *auth, *direct, *names, *why = NULL;
	int lu, la, ld, ln;
	struct cf_parent *p;
	char hs[CF_HOST_TEXT_MAX];

	*pp = NULL;
	url = val(sb, d, CFP_PROXY, &lu);
	auth = val(sb, d, CFP_AUTH, &la);
	direct = val(sb, d, CFP_DIRECT, &ld);
	names = val(sb, d, CFP_NAMES, &ln);
	if (url == NULL) {
		/* Said once, for the section that wrote it. */
		if (sb->up_val[CFP_AUTH] != NULL || (sb == d && auth != NULL))
			cfb_err(b, la, "upstream_proxy_auth without upstream_proxy");
		else if (sb->up_val[CFP_DIRECT] != NULL || (sb == d && direct != NULL))
			cfb_err(b, ld, "upstream_proxy_direct without upstream_proxy");
		else if (sb->up_val[CFP_NAMES] != NULL || (sb == d && names != NULL))
			cfb_err(b, ln, "upstream_proxy_names without upstream_proxy");
		return 0;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return -ENOMEM;
	p->line = lu;
	if (parse_url(url, &p->host, &p->port, &why) != 0) {
		/* Checked when read: only a changed rule could get here. */
		cfb_err(b, lu, "upstream_proxy: %s", why);
		cfp_free(p);
		return -EINVAL;
	}
	cf_host_format(&p->host, hs, sizeof(hs));
	snprintf(p->text, sizeof(p->text), "http://%s:%u", hs, p->port);
	p->names = names != NULL && strcmp(names, "yes") == 0;
	if (direct != NULL) {
		long n = parse_direct(direct, NULL, &why);

		if (n > 0 && (p->direct = calloc((size_t)n, sizeof(*p->direct))) == NULL) {
			cfp_free(p);
			return -ENOMEM;
		}
		if (n > 0)
			p->ndirect = (size_t)parse_direct(direct, p->direct, &why);
	}
	if (auth != NULL) {
		char cred[AUTH_MAX + 1];
		long n = read_cred(auth, cred, sizeof(cred), &why);
		size_t enc = 4 * (((size_t)(n > 0 ? n : 0) + 2) / 3) + 1;

		if (n < 0) {
			/* The source is named, never the value. */
			cfb_err(b, la, "upstream_proxy_auth = %s: %s", auth, why);
			OPENSSL_cleanse(cred, sizeof(cred));
			cfp_free(p);
			return -EINVAL;
		}
		p->auth = OPENSSL_malloc(6 + enc);
		if (p->auth == NULL) {
			OPENSSL_cleanse(cred, sizeof(cred));
			cfp_free(p);
			return -ENOMEM;
		}
		memcpy(p->auth, "Basic ", 6);
		p->auth_len = 6 + (size_t)EVP_EncodeBlock((unsigned char *)p->auth + 6,
		    (const unsigned char *)cred, (int)n);
		p->auth[p->auth_len] = '\0';
		OPENSSL_cleanse(cred, sizeof(cred));
	}
	*pp = p;
	return 0;
}

/* Is P an address and port the proxy itself listens on (L: a TCP
 * listener)?  The proxy would be its own parent, each request a new one. */
static int
is_listener(const struct cf_parent *p, const struct cf_listen *l)
{
	if (l->kind != CF_LISTEN_TCP)
		return 0;
	if (p->host.kind == CF_HOST_IPV4 && l->addr.ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)&l->addr;

		return ntohs(sin->sin_port) == p->port && (sin->sin_addr.s_addr == INADDR_ANY ||
		    sin->sin_addr.s_addr == p->host.addr.v4.s_addr);
	}
	if (p->host.kind == CF_HOST_IPV6 && l->addr.ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)&l->addr;

		return ntohs(sin6->sin6_port) == p->port && (IN6_IS_ADDR_UNSPECIFIED(&sin6->sin6_addr) ||
		    memcmp(&sin6->sin6_addr, &p->host.addr.v6, sizeof(p->host.addr.v6)) == 0);
	}
	return 0;
}

int
cfp_attach(struct cf_build *b, struct cf_session *sessions, size_t n)
{
	size_t i, k, j;

	for (i = 0; i < n; i++) {
		const struct cf_sess_build *sb = i == 0 ? &b->defaults : &b->sess[i - 1];
		const struct cf_parent *p;

		if (one(b, sb, &b->defaults, &sessions[i].parent) == -ENOMEM)
			return -ENOMEM;
		if ((p = sessions[i].parent) == NULL)
			continue;
		for (k = 0; k < n; k++)
			for (j = 0; j < sessions[k].nlisten; j++)
				if (is_listener(p, &sessions[k].listen[j])) {
					cfb_err(b, p->line, "upstream_proxy: %s is the proxy's own listener "
					    "(line %d): it would be its own parent", p->text,
					    sessions[k].listen[j].line);
					/* Said once, for the first session it loops. */
					return 0;
				}
	}
	return 0;
}

void
cfp_free(struct cf_parent *p)
{
	if (p == NULL)
		return;
	if (p->auth != NULL) {
		OPENSSL_cleanse(p->auth, p->auth_len);
		OPENSSL_free(p->auth);
	}
	free(p->direct);
	free(p);
}

/* Does HOST match direct item D (".DOMAIN": any name under DOMAIN)? */
static int
direct_match(const struct cf_host *d, const struct cf_host *host)
{
	size_t dl, hl;

	if (d->kind != CF_HOST_NAME || d->name[0] != '.')
		return cf_host_equal(d, host);
	if (host->kind != CF_HOST_NAME)
		return 0;
	dl = strlen(d->name);
	hl = strlen(host->name);
	return hl > dl && strcmp(host->name + hl - dl, d->name) == 0;
}

const struct cf_parent *
cf_session_parent(const struct cf_session *s, const struct cf_host *host)
{
	size_t i;

	if (s == NULL || s->parent == NULL)
		return NULL;
	for (i = 0; i < s->parent->ndirect; i++)
		if (direct_match(&s->parent->direct[i], host))
			return NULL;
	return s->parent;
}
