/*
 * tests/unit/test-host.c: the one normaliser, with every bypass form of a
 * request target that is refused before any lookup.
 */
#include "config.h"

#include <string.h>

#include "conf/host.h"
#include "tests/unit/tap.h"

struct host_case {
	const char *in;
	int ok;
	enum cf_host_kind kind;
	const char *norm;
};

static const struct host_case host_cases[] = {
	{ "api.anthropic.com", 1, CF_HOST_NAME, "api.anthropic.com" },
	{ "API.Anthropic.COM", 1, CF_HOST_NAME, "api.anthropic.com" },
	{ "api.anthropic.com.", 1, CF_HOST_NAME, "api.anthropic.com" },
	{ "api.anthropic.com..", 0, 0, NULL },
	{ ".", 0, 0, NULL },
	{ "", 0, 0, NULL },
	{ "a..b", 0, 0, NULL },
	{ ".a.b", 0, 0, NULL },
	{ "xn--bcher-kva.example", 1, CF_HOST_NAME, "xn--bcher-kva.example" },
	{ "b\xc3\xbc" "cher.example", 0, 0, NULL },
	{ "-lead.example", 0, 0, NULL },
	{ "trail-.example", 0, 0, NULL },
	{ "under_score.example", 0, 0, NULL },
	{ "sp ace.example", 0, 0, NULL },
	{ "ex%61mple.com", 0, 0, NULL },
	{ "user@example.com", 0, 0, NULL },
	{ "nul\0byte", 0, 0, NULL },
	{ "tab\texample", 0, 0, NULL },
	{ "localhost", 1, CF_HOST_NAME, "localhost" },
	/* IPv4: only the canonical dotted quad. */
	{ "127.0.0.1", 1, CF_HOST_IPV4, "127.0.0.1" },
	{ "10.200.1.2", 1, CF_HOST_IPV4, "10.200.1.2" },
	{ "2130706433", 0, 0, NULL },
	{ "0177.0.0.1", 0, 0, NULL },
	{ "0x7f.1", 0, 0, NULL },
	{ "0x7f.0.0.1", 0, 0, NULL },
	{ "127.1", 0, 0, NULL },
	{ "127.0.1", 0, 0, NULL },
	{ "127.0.0.1.", 0, 0, NULL },
	{ "127.0.0.01", 0, 0, NULL },
	{ "256.0.0.1", 0, 0, NULL },
	{ "1.2.3.4.5", 0, 0, NULL },
	{ "foo.0x7f", 0, 0, NULL },
	{ "foo.123", 0, 0, NULL },
	{ "123.foo", 1, CF_HOST_NAME, "123.foo" },
	{ "0x7f.example", 1, CF_HOST_NAME, "0x7f.example" },
	/* IPv6: bracketed, no zone. */
	{ "[::1]", 1, CF_HOST_IPV6, "::1" },
	{ "[FD00::1]", 1, CF_HOST_IPV6, "fd00::1" },
	{ "[::ffff:127.0.0.1]", 1, CF_HOST_IPV6, "::ffff:127.0.0.1" },
	{ "[fe80::1%eth0]", 0, 0, NULL },
	{ "[fe80::1%25eth0]", 0, 0, NULL },
	{ "::1", 0, 0, NULL },
	{ "[::1", 0, 0, NULL },
	{ "[]", 0, 0, NULL },
	{ "[1:2:3:4:5:6:7:8:9]", 0, 0, NULL },
	{ "[::g]", 0, 0, NULL },
};

struct auth_case {
	const char *in;
	int ok;
	const char *norm;
	unsigned port;
};

static const struct auth_case auth_cases[] = {
	{ "api.anthropic.com:443", 1, "api.anthropic.com", 443 },
	{ "API.anthropic.com.:443", 1, "api.anthropic.com", 443 },
	{ "example.com", 1, "example.com", 0 },
	{ "example.com:1", 1, "example.com", 1 },
	{ "example.com:65535", 1, "example.com", 65535 },
	{ "example.com:0", 0, NULL, 0 },
	{ "example.com:65536", 0, NULL, 0 },
	{ "example.com:0443", 0, NULL, 0 },
	{ "example.com:+443", 0, NULL, 0 },
	{ "example.com:-443", 0, NULL, 0 },
	{ "example.com:443 ", 0, NULL, 0 },
	{ "example.com:443x", 0, NULL, 0 },
	{ "example.com: 443", 0, NULL, 0 },
	{ "example.com:", 0, NULL, 0 },
	{ "example.com:99999999999999999999", 0, NULL, 0 },
	{ "example.com:443:443", 0, NULL, 0 },
	{ "user@example.com:443", 0, NULL, 0 },
	{ "user:pw@example.com:443", 0, NULL, 0 },
	{ "[::1]:443", 1, "::1", 443 },
	{ "[::1]", 1, "::1", 0 },
	{ "[::1]443", 0, NULL, 0 },
	{ "::1:443", 0, NULL, 0 },
	{ "2130706433:443", 0, NULL, 0 },
	{ "127.1:443", 0, NULL, 0 },
	{ "10.0.0.1:8080", 1, "10.0.0.1", 8080 },
	{ ":443", 0, NULL, 0 },
	{ "", 0, NULL, 0 },
};

int
main(void)
{
	size_t i;

	for (i = 0; i < sizeof(host_cases) / sizeof(host_cases[0]); i++) {
		const struct host_case *c = &host_cases[i];
		struct cf_host h;
		const char *why = NULL;
		size_t len = strlen(c->in);
		int rc;

		if (strncmp(c->in, "nul", 4) == 0)
			len = 8; /* "nul\0byte" */
		rc = cf_host_parse(c->in, len, 0, &h, &why);
		if (c->ok)
			tap_ok(rc == 0 && h.kind == c->kind && strcmp(h.name, c->norm) == 0,
			    "host '%s' -> '%s' (%s)", c->in, c->norm, rc ? why : h.name);
		else
			tap_ok(rc != 0 && why != NULL, "host '%s' refused (%s)", c->in,
			    rc ? why : h.name);
	}

	for (i = 0; i < sizeof(auth_cases) / sizeof(auth_cases[0]); i++) {
		const struct auth_case *c = &auth_cases[i];
		struct cf_host h;
		uint16_t port = 0;
		const char *why = NULL;
		int rc = cf_authority_parse(c->in, strlen(c->in), 0, &h, &port, &why);

		if (c->ok)
			tap_ok(rc == 0 && strcmp(h.name, c->norm) == 0 && port == c->port,
			    "authority '%s' -> %s port %u (%s)", c->in, c->norm, c->port,
			    rc ? why : "ok");
		else
			tap_cmp_int(rc, "!=", 0, "authority '%s' refused (%s)", c->in, rc ? why : "accepted");
	}

	{
		struct cf_host h;
		const char *why;
		tap_ok(cf_host_parse("10.0.0.1", 8, CF_HOST_NO_IP, &h, &why) != 0,
		    "server_name mode refuses an IPv4 literal");
		tap_ok(cf_host_parse("[::1]", 5, CF_HOST_NO_IP, &h, &why) != 0,
		    "server_name mode refuses an IPv6 literal");
		tap_ok(cf_host_parse("Api.Example.", 12, CF_HOST_NO_IP, &h, &why) == 0 &&
		    strcmp(h.name, "api.example") == 0, "server_name mode normalises names");
	}
	{
		/* Length limits: 63 per label, 253 in all. */
		char buf[300];
		struct cf_host h;
		const char *why;

		memset(buf, 'a', 63);
		memcpy(buf + 63, ".test", 6);
		tap_cmp_int(cf_host_parse(buf, strlen(buf), 0, &h, &why), "==", 0, "63-octet label accepted");
		memset(buf, 'a', 64);
		memcpy(buf + 64, ".test", 6);
		tap_cmp_int(cf_host_parse(buf, strlen(buf), 0, &h, &why), "!=", 0, "64-octet label refused");
		for (i = 0; i < 126; i++)
			memcpy(buf + 2 * i, "a.", 2);
		buf[251] = 'b';
		buf[252] = 'c';
		buf[253] = '\0';
		tap_cmp_int(cf_host_parse(buf, 253, 0, &h, &why), "==", 0, "253-octet name accepted");
		buf[253] = '.';
		tap_cmp_int(cf_host_parse(buf, 254, 0, &h, &why), "==", 0, "253-octet name with trailing dot accepted");
		buf[253] = 'd';
		tap_cmp_int(cf_host_parse(buf, 254, 0, &h, &why), "!=", 0, "254-octet name refused");
	}
	{
		struct cf_host a, b;
		const char *why;
		char buf[CF_HOST_TEXT_MAX];
		cf_host_parse("[0:0::1]", 8, 0, &a, &why);
		cf_host_parse("[::1]", 5, 0, &b, &why);
		tap_ok(cf_host_equal(&a, &b), "IPv6 literals compare by value");
		tap_cmp_str(cf_host_format(&a, buf, sizeof(buf)), "[::1]",
		    "IPv6 formats in brackets");
	}
	return tap_done();
}
