/*
 * proxy/proto/proxyauth.c: Proxy-Authorization values and the bridge's
 * preface (see proxyauth.h).
 */
#include "config.h"

#include <string.h>

#include "base/text.h"
#include "proxy/proto/proxyauth.h"

static int
lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/* Nonzero when the LEN bytes at S begin with the word W, any case, then a
 * blank. */
static int
scheme_is(const char *s, size_t len, const char *w)
{
	size_t n = strlen(w), i;

	if (len <= n || (s[n] != ' ' && s[n] != '\t'))
		return 0;
	for (i = 0; i < n; i++)
		if (lower((unsigned char)s[i]) != w[i])
			return 0;
	return 1;
}

/* Nonzero when every byte of the LEN at S is printable ASCII, no blank. */
static int
visible(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return 0;
	return 1;
}

/* Split the LEN bytes at S at the first ':' into OUT; with no ':' the
 * whole is the token (when MAY_BARE) or it is bad. */
static int
split(const char *s, size_t len, int may_bare, struct px_proxyauth *out, const char **why)
{
	const char *colon = memchr(s, ':', len);

	memset(out, 0, sizeof(*out));
	if (colon == NULL) {
		if (!may_bare) {
			*why = "the Basic credential has no ':' between the session's name and its token";
			return PX_PROXYAUTH_BAD;
		}
		out->token = s;
		out->token_len = len;
	} else {
		out->name = s;
		out->name_len = (size_t)(colon - s);
		out->token = colon + 1;
		out->token_len = len - out->name_len - 1;
		if (out->name_len == 0) {
			*why = "the credential's session name is empty";
			return PX_PROXYAUTH_BAD;
		}
	}
	if (out->token_len == 0) {
		*why = "the credential's token is empty";
		return PX_PROXYAUTH_BAD;
	}
	return PX_PROXYAUTH_OK;
}

int
px_proxyauth_header(const char *v, size_t len, char *buf, size_t size, struct px_proxyauth *out,
    const char **why)
{
	size_t i;
	long n;

	memset(out, 0, sizeof(*out));
	while (len > 0 && (v[len - 1] == ' ' || v[len - 1] == '\t'))
		len--;
	if (scheme_is(v, len, "basic")) {
		for (i = 5; i < len && (v[i] == ' ' || v[i] == '\t'); i++)
			;
		n = bs_b64_decode(v + i, len - i, (unsigned char *)buf, size);
		if (n < 0) {
			*why = "the Basic credential is not base64 (or is too long)";
			return PX_PROXYAUTH_BAD;
		}
		if (memchr(buf, '\0', (size_t)n) != NULL) {
			*why = "the Basic credential holds a NUL byte";
			return PX_PROXYAUTH_BAD;
		}
		return split(buf, (size_t)n, 0, out, why);
	}
	if (scheme_is(v, len, "bearer")) {
		for (i = 6; i < len && (v[i] == ' ' || v[i] == '\t'); i++)
			;
		if (!visible(v + i, len - i)) {
			*why = "the Bearer token has a blank or a byte other than printable ASCII";
			return PX_PROXYAUTH_BAD;
		}
		out->token = v + i;
		out->token_len = len - i;
		if (out->token_len == 0) {
			*why = "the Bearer token is empty";
			return PX_PROXYAUTH_BAD;
		}
		return PX_PROXYAUTH_OK;
	}
	*why = "Proxy-Authorization takes the Basic (NAME:TOKEN) or Bearer (TOKEN) scheme only";
	return PX_PROXYAUTH_BAD;
}

int
px_proxyauth_preface(const char *data, size_t len, size_t *used, struct px_proxyauth *out,
    const char **why)
{
	static const char word[] = PX_PROXYAUTH_PREFACE;
	size_t wl = sizeof(word) - 1, i, end;

	memset(out, 0, sizeof(*out));
	if (memcmp(data, word, len < wl ? len : wl) != 0)
		return PX_PROXYAUTH_NONE;
	if (len <= wl)
		return PX_PROXYAUTH_INCOMPLETE;
	for (i = wl; i < len && data[i] != '\n'; i++)
		if (i >= PX_PROXYAUTH_PREFACE_MAX) {
			*why = "the POSTERN-TOKEN line is too long";
			return PX_PROXYAUTH_BAD;
		}
	if (i == len)
		return PX_PROXYAUTH_INCOMPLETE;
	if (i + 1 > PX_PROXYAUTH_PREFACE_MAX) {
		*why = "the POSTERN-TOKEN line is too long";
		return PX_PROXYAUTH_BAD;
	}
	end = i > wl && data[i - 1] == '\r' ? i - 1 : i;
	if (end == wl || !visible(data + wl, end - wl)) {
		*why = "the POSTERN-TOKEN line is not one credential of printable ASCII";
		return PX_PROXYAUTH_BAD;
	}
	*used = i + 1;
	return split(data + wl, end - wl, 1, out, why);
}

int
px_proxyauth_socks(const unsigned char *data, size_t len, size_t *used, struct px_proxyauth *out,
    const char **why)
{
	size_t ulen, plen;

	memset(out, 0, sizeof(*out));
	if (len < 1)
		return PX_PROXYAUTH_INCOMPLETE;
	if (data[0] != 0x01) {
		*why = "the SOCKS5 username/password request is not version 1 (RFC 1929)";
		return PX_PROXYAUTH_BAD;
	}
	if (len < 2)
		return PX_PROXYAUTH_INCOMPLETE;
	ulen = data[1];
	if (ulen == 0) {
		*why = "the SOCKS5 username (the session's name) is empty";
		return PX_PROXYAUTH_BAD;
	}
	if (len < 2 + ulen + 1)
		return PX_PROXYAUTH_INCOMPLETE;
	plen = data[2 + ulen];
	if (plen == 0) {
		*why = "the SOCKS5 password (the session's token) is empty";
		return PX_PROXYAUTH_BAD;
	}
	if (len < 3 + ulen + plen)
		return PX_PROXYAUTH_INCOMPLETE;
	out->name = (const char *)data + 2;
	out->name_len = ulen;
	out->token = (const char *)data + 3 + ulen;
	out->token_len = plen;
	*used = 3 + ulen + plen;
	return PX_PROXYAUTH_OK;
}
