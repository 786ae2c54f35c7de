/*
 * tests/fuzz/fuzz-secret.c: the inject line parser, the rendering of what
 * is injected, the placeholder maker and the placeholder finder.  The
 * input is "INJECT-LINE\nVALUE\nBYTES".  Invariants: a binding that parses
 * names a host in normal form, a header name that is a token and none of
 * the forbidden ones, a format with exactly one %s and no other %, and
 * re-parses from its own text; what it renders never holds CR, LF or NUL;
 * a placeholder is never the value, is URL-unreserved and at most
 * CF_PLACEHOLDER_MAX long, is the same for a value with another tail past
 * the first 16 bytes (nothing but a listed prefix is taken from the
 * value; unless a value is the placeholder itself), and is found in BYTES
 * exactly when memmem finds it; where a binding finds a placeholder in
 * BYTES (cf_inject_carries()), and that it finds one in what it renders
 * itself.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf/config.h"

#define UNRESERVED "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_inject(const struct cf_inject *inj, const char *value, size_t vlen)
{
	static const char *const forbidden[] = { "connection", "host", "content-length",
		"transfer-encoding", "upgrade", "te", "trailer", "keep-alive", NULL };
	char out[2 * 4096 + 64];
	const char *p;
	long n;
	size_t i;

	if (inj->host[0] == '\0' || inj->port == 0 || inj->name == NULL)
		abort();
	for (i = 0; inj->host[i] != '\0'; i++)
		if (inj->host[i] >= 'A' && inj->host[i] <= 'Z')
			abort();
	for (i = 0; forbidden[i] != NULL; i++)
		if (inj->kind == CF_INJECT_HEADER && strcasecmp(inj->name, forbidden[i]) == 0)
			abort();
	if (inj->format != NULL) {
		p = strchr(inj->format, '%');
		if (p == NULL || p[1] != 's' || strchr(p + 1, '%') != NULL)
			abort();
	}
	n = cf_inject_render(inj, value, vlen, out, sizeof(out));
	if (n >= 0 && (strlen(out) != (size_t)n || strpbrk(out, "\r\n") != NULL))
		abort();
}

/* cf_inject_carries() with VALUE as the placeholder: over BYTES it finds
 * no more than memmem would (BASIC aside, which decodes), and what the
 * binding renders from VALUE always carries it. */
static void
check_carries(const struct cf_inject *inj, const char *value, size_t vlen, const char *bytes,
    size_t blen)
{
	char out[2 * 4096 + 64];
	int hit = cf_inject_carries(inj, bytes, blen, value, vlen);
	int raw = vlen > 0 && blen >= vlen && memmem(bytes, blen, value, vlen) != NULL;
	size_t i, plain = 1;
	long n;

	if ((inj->kind == CF_INJECT_HEADER && hit != raw) || (inj->kind == CF_INJECT_QUERY && hit && !raw))
		abort();
	out[0] = '/';
	out[1] = '?';
	n = cf_inject_render(inj, value, vlen, out + 2, sizeof(out) - 2);
	for (i = 0; i < vlen; i++)
		plain &= strchr("-._~", value[i]) != NULL || (value[i] >= '0' && value[i] <= '9') ||
		    ((value[i] | 0x20) >= 'a' && (value[i] | 0x20) <= 'z');
	if (n < 0 || vlen == 0 || (inj->kind == CF_INJECT_QUERY && !plain))
		return;
	if (inj->kind == CF_INJECT_QUERY ? !cf_inject_carries(inj, out, (size_t)n + 2, value, vlen) :
	    !cf_inject_carries(inj, out + 2, (size_t)n, value, vlen))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), *nl, *value = NULL, *bytes = NULL;
	size_t vlen = 0, blen = 0;
	struct cf_inject inj, again;
	const char *why;

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	nl = memchr(s, '\n', size);
	if (nl != NULL) {
		*nl = '\0';
		value = nl + 1;
		bytes = memchr(value, '\n', size - (size_t)(value - s));
		if (bytes != NULL) {
			*bytes++ = '\0';
			blen = size - (size_t)(bytes - s);
		}
		vlen = strlen(value);
	}
	if (strlen(s) == (nl ? (size_t)(nl - s) : size) && cf_inject_parse(s, &inj, &why) == 0) {
		/* A value is what the config admits: no control bytes. */
		size_t i, ok = 1;
		for (i = 0; i < vlen; i++)
			ok &= (unsigned char)value[i] >= 0x20 && value[i] != 0x7f;
		check_inject(&inj, ok && value != NULL ? value : "v", ok && value != NULL ? vlen : 1);
		check_carries(&inj, ok && value != NULL ? value : "v", ok && value != NULL ? vlen : 1,
		    bytes ? bytes : "", blen);
		if (cf_inject_parse(inj.text, &again, &why) != 0 || strcmp(again.host, inj.host) != 0 ||
		    again.port != inj.port || again.kind != inj.kind)
			abort();
		cf_inject_clear(&again);
		cf_inject_clear(&inj);
	}
	if (value != NULL && vlen > 0 && vlen <= CF_SECRET_MAX) {
		static const char *const names[] = { "s", "anthropic", "deepseek", "mistral" };
		const char *name = names[vlen % 4];
		char ph[CF_PLACEHOLDER_MAX + 1], ph2[CF_PLACEHOLDER_MAX + 1], *other;
		long n = cf_placeholder_make("fuzz", name, NULL, value, vlen, ph, sizeof(ph)), m;
		size_t i;
		if (n >= 0) {
			struct cf_session sess;
			char *phs[1] = { ph };
			const struct cf_secret *secs[1] = { NULL };
			long found;
			if ((size_t)n > CF_PLACEHOLDER_MAX || ((size_t)n == vlen && memcmp(ph, value, vlen) == 0) ||
			    strlen(ph) != (size_t)n || strspn(ph, UNRESERVED) != (size_t)n)
				abort();
			/* Past the longest listed prefix, the value does not
			 * count: another tail gives the same placeholder. */
			if ((other = malloc(vlen + 2)) == NULL)
				abort();
			memcpy(other, value, vlen);
			for (i = 16; i < vlen; i++)
				other[i] = other[i] == 'x' ? 'y' : 'x';
			other[vlen] = 'z';
			other[vlen + 1] = '\0';
			m = cf_placeholder_make("fuzz", name, NULL, other, vlen + (vlen >= 16), ph2, sizeof(ph2));
			/* Unless one of the two values is the other's
			 * placeholder: that one was drawn again. */
			if (m != n || (strcmp(ph2, ph) != 0 && strcmp(ph2, value) != 0 && strcmp(ph, other) != 0))
				abort();
			free(other);
			memset(&sess, 0, sizeof(sess));
			sess.secrets = secs;
			sess.placeholders = phs;
			sess.nsecrets = 1;
			found = cf_session_find_placeholder(&sess, bytes ? bytes : "", blen);
			if ((found == 0) != (blen >= (size_t)n && memmem(bytes, blen, ph, (size_t)n) != NULL))
				abort();
		}
	}
	free(s);
	return 0;
}
