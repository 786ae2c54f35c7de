/*
 * tests/unit/test-secret.c: named secrets (conf/secret.h): every error
 * with its FILE:LINE text and never the value, the built-in providers,
 * the placeholders (nothing of the value in them past a listed vendor
 * prefix, a length fixed by the prefix, characters uniform over the
 * alphabet, placeholder_prefix =) and their stability across a reparse,
 * and the lookups the proxy makes on a request.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "conf/config.h"
#include "tests/unit/tap.h"
#include "tests/unit/conferr.h"

#define HEAD "[proxy]\nlisten = tcp:127.0.0.1:3128\n[defaults]\nallow_hosts = a.test, b.test:8443\n"
/* Lines 1-4 are HEAD; a case's own lines start at 5. */
#define SEC(body) HEAD "secrets = s\n[secret s]\n" body

/* The value of TS_OK, which no message may ever show. */
#define VALUE_OK "tsok-Secret-Value-0123456789abcdef"

static char tmpdir[64];
static char path_lf[128], path_empty[128], path_mid[128], path_long[128];

static const struct err_case err_cases[] = {
	{ "unknown secret", HEAD "secrets = anthropc\n",
	    "t.ini:5: unknown secret anthropc (not a [secret] of the file nor a built-in); did you mean anthropic?" },
	{ "built-in without its variable", HEAD "allow_hosts = api.openai.com\nsecrets = openai\n",
	    "t.ini:6: secret openai: $OPENAI_API_KEY is not set" },
	{ "file secret without its variable", SEC("from_env = TS_UNSET\ninject = a.test header x-k\n"),
	    "t.ini:5: secret s: $TS_UNSET is not set" },
	{ "binding to a host the session does not allow", SEC("from_env = TS_OK\ninject = c.test header x-k\n"),
	    "t.ini:5: secret s is bound to c.test:443, which session default does not allow" },
	{ "binding to a port the session does not allow", SEC("from_env = TS_OK\ninject = a.test:8443 header x-k\n"),
	    "t.ini:5: secret s is bound to a.test:8443, which session default does not allow" },
	{ "binding in a session's own rules",
	    HEAD "[session a]\nlisten = tcp:127.0.0.1:3129\nsecrets = s\n[secret s]\nfrom_env = TS_OK\n"
	    "inject = c.test header x-k\n",
	    "t.ini:7: secret s is bound to c.test:443, which session a does not allow" },
	{ "binding to a host a deny rule covers",
	    HEAD "deny_hosts = a.test\nsecrets = s\n[secret s]\nfrom_env = TS_OK\ninject = a.test header x-k\n",
	    "t.ini:6: secret s is bound to a.test:443, which session default does not allow" },
	{ "format with two %s", SEC("from_env = TS_OK\ninject = a.test header A \"x %s %s\"\n"),
	    "t.ini:8: inject: a format holds exactly one %s and no other %" },
	{ "format without %s", SEC("from_env = TS_OK\ninject = a.test header A \"Bearer\"\n"),
	    "t.ini:8: inject: a format holds exactly one %s and no other %" },
	{ "format with %d", SEC("from_env = TS_OK\ninject = a.test header A \"%s %d\"\n"),
	    "t.ini:8: inject: a format holds exactly one %s and no other %" },
	{ "format with %%", SEC("from_env = TS_OK\ninject = a.test header A \"%%s\"\n"),
	    "t.ini:8: inject: a format holds exactly one %s and no other %" },
	{ "format unquoted", SEC("from_env = TS_OK\ninject = a.test header A Bearer %s\n"),
	    "t.ini:8: inject: a header's format is written in double quotes" },
	{ "text after the format", SEC("from_env = TS_OK\ninject = a.test header A \"B %s\" x\n"),
	    "t.ini:8: inject: nothing may follow a header's format" },
	{ "hop-by-hop header", SEC("from_env = TS_OK\ninject = a.test header Connection\n"),
	    "t.ini:8: inject: a secret may not set a hop-by-hop header" },
	{ "Host header", SEC("from_env = TS_OK\ninject = a.test header host\n"),
	    "t.ini:8: inject: a secret may not set a hop-by-hop header, Host" },
	{ "Content-Length header", SEC("from_env = TS_OK\ninject = a.test header Content-Length\n"),
	    "t.ini:8: inject: a secret may not set" },
	{ "Transfer-Encoding header", SEC("from_env = TS_OK\ninject = a.test header TRANSFER-ENCODING\n"),
	    "t.ini:8: inject: a secret may not set" },
	{ "header name not a token", SEC("from_env = TS_OK\ninject = a.test header x(k)\n"),
	    "t.ini:8: inject: a header name is a token" },
	{ "CR in a value", SEC("from_env = TS_CR\ninject = a.test header x-k\n"),
	    "t.ini:5: secret s: $TS_CR holds a control character" },
	{ "LF inside a file's value", SEC("from_file = @MID\nplaceholder_env = S\ninject = a.test header x-k\n"),
	    "holds a control character" },
	{ "empty file", SEC("from_file = @EMPTY\nplaceholder_env = S\ninject = a.test header x-k\n"),
	    "is empty" },
	{ "value too long", SEC("from_file = @LONG\nplaceholder_env = S\ninject = a.test header x-k\n"),
	    "is longer than 4096 bytes" },
	{ "unreadable file", SEC("from_file = /nonexistent/key\nplaceholder_env = S\ninject = a.test header x-k\n"),
	    "t.ini:5: secret s: cannot read /nonexistent/key: No such file or directory" },
	{ "relative file without CREDENTIALS_DIRECTORY",
	    SEC("from_file = key\nplaceholder_env = S\ninject = a.test header x-k\n"),
	    "t.ini:5: secret s: from_file key is relative and $CREDENTIALS_DIRECTORY is not set" },
	{ "relative file with a slash", SEC("from_file = a/key\nplaceholder_env = S\ninject = a.test header x-k\n"),
	    "t.ini:7: from_file is an absolute path, or the plain name of a credential" },
	{ "two secrets set one header on one host",
	    HEAD "secrets = s1, s2\n[secret s1]\nfrom_env = TS_OK\ninject = a.test header X-K\n"
	    "[secret s2]\nfrom_env = TS_OK2\ninject = a.test header x-k\n",
	    "t.ini:5: secrets s1 and s2 both set x-k on a.test:443 (session default)" },
	{ "basic and an Authorization header clash",
	    HEAD "secrets = s1\nsecrets = s2\n[secret s1]\nfrom_env = TS_OK\ninject = a.test basic u\n"
	    "[secret s2]\nfrom_env = TS_OK2\ninject = a.test header Authorization \"Bearer %s\"\n",
	    "t.ini:6: secrets s1 and s2 both set Authorization on a.test:443 (session default)" },
	{ "two secrets set one query parameter",
	    HEAD "secrets = s1, s2\n[secret s1]\nfrom_env = TS_OK\ninject = a.test query key\n"
	    "[secret s2]\nfrom_env = TS_OK2\ninject = a.test/v1 query key\n",
	    "t.ini:5: secrets s1 and s2 both set key on a.test:443" },
	{ "one secret sets one header twice", SEC("from_env = TS_OK\ninject = a.test header x-k\ninject = a.test header x-k\n"),
	    "t.ini:9: secret s sets x-k on a.test:443 twice" },
	{ "both sources", SEC("from_env = TS_OK\nfrom_file = /x\ninject = a.test header x-k\n"),
	    "t.ini:6: secret s needs exactly one of from_env and from_file" },
	{ "no source", SEC("inject = a.test header x-k\n"),
	    "t.ini:6: secret s needs exactly one of from_env and from_file" },
	{ "from_file without placeholder_env", SEC("from_file = /x\ninject = a.test header x-k\n"),
	    "t.ini:6: secret s reads from_file: name the sandbox's variable with placeholder_env" },
	{ "no inject line", SEC("from_env = TS_OK\n"),
	    "t.ini:6: secret s has no inject line: it could be sent nowhere" },
	{ "binding to an address", SEC("from_env = TS_OK\ninject = 10.0.0.1 header x-k\n"),
	    "t.ini:8: inject: a binding names one host by name, not a pattern or an address" },
	{ "binding to a wildcard", SEC("from_env = TS_OK\ninject = *.a.test header x-k\n"),
	    "t.ini:8: inject: a binding names one host by name" },
	{ "binding to a port range", SEC("from_env = TS_OK\ninject = a.test:1-2 header x-k\n"),
	    "t.ini:8: inject: a binding names one port, not a range" },
	{ "binding as a URL", SEC("from_env = TS_OK\ninject = https://a.test/ header x-k\n"),
	    "t.ini:8: inject: write the binding's target as HOST[:PORT][/PATH], not a URL" },
	{ "binding with a dot segment", SEC("from_env = TS_OK\ninject = a.test/v1/../x header x-k\n"),
	    "t.ini:8: inject: path prefix with a dot segment" },
	{ "unknown method", SEC("from_env = TS_OK\ninject = a.test cookie k\n"),
	    "t.ini:8: inject: the method is header, basic or query" },
	{ "bad query parameter", SEC("from_env = TS_OK\ninject = a.test query k=v\n"),
	    "t.ini:8: inject: a query parameter's name holds unreserved characters only" },
	{ "Basic user with a colon", SEC("from_env = TS_OK\ninject = a.test basic u:p\n"),
	    "t.ini:8: inject: a Basic user name is printable, without ':'" },
	{ "basic with two words", SEC("from_env = TS_OK\ninject = a.test basic u v\n"),
	    "t.ini:8: inject: basic and query take one word" },
	{ "inject in [defaults]", HEAD "inject = a.test header x-k\n",
	    "t.ini:5: inject belongs in a [secret NAME], not in [defaults]" },
	{ "secrets in a [secret]", SEC("secrets = s\n"),
	    "t.ini:7: secrets belongs in [defaults] or a [session NAME], not in [secret s]" },
	{ "did you mean, in a [secret]", SEC("from_evn = TS_OK\n"),
	    "t.ini:7: unknown key in [secret s] (from_evn); did you mean from_env?" },
	{ "duplicate [secret]", SEC("from_env = TS_OK\ninject = a.test header x-k\n[secret s]\n"),
	    "t.ini:9: duplicate secret s (first on line 6)" },
	{ "bad secret name", HEAD "[secret a/b]\n", "t.ini:5: bad secret name" },
	{ "bad variable name", SEC("from_env = 1X\n"),
	    "t.ini:7: from_env is an environment variable's name" },
	{ "a value pasted for a variable is not shown", SEC("from_env = sk-ant-api03-PASTEDVALUE\n"),
	    "t.ini:7: from_env is an environment variable's name: letters, digits and _, not starting with a "
	    "digit, at most 128 (what is written is not shown: it may be the secret itself)" },
	{ "two placeholders in one variable",
	    HEAD "secrets = s1, s2\n[secret s1]\nfrom_env = TS_OK\ninject = a.test header x-1\n"
	    "[secret s2]\nfrom_env = TS_OK2\nplaceholder_env = TS_OK\ninject = a.test header x-2\n",
	    "t.ini:5: secrets s1 and s2 both put their placeholder in $TS_OK (session default)" },
	{ "from_env twice", SEC("from_env = TS_OK\nfrom_env = TS_OK2\n"),
	    "t.ini:8: from_env is given twice (first on line 7)" },
	{ "bad name in secrets =", HEAD "secrets = a b\n", "t.ini:5: bad secret name" },
	{ "inject_when takes a word it knows", SEC("from_env = TS_OK\ninject_when = sometimes\n"),
	    "t.ini:8: inject_when is placeholder (only on a request that carries the placeholder where "
	    "a binding puts the value) or always (sometimes)" },
	{ "inject_when twice", SEC("from_env = TS_OK\ninject_when = always\ninject_when = placeholder\n"),
	    "t.ini:9: inject_when is given twice (first on line 8)" },
	{ "inject_when in [defaults]", HEAD "inject_when = always\n",
	    "t.ini:5: inject_when belongs in a [secret NAME], not in [defaults]" },
	{ "did you mean inject_when", SEC("inject_wen = always\n"),
	    "t.ini:7: unknown key in [secret s] (inject_wen); did you mean inject_when?" },
	{ "kind takes a word it knows", SEC("from_env = TS_OK\nkind = magic\n"),
	    "t.ini:8: kind is static, aws-sigv4, oauth2 or github-app (magic)" },
	{ "oauth2 needs token_url", SEC("kind = oauth2\nclient_id = c\nfrom_env = TS_OK\ninject = a.test header x-k\n"),
	    "t.ini:6: secret s: kind = oauth2 needs token_url" },
	{ "oauth2 needs client_id", SEC("kind = oauth2\ntoken_url = https://t.test/t\nfrom_env = TS_OK\n"
	    "inject = a.test header x-k\n"), "t.ini:6: secret s: kind = oauth2 needs client_id" },
	{ "token_url is https", SEC("kind = oauth2\ntoken_url = http://t.test/t\n"),
	    "t.ini:8: token_url is an https:// URL (http://t.test/t)" },
	{ "token_url on a static secret", SEC("token_url = https://t.test/t\nfrom_env = TS_OK\n"
	    "inject = a.test header x-k\n"), "t.ini:6: secret s: token_url is not a key of kind = static" },
	{ "oauth2 with neither a client secret nor a refresh token",
	    SEC("kind = oauth2\ntoken_url = https://t.test/t\nclient_id = c\ninject = a.test header x-k\n"),
	    "t.ini:6: secret s needs exactly one of from_env and from_file (the client secret), or a "
	    "refresh token (refresh_token_env or refresh_token_file)" },
	{ "github-app needs the session's repositories", SEC("kind = github-app\napp_id = 1\n"
	    "installation_id = 2\nprivate_key_file = /nonexistent/app.pem\ninject = a.test header x-k\n"),
	    "t.ini:5: secret s (kind = github-app) needs github_repositories in session default" },
	{ "github-app takes no from_env", SEC("kind = github-app\napp_id = 1\ninstallation_id = 2\n"
	    "private_key_file = /x.pem\nfrom_env = TS_OK\n"),
	    "t.ini:6: secret s: kind = github-app takes private_key_file, not from_env or from_file" },
	{ "github-app needs app_id", SEC("kind = github-app\ninstallation_id = 2\nprivate_key_file = /x.pem\n"),
	    "t.ini:6: secret s: kind = github-app needs app_id" },
	{ "app_id is a number", SEC("app_id = 1x\n"), "t.ini:7: app_id is a number (1x)" },
	{ "private_key_file is absolute", SEC("private_key_file = app.pem\n"),
	    "t.ini:7: private_key_file is an absolute path (app.pem)" },
	{ "a private key that cannot be read", HEAD "github_repositories = o/r\n" "secrets = s\n[secret s]\n"
	    "kind = github-app\napp_id = 1\ninstallation_id = 2\nprivate_key_file = /nonexistent/app.pem\n",
	    "secret s: cannot read /nonexistent/app.pem" },
	{ "github_repositories is OWNER/REPO", HEAD "github_repositories = org/a, b\n",
	    "t.ini:5: github_repositories is a list of OWNER/REPO" },
	{ "github_repositories with a path", HEAD "github_repositories = org/a/b\n",
	    "t.ini:5: github_repositories is a list of OWNER/REPO" },
	{ "github_permissions levels", HEAD "github_permissions = contents:all\n",
	    "t.ini:5: github_permissions is a list of NAME:read, NAME:write or NAME:admin" },
	{ "two refresh token sources", SEC("kind = oauth2\ntoken_url = https://t.test/t\nclient_id = c\n"
	    "refresh_token_env = TS_OK\nrefresh_token_file = /x\ninject = a.test header x-k\n"),
	    "t.ini:6: secret s: refresh_token_env and refresh_token_file are one or the other" },
	{ "a refresh token only needs placeholder_env", SEC("kind = oauth2\ntoken_url = https://t.test/t\n"
	    "client_id = c\nrefresh_token_env = TS_OK\ninject = a.test header x-k\n"),
	    "t.ini:6: secret s: name the sandbox's variable with placeholder_env" },
	{ "kind in [defaults]", HEAD "kind = static\n",
	    "t.ini:5: kind belongs in a [secret NAME], not in [defaults]" },
	{ "empty item in secrets =", HEAD "secrets = anthropic,,openai\n", "t.ini:5: empty item in list" },
	{ "placeholder_prefix with a space", SEC("placeholder_prefix = my key\n"),
	    "t.ini:7: placeholder_prefix is at most 32 letters, digits, '-', '.', '_' and '~' (what is "
	    "written is not shown: it may be the secret itself)" },
	{ "placeholder_prefix with a slash", SEC("from_env = TS_OK\nplaceholder_prefix = a/b\n"),
	    "t.ini:8: placeholder_prefix is at most 32 letters" },
	{ "placeholder_prefix with a quote", SEC("placeholder_prefix = a\"b\n"),
	    "t.ini:7: placeholder_prefix is at most 32 letters" },
	{ "placeholder_prefix too long", SEC("placeholder_prefix = abcdefghijklmnopqrstuvwxyz0123456\n"),
	    "t.ini:7: placeholder_prefix is at most 32 letters" },
	{ "a value pasted for a prefix is not shown", SEC("placeholder_prefix = sk-ant-api03-PASTEDVALUE/x\n"),
	    "t.ini:7: placeholder_prefix is at most 32 letters, digits, '-', '.', '_' and '~' (what is "
	    "written is not shown" },
	{ "placeholder_prefix twice", SEC("placeholder_prefix = a\nplaceholder_prefix = b\n"),
	    "t.ini:8: placeholder_prefix is given twice (first on line 7)" },
	{ "placeholder_prefix in a session", HEAD "placeholder_prefix = a\n",
	    "t.ini:5: placeholder_prefix belongs in a [secret NAME]" },
};

/* Nonzero when no error or warning of D holds any of the values. */
static int
no_value_in(const struct cf_diag *d)
{
	static const char *const values[] = { VALUE_OK, "tsok2-Other-Value-abcdefghijklmnop",
		"crval", "file-value-line", "PASTEDVALUE", NULL };
	size_t i, j;

	for (j = 0; values[j] != NULL; j++) {
		for (i = 0; i < d->nerrors; i++)
			if (strstr(d->errors[i], values[j]) != NULL)
				return 0;
		for (i = 0; i < d->nwarnings; i++)
			if (strstr(d->warnings[i], values[j]) != NULL)
				return 0;
	}
	return 1;
}

/* TEXT with @MID, @EMPTY, @LONG replaced by the test files' paths. */
static char *
expand(const char *text)
{
	static const struct {
		const char *tag;
		const char *path;
	} tags[] = { { "@MID", path_mid }, { "@EMPTY", path_empty }, { "@LONG", path_long },
		{ "@LF", path_lf } };
	char *out = malloc(strlen(text) + 512), *o = out;
	size_t i;

	while (*text != '\0') {
		for (i = 0; i < sizeof(tags) / sizeof(tags[0]); i++)
			if (strncmp(text, tags[i].tag, strlen(tags[i].tag)) == 0)
				break;
		if (i < sizeof(tags) / sizeof(tags[0])) {
			o += sprintf(o, "%s", tags[i].path);
			text += strlen(tags[i].tag);
		} else {
			*o++ = *text++;
		}
	}
	*o = '\0';
	return out;
}

static struct cf_config *
parse(const char *text, const struct cf_overrides *ov, struct cf_diag *d)
{
	char *t = expand(text);
	struct cf_config *c;

	memset(d, 0, sizeof(*d));
	c = cf_config_parse("t.ini", t, strlen(t), ov, d);
	free(t);
	return c;
}

static void
write_file(char *path, size_t size, const char *name, const char *content, size_t len)
{
	FILE *f;

	snprintf(path, size, "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	if (f == NULL || fwrite(content, 1, len, f) != len || fclose(f) != 0) {
		perror(path);
		exit(99);
	}
}

static const char ALNUM[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
static const char HEX[] = "0123456789abcdef";

/* The placeholder of VALUE for SECRET (PREFIX set, or NULL) in SESSION. */
static long
make(const char *session, const char *secret, const char *prefix, const char *value, char *ph)
{
	return cf_placeholder_make(session, secret, prefix, value, strlen(value), ph, CF_PLACEHOLDER_MAX + 1);
}

/* A random value into OUT: PREFIX, then 1 to 300 characters of every
 * class, with a '-' and a '_' at random places of the first 16 (where the
 * old placeholder took its prefix from) and more further on.  Without a
 * PREFIX it starts with a digit, as no listed format does. */
static void
random_value(char *out, const char *prefix)
{
	static const char set[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~!+/=";
	size_t pl = strlen(prefix), n = 1 + (size_t)rand() % 300, i;

	memcpy(out, prefix, pl);
	for (i = 0; i < n; i++)
		out[pl + i] = set[(size_t)rand() % (sizeof(set) - 1)];
	if (pl == 0)
		out[0] = (char)('0' + rand() % 10);
	if (n > 2) {
		out[pl + 1 + (size_t)rand() % (n - 1 < 15 ? n - 1 : 15)] = '_';
		out[pl + 1 + (size_t)rand() % (n - 1 < 15 ? n - 1 : 15)] = '-';
	}
	out[pl + n] = '\0';
}

/*
 * For 300 random values of SECRET starting with VPREFIX: the placeholder
 * is WANT then LEN characters of SET, never the value, and one and the
 * same for every value (nothing of a value but the listed prefix it
 * starts with goes in).
 */
static void
check_format(const char *secret, const char *vprefix, const char *want, size_t len, const char *set)
{
	char v[CF_SECRET_MAX + 1], first[CF_PLACEHOLDER_MAX + 1], ph[CF_PLACEHOLDER_MAX + 1];
	size_t i, wl = strlen(want), shape = 0, same = 0, never = 0;
	long n;

	for (i = 0; i < 300; i++) {
		random_value(v, vprefix);
		n = make("s", secret, NULL, v, ph);
		if (n < 0)
			break;
		shape += len >= CF_PLACEHOLDER_MIN_RANDOM && (size_t)n == wl + len && strlen(ph) == (size_t)n &&
		    strncmp(ph, want, wl) == 0 && strspn(ph + wl, set) == len;
		if (i == 0)
			memcpy(first, ph, (size_t)n + 1);
		same += strcmp(first, ph) == 0;
		never += strcmp(ph, v) != 0;
	}
	tap_cmp_int(shape, "==", 300, "%s, values %s...: %s then %zu of [%s] (%zu of 300; %s)", secret, vprefix, want,
	    len, set == HEX ? "0-9a-f" : "A-Za-z0-9", shape, ph);
	tap_cmp_int(same, "==", 300, "%s, values %s...: one placeholder whatever the value (%zu of 300)", secret,
	    vprefix, same);
	tap_cmp_int(never, "==", 300, "%s, values %s...: never the value", secret, vprefix);
}

/*
 * Over the placeholders of N sessions (secret SECRET, value VALUE), each
 * character past the prefix's PL is uniform over SET: a chi-square below
 * LIMIT (p < 1e-9 for its degrees of freedom), and at every position
 * every class of SET appears.
 */
static void
check_uniform(const char *secret, const char *value, size_t pl, const char *set, size_t n, double limit)
{
	size_t counts[128], m = strlen(set), total = 0, i, j, len = 0, missing = 0;
	unsigned classes[CF_PLACEHOLDER_MAX];
	char session[32], ph[CF_PLACEHOLDER_MAX + 1];
	double chi = 0;

	memset(counts, 0, sizeof(counts));
	memset(classes, 0, sizeof(classes));
	for (i = 0; i < n; i++) {
		long k;
		snprintf(session, sizeof(session), "s%zu", i);
		if ((k = make(session, secret, NULL, value, ph)) < 0)
			break;
		len = (size_t)k;
		for (j = pl; j < len; j++) {
			unsigned char c = (unsigned char)ph[j];
			counts[c & 127]++;
			total++;
			classes[j] |= c >= '0' && c <= '9' ? 1u : c >= 'a' && c <= 'z' ? 2u : 4u;
		}
	}
	for (i = 0; i < m; i++) {
		double e = (double)total / (double)m, d = (double)counts[(unsigned char)set[i]] - e;
		chi += d * d / e;
	}
	for (j = pl; j < len; j++)
		missing += classes[j] != (set == HEX ? 3u : 7u);
	tap_ok(total == n * (len - pl) && chi < limit,
	    "%s: %zu random characters uniform over %zu (chi-square %.1f < %.0f)", secret, total, m, chi, limit);
	tap_ok(len > pl && missing == 0, "%s: every class at every position (%zu positions lack one)", secret,
	    missing);
}

int
main(void)
{
	char longv[5000];
	size_t i;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-secret.XXXXXX");
	if (mkdtemp(tmpdir) == NULL)
		return 99;
	write_file(path_lf, sizeof(path_lf), "lf", "file-value-line-0123456789\n", 27);
	write_file(path_empty, sizeof(path_empty), "empty", "\n", 1);
	write_file(path_mid, sizeof(path_mid), "mid", "file-value-line\nsecond", 22);
	memset(longv, 'x', 4097);
	write_file(path_long, sizeof(path_long), "long", longv, 4097);
	setenv("TS_OK", VALUE_OK, 1);
	setenv("TS_OK2", "tsok2-Other-Value-abcdefghijklmnop", 1);
	setenv("TS_CR", "crval\rinjected: yes", 1);
	unsetenv("TS_UNSET");
	unsetenv("OPENAI_API_KEY");
	unsetenv("CREDENTIALS_DIRECTORY");

	for (i = 0; i < sizeof(err_cases) / sizeof(err_cases[0]); i++) {
		struct cf_diag d;
		struct cf_config *c = parse(err_cases[i].text, NULL, &d);

		tap_ok(c == NULL && has_error(&d, err_cases[i].expect) && no_value_in(&d),
		    "%s: \"%s\"%s%s", err_cases[i].what, err_cases[i].expect,
		    d.nerrors ? " got: " : " no error", d.nerrors ? d.errors[0] : "");
		cf_config_free(c);
		cf_diag_free(&d);
	}

	/* The built-ins: every provider usable by name, on its host. */
	{
		static const struct {
			const char *name, *env, *host;
			enum cf_inject_kind kind;
			const char *header, *format;
		} want[] = {
			{ "anthropic", "ANTHROPIC_API_KEY", "api.anthropic.com", CF_INJECT_HEADER, "x-api-key", NULL },
			{ "openai", "OPENAI_API_KEY", "api.openai.com", CF_INJECT_HEADER, "Authorization", "Bearer %s" },
			{ "openrouter", "OPENROUTER_API_KEY", "openrouter.ai", CF_INJECT_HEADER, "Authorization", "Bearer %s" },
			{ "mistral", "MISTRAL_API_KEY", "api.mistral.ai", CF_INJECT_HEADER, "Authorization", "Bearer %s" },
			{ "deepseek", "DEEPSEEK_API_KEY", "api.deepseek.com", CF_INJECT_HEADER, "Authorization", "Bearer %s" },
			{ "google", "GEMINI_API_KEY", "generativelanguage.googleapis.com", CF_INJECT_HEADER,
			  "x-goog-api-key", NULL },
			{ "github", "GH_TOKEN", "api.github.com", CF_INJECT_HEADER, "Authorization", "Bearer %s" },
		};
		static const char text[] = "[proxy]\nlisten = tcp:127.0.0.1:3128\n[defaults]\n"
		    "allow_hosts = api.anthropic.com, api.openai.com, openrouter.ai, api.mistral.ai\n"
		    "allow_hosts = api.deepseek.com, generativelanguage.googleapis.com, api.github.com, github.com\n"
		    "secrets = anthropic, openai, openrouter, mistral, deepseek, google, github\n";
		const struct cf_session *s;
		const char *const *hosts;
		struct cf_diag d;
		struct cf_config *c;
		size_t n, ok = 0;

		for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
			setenv(want[i].env, "builtin-value-0123456789abcdefgh", 1);
		c = parse(text, NULL, &d);
		tap_ok(c != NULL, "the built-ins load when their variables are set (%s)",
		    d.nerrors ? d.errors[0] : "ok");
		if (c == NULL)
			return tap_done();
		s = cf_config_session(c, 0);
		tap_cmp_int(cf_session_nsecrets(s), "==", 7, "seven built-ins selected (%zu)", cf_session_nsecrets(s));
		for (i = 0; i < sizeof(want) / sizeof(want[0]) && i < cf_session_nsecrets(s); i++) {
			const struct cf_secret *sec = cf_session_secret(s, i);
			const struct cf_inject *inj = cf_secret_inject(sec, 0);
			ok += strcmp(cf_secret_name(sec), want[i].name) == 0 &&
			    strcmp(cf_secret_placeholder_env(sec), want[i].env) == 0 &&
			    cf_secret_builtin(sec) && strcmp(inj->host, want[i].host) == 0 && inj->port == 443 &&
			    inj->kind == want[i].kind && strcmp(inj->name, want[i].header) == 0 &&
			    (want[i].format == NULL ? inj->format == NULL :
			    inj->format != NULL && strcmp(inj->format, want[i].format) == 0);
		}
		tap_cmp_int(ok, "==", 7, "each built-in: its name, variable, host, header and format (%zu of 7)", ok);
		{
			const struct cf_secret *gh = cf_session_secret(s, 6);
			const struct cf_inject *git = cf_secret_inject(gh, 1);
			tap_ok(cf_secret_ninject(gh) == 2 && git != NULL && git->kind == CF_INJECT_BASIC &&
			    strcmp(git->host, "github.com") == 0 && strcmp(git->user, "x-access-token") == 0,
			    "github: also Basic x-access-token for git on github.com");
			tap_ok(cf_secret_inject_always(gh) && !cf_secret_inject_always(cf_session_secret(s, 0)),
			    "github injects on every request (git sends no credential before a 401), "
			    "the others only where the placeholder is");
		}
		n = cf_session_terminated_hosts(s, &hosts);
		tap_ok(n == 8 && strcmp(hosts[7], "github.com") == 0, "eight distinct terminated hosts (%zu)", n);
		tap_cmp_int(cf_config_nsecrets(c), "==", 7, "--check lists the seven selected built-ins (%zu)",
		    cf_config_nsecrets(c));
		cf_config_free(c);
		cf_diag_free(&d);
		/* An unselected built-in is never read. */
		unsetenv("ANTHROPIC_API_KEY");
		c = parse(HEAD, NULL, &d);
		tap_ok(c != NULL && cf_config_nsecrets(c) == 0 && cf_session_nsecrets(cf_config_session(c, 0)) == 0,
		    "an unselected built-in is never read nor listed");
		cf_config_free(c);
		cf_diag_free(&d);
		/* A [secret] of a built-in's name replaces it. */
		c = parse(HEAD "secrets = anthropic\n[secret anthropic]\nfrom_env = TS_OK\n"
		    "inject = a.test header x-api-key\n", NULL, &d);
		tap_ok(c != NULL && cf_session_nsecrets(cf_config_session(c, 0)) == 1 &&
		    !cf_secret_builtin(cf_session_secret(cf_config_session(c, 0), 0)) &&
		    strcmp(cf_secret_placeholder_env(cf_session_secret(cf_config_session(c, 0), 0)), "TS_OK") == 0,
		    "a [secret] replaces the built-in of its name (%s)", d.nerrors ? d.errors[0] : "ok");
		cf_config_free(c);
		cf_diag_free(&d);
	}

	/* Placeholders: a listed prefix, a fixed length, nothing else of the
	 * value.  The built-ins, each with its own formats and, for a value
	 * of none listed, the provider's own. */
	srand(15);
	check_format("anthropic", "sk-ant-api03-", "sk-ant-api03-", 95, ALNUM);
	check_format("anthropic", "sk-ant-oat01-", "sk-ant-oat01-", 95, ALNUM);
	check_format("anthropic", "", "sk-ant-api03-", 95, ALNUM);
	check_format("openai", "sk-proj-", "sk-proj-", 156, ALNUM);
	check_format("openai", "sk-svcacct-", "sk-svcacct-", 156, ALNUM);
	check_format("openai", "sk-", "sk-", 48, ALNUM);
	check_format("openai", "", "sk-proj-", 156, ALNUM);
	check_format("openrouter", "sk-or-v1-", "sk-or-v1-", 64, HEX);
	check_format("openrouter", "", "sk-or-v1-", 64, HEX);
	check_format("mistral", "", "", 32, ALNUM);
	check_format("deepseek", "sk-", "sk-", 32, HEX);
	check_format("deepseek", "", "sk-", 32, HEX);
	check_format("google", "AIza", "AIza", 35, ALNUM);
	check_format("google", "", "AIza", 35, ALNUM);
	check_format("github", "ghp_", "ghp_", 36, ALNUM);
	check_format("github", "gho_", "gho_", 36, ALNUM);
	check_format("github", "github_pat_", "github_pat_", 82, ALNUM);
	check_format("github", "", "ghp_", 36, ALNUM);
	/* A [secret] of another name: a listed prefix, or none. */
	check_format("s", "sk-ant-api03-", "sk-ant-api03-", 95, ALNUM);
	check_format("s", "sk-", "sk-", 48, ALNUM);
	check_format("s", "glpat-", "glpat-", 20, ALNUM);
	check_format("s", "hf_", "hf_", 34, ALNUM);
	check_format("s", "", "", 32, ALNUM);
	check_format("s", "tsok-", "", 32, ALNUM);
	check_format("s", "sk_live_", "", 32, ALNUM);
	check_format("s", "sk-an", "sk-", 48, ALNUM);
	check_uniform("s", "x", 0, ALNUM, 2000, 153);
	check_uniform("openrouter", "sk-or-v1-0123", 9, HEX, 1000, 76);
	{
		char a[CF_PLACEHOLDER_MAX + 1], b[CF_PLACEHOLDER_MAX + 1], c[CF_PLACEHOLDER_MAX + 1];
		char small[CF_PLACEHOLDER_MAX];
		long n;

		/* The value that happens to be its own placeholder. */
		n = make("s", "anthropic", NULL, "sk-ant-api03-x", a);
		tap_ok(n == 108 && make("s", "anthropic", NULL, a, b) == n && strcmp(a, b) != 0 &&
		    strncmp(b, "sk-ant-api03-", 13) == 0, "a value equal to its placeholder gets another one");
		n = make("s", "s", "myco_", "sk-ant-api03-x", a);
		tap_ok(n == 5 + 32 && strncmp(a, "myco_", 5) == 0 && strspn(a + 5, ALNUM) == 32,
		    "a set prefix, unlisted: it, then 32 random characters (%s)", a);
		n = make("s", "s", "sk-ant-api03-", "x", a);
		tap_ok(n == 108 && strncmp(a, "sk-ant-api03-", 13) == 0, "a set prefix that is listed: its length");
		n = make("s", "s", "", "sk-ant-api03-x", a);
		tap_ok(n == 32 && strspn(a, ALNUM) == 32, "a set empty prefix: none, whatever the value");
		n = make("s", "deepseek", "sk-", "x", a);
		tap_ok(n == 35 && strspn(a + 3, HEX) == 32, "a set prefix listed for the provider: its format");
		tap_ok(make("s", "s", "a b", "x", a) == -EINVAL &&
		    make("s", "s", "abcdefghijklmnopqrstuvwxyz0123456", "x", a) == -EINVAL,
		    "a bad prefix: -EINVAL");
		tap_ok(make("s", "s", NULL, "x", a) > 0 && make("t", "s", NULL, "x", b) > 0 &&
		    make("s", "u", NULL, "x", c) > 0 && strcmp(a, b) != 0 && strcmp(a, c) != 0,
		    "another session or secret: another placeholder");
		tap_ok(cf_placeholder_make("s", "openai", NULL, "sk-proj-x", 9, small, 164) == -ENOSPC &&
		    cf_placeholder_make("s", "openai", NULL, "sk-proj-x", 9, small, 165) == 164,
		    "too small a buffer: -ENOSPC");
	}

	/* Stability: same session, secret and value give the same
	 * placeholder at every parse (a reload); another session or another
	 * value another one. */
	{
		static const char text[] = HEAD "secrets = s\n[session a]\nlisten = tcp:127.0.0.1:3129\n"
		    "[secret s]\nfrom_env = TS_OK\ninject = a.test header x-k\n";
		struct cf_diag d1, d2, d3;
		struct cf_config *c1 = parse(text, NULL, &d1), *c2 = parse(text, NULL, &d2), *c3;
		const char *p1, *p2, *pa;

		if (!tap_ok(c1 != NULL && c2 != NULL, "a secret from the environment loads (%s)",
		    d1.nerrors ? d1.errors[0] : "ok"))
			return tap_done();
		p1 = cf_session_placeholder(cf_config_session(c1, 0), 0);
		p2 = cf_session_placeholder(cf_config_session(c2, 0), 0);
		pa = cf_session_placeholder(cf_config_find_session(c1, "a"), 0);
		tap_cmp_str(p1, p2, "a reparse keeps the placeholder (%s)", p1);
		tap_ok(strcmp(p1, pa) != 0 && strlen(p1) == strlen(pa),
		    "another session gets another placeholder of the same shape");
		tap_ok(strlen(p1) == 32 && strspn(p1, ALNUM) == 32,
		    "an unlisted value: 32 random letters and digits, its tsok- not kept (%s)", p1);
		{
			size_t len = 0;
			const char *v = cf_secret_value(cf_session_secret(cf_config_session(c1, 0), 0), &len);
			tap_ok(v != NULL && len == strlen(VALUE_OK) && strcmp(v, VALUE_OK) == 0,
			    "the value is held for injection");
		}
		/* A key rotated with a reload: the sandbox's placeholder
		 * still works.  One of another format: that format's. */
		setenv("TS_OK", "tsok-Changed-Value-0123456789abcdef-longer", 1);
		c3 = parse(text, NULL, &d3);
		tap_ok(c3 != NULL && strcmp(cf_session_placeholder(cf_config_session(c3, 0), 0), p1) == 0,
		    "a changed value of the same format keeps the placeholder");
		cf_config_free(c3);
		cf_diag_free(&d3);
		setenv("TS_OK", "sk-proj-Changed", 1);
		c3 = parse(text, NULL, &d3);
		tap_ok(c3 != NULL && strncmp(cf_session_placeholder(cf_config_session(c3, 0), 0), "sk-proj-", 8) == 0 &&
		    strlen(cf_session_placeholder(cf_config_session(c3, 0), 0)) == 164,
		    "a value of another format gets that format's placeholder");
		setenv("TS_OK", VALUE_OK, 1);
		cf_config_free(c3);
		cf_diag_free(&d3);
		/* A bad file does not touch the snapshot in force. */
		unsetenv("TS_OK");
		c3 = parse(text, NULL, &d3);
		tap_ok(c3 == NULL && has_error(&d3, "t.ini:5: secret s: $TS_OK is not set") &&
		    strcmp(cf_session_placeholder(cf_config_session(c1, 0), 0), p1) == 0,
		    "a reload whose value is gone is refused; the old snapshot keeps its secrets");
		setenv("TS_OK", VALUE_OK, 1);
		cf_diag_free(&d3);
		cf_config_free(c1);
		cf_config_free(c2);
		cf_diag_free(&d1);
		cf_diag_free(&d2);
	}

	/* A path rule admits a binding to its host: inside a terminated
	 * tunnel each request is decided by its path. */
	{
		struct cf_diag d;
		struct cf_config *c = parse("[proxy]\nlisten = tcp:127.0.0.1:3128\n[defaults]\n"
		    "allow_hosts = g.test/my-org/\nsecrets = s\n[secret s]\nfrom_env = TS_OK\n"
		    "inject = g.test basic x-access-token\n", NULL, &d);
		tap_ok(c != NULL && cf_session_terminates(cf_config_session(c, 0), "g.test", 443),
		    "an allow rule with a path admits a binding to its host (%s)", d.nerrors ? d.errors[0] : "ok");
		cf_config_free(c);
		cf_diag_free(&d);
	}

	/* A value from a file: absolute, and relative to
	 * $CREDENTIALS_DIRECTORY; its trailing newline is not part of it. */
	{
		struct cf_diag d;
		struct cf_config *c;
		size_t len = 0;
		const char *v;

		c = parse(SEC("from_file = @LF\nplaceholder_env = FILE_KEY\ninject = a.test header x-k\n"), NULL, &d);
		v = c ? cf_secret_value(cf_session_secret(cf_config_session(c, 0), 0), &len) : NULL;
		tap_ok(v != NULL && strcmp(v, "file-value-line-0123456789") == 0 && len == 26,
		    "from_file: the value without its newline (%s)", d.nerrors ? d.errors[0] : "ok");
		v = c ? cf_session_placeholder(cf_config_session(c, 0), 0) : NULL;
		tap_ok(v != NULL && strlen(v) == 32 && strspn(v, ALNUM) == 32,
		    "from_file: a password-like value's placeholder keeps none of it (%s)", v ? v : "none");
		cf_config_free(c);
		cf_diag_free(&d);
		c = parse(SEC("from_file = @LF\nplaceholder_env = FILE_KEY\nplaceholder_prefix = myco_\n"
		    "inject = a.test header x-k\n"), NULL, &d);
		v = c ? cf_session_placeholder(cf_config_session(c, 0), 0) : NULL;
		tap_ok(v != NULL && strlen(v) == 37 && strncmp(v, "myco_", 5) == 0 && strspn(v + 5, ALNUM) == 32,
		    "placeholder_prefix = myco_: it, then 32 random characters (%s)",
		    d.nerrors ? d.errors[0] : v ? v : "none");
		cf_config_free(c);
		cf_diag_free(&d);
		setenv("TS_PROJ", "sk-proj-Secret_Value-0123", 1);
		c = parse(SEC("from_env = TS_PROJ\nplaceholder_prefix =\ninject = a.test header x-k\n"), NULL, &d);
		v = c ? cf_session_placeholder(cf_config_session(c, 0), 0) : NULL;
		tap_ok(v != NULL && strlen(v) == 32 && strspn(v, ALNUM) == 32,
		    "placeholder_prefix = (empty): no prefix, not even a listed one (%s)",
		    d.nerrors ? d.errors[0] : v ? v : "none");
		cf_config_free(c);
		cf_diag_free(&d);
		setenv("CREDENTIALS_DIRECTORY", tmpdir, 1);
		c = parse(SEC("from_file = lf\nplaceholder_env = FILE_KEY\ninject = a.test header x-k\n"), NULL, &d);
		v = c ? cf_secret_value(cf_session_secret(cf_config_session(c, 0), 0), &len) : NULL;
		tap_ok(v != NULL && strcmp(v, "file-value-line-0123456789") == 0,
		    "from_file: a plain name is read from $CREDENTIALS_DIRECTORY (%s)",
		    d.nerrors ? d.errors[0] : "ok");
		unsetenv("CREDENTIALS_DIRECTORY");
		cf_config_free(c);
		cf_diag_free(&d);
	}

	/* Selection: [defaults] first, then the session's own, each once; a
	 * session that listens nowhere gets none and needs no value. */
	{
		static const char text[] = "[defaults]\nallow_hosts = a.test\nsecrets = s1\n"
		    "[session a]\nlisten = tcp:127.0.0.1:3129\nsecrets = s2, s1\n"
		    "[session b]\nlisten = tcp:127.0.0.1:3130\nsecrets = s3\n"
		    "[secret s1]\nfrom_env = TS_OK\ninject = a.test header x-1\n"
		    "[secret s2]\nfrom_env = TS_OK2\ninject = a.test header x-2\n"
		    "[secret s3]\nfrom_env = TS_UNSET\ninject = a.test header x-3\n"
		    "[secret unused]\nfrom_env = TS_UNSET\ninject = a.test header x-4\n";
		struct cf_overrides ov;
		struct cf_diag d;
		struct cf_config *c;
		const struct cf_session *a;

		memset(&ov, 0, sizeof(ov));
		ov.serve_session = "a";
		ov.extra_listen = (const char *const[]){ "tcp:127.0.0.1:3140" };
		ov.n_extra_listen = 1;
		c = parse(text, &ov, &d);
		tap_ok(c != NULL, "sessions not served need no value (%s)", d.nerrors ? d.errors[0] : "ok");
		if (c != NULL) {
			a = cf_config_find_session(c, "a");
			tap_ok(cf_session_nsecrets(a) == 2 && strcmp(cf_secret_name(cf_session_secret(a, 0)), "s1") == 0 &&
			    strcmp(cf_secret_name(cf_session_secret(a, 1)), "s2") == 0,
			    "a: [defaults]' s1, then its own s2, s1 once");
			tap_ok(cf_session_nsecrets(cf_config_find_session(c, "b")) == 0 &&
			    cf_session_nsecrets(cf_config_session(c, 0)) == 0, "b and default listen nowhere: none");
			tap_ok(d.nwarnings == 1 && strstr(d.warnings[0], "t.ini:19: secret unused is given to no session"),
			    "an unused [secret] warns (%s)", d.nwarnings ? d.warnings[0] : "none");
		}
		cf_config_free(c);
		cf_diag_free(&d);
		c = parse(text, NULL, &d);
		tap_ok(c == NULL && has_error(&d, "t.ini:9: secret s3: $TS_UNSET is not set"),
		    "served, b's missing value is an error at its secrets = line");
		cf_config_free(c);
		cf_diag_free(&d);
	}

	/* The lookups. */
	{
		static const char text[] = "[proxy]\nlisten = tcp:127.0.0.1:3128\n[defaults]\n"
		    "allow_hosts = a.test, b.test, b.test:8443, m.test\nsecrets = s, q\n"
		    "[secret s]\nfrom_env = TS_OK\n"
		    "inject = a.test header Authorization \"Bearer %s\"\n"
		    "inject = a.test/v1/ header x-v1\n"
		    "inject = b.test:8443 basic user\n"
		    "[secret q]\nfrom_env = TS_OK2\ninject = m.test/maps query key\n";
		struct cf_diag d;
		struct cf_config *c = parse(text, NULL, &d);
		const struct cf_session *s;
		const struct cf_secret *sec, *q;
		const struct cf_inject *inj;
		const char *const *hosts;
		char out[256], buf[512];
		long n;

		if (!tap_ok(c != NULL, "the lookup config loads (%s)", d.nerrors ? d.errors[0] : "ok"))
			return tap_done();
		s = cf_config_session(c, 0);
		sec = cf_session_secret(s, 0);
		q = cf_session_secret(s, 1);
		inj = cf_secret_binding(sec, "a.test", 443, "/v1/messages", 12);
		tap_ok(inj != NULL && strcmp(inj->name, "x-v1") == 0, "the longest path prefix wins");
		inj = cf_secret_binding(sec, "a.test", 443, "/v2", 3);
		tap_ok(inj != NULL && strcmp(inj->name, "Authorization") == 0, "elsewhere on the host, the host's");
		tap_ok(cf_secret_binding(sec, "a.test", 8443, "/", 1) == NULL, "not on another port");
		tap_ok(cf_secret_binding(sec, "c.test", 443, "/", 1) == NULL, "not on another host");
		tap_ok(cf_secret_binding(q, "m.test", 443, "/mapsx", 6) == NULL &&
		    cf_secret_binding(q, "m.test", 443, "/maps?x=1", 9) != NULL &&
		    cf_secret_binding(q, "m.test", 443, NULL, 0) == NULL,
		    "a path prefix matches on a segment boundary, and not without a path");
		tap_ok(cf_secret_binding(q, "m.test", 443, "/maps/%2e%2e/x", 14) == NULL,
		    "a path with escaped dots never matches a prefix");
		tap_ok(cf_session_terminates(s, "a.test", 443) && cf_session_terminates(s, "b.test", 8443) &&
		    !cf_session_terminates(s, "b.test", 443) && !cf_session_terminates(s, "c.test", 443),
		    "terminated: exactly the bound host:port pairs");
		n = (long)cf_session_terminated_hosts(s, &hosts);
		tap_ok(n == 3 && strcmp(hosts[0], "a.test") == 0 && strcmp(hosts[1], "b.test") == 0 &&
		    strcmp(hosts[2], "m.test") == 0, "terminated hosts, each once (%ld)", n);

		snprintf(buf, sizeof(buf), "GET /x HTTP/1.1\r\nAuthorization: Bearer %s\r\n\r\n",
		    cf_session_placeholder(s, 1));
		tap_cmp_int(cf_session_find_placeholder(s, buf, strlen(buf)), "==", 1, "the placeholder of q is found");
		snprintf(buf, sizeof(buf), "GET /?k=%.*s HTTP/1.1\r\n", (int)strlen(cf_session_placeholder(s, 0)) - 1,
		    cf_session_placeholder(s, 0));
		tap_cmp_int(cf_session_find_placeholder(s, buf, strlen(buf)), "==", -1, "a cut placeholder is not");
		tap_cmp_int(cf_session_find_placeholder(s, VALUE_OK, strlen(VALUE_OK)), "==", -1, "nor the value itself");
		tap_ok(cf_session_find_placeholder(s, "", 0) == -1, "nor anything in nothing");

		inj = cf_secret_binding(sec, "a.test", 443, "/", 1);
		n = cf_inject_render(inj, "sk-1", 4, out, sizeof(out));
		tap_ok(n == 11 && strcmp(out, "Bearer sk-1") == 0, "render a format (%s)", out);
		inj = cf_secret_binding(sec, "b.test", 8443, "/", 1);
		n = cf_inject_render(inj, "pass", 4, out, sizeof(out));
		tap_ok(n > 0 && strcmp(out, "Basic dXNlcjpwYXNz") == 0, "render Basic user:pass (%s)", out);
		inj = cf_secret_binding(q, "m.test", 443, "/maps", 5);
		n = cf_inject_render(inj, "a b&c=d~", 8, out, sizeof(out));
		tap_ok(n > 0 && strcmp(out, "key=a%20b%26c%3Dd~") == 0, "render a query parameter (%s)", out);
		n = cf_inject_render(inj, "abcdef", 6, out, 8);
		tap_ok(n == -ENOSPC && out[0] == '\0', "too small a buffer: -ENOSPC, wiped");
		cf_config_free(c);
		cf_diag_free(&d);
	}

	/* Where a request carries a placeholder (cf_inject_carries()). */
	{
		struct cf_inject h, b, q;
		const char *why = NULL, *ph = "ph-ABCdef0123456789";
		size_t pl = strlen(ph);
		char v[256];
		int vn;

		tap_ok(cf_inject_parse("a.test header Authorization \"Bearer %s\"", &h, &why) == 0 &&
		    cf_inject_parse("a.test basic x-access-token", &b, &why) == 0 &&
		    cf_inject_parse("a.test query key", &q, &why) == 0, "three bindings parse");
		tap_ok(cf_inject_carries(&h, "Bearer ph-ABCdef0123456789", 26, ph, pl) &&
		    cf_inject_carries(&h, "token ph-ABCdef0123456789 x", 27, ph, pl),
		    "header: the placeholder anywhere in the value");
		tap_ok(!cf_inject_carries(&h, "Bearer ph-ABCdef012345678", 25, ph, pl) &&
		    !cf_inject_carries(&h, "", 0, ph, pl) && !cf_inject_carries(&h, "x", 1, ph, 0),
		    "header: a cut placeholder, nothing, or no placeholder does not");
		/* base64("git:ph-ABCdef0123456789") */
		tap_ok(cf_inject_carries(&b, "Basic Z2l0OnBoLUFCQ2RlZjAxMjM0NTY3ODk=", 38, ph, pl) &&
		    cf_inject_carries(&b, "basic  Z2l0OnBoLUFCQ2RlZjAxMjM0NTY3ODk", 38, ph, pl),
		    "basic: the placeholder as the password, any user, padding optional, any case");
		vn = snprintf(v, sizeof(v), "Basic %s", "eDpwaC1BQkNkZWYwMTIzNDU2Nzg5eA==");
		tap_ok(!cf_inject_carries(&b, v, (size_t)vn, ph, pl),
		    "basic: a password that only holds the placeholder does not");
		tap_ok(!cf_inject_carries(&b, "Basic cGgtQUJDZGVmMDEyMzQ1Njc4OQ==", 34, ph, pl),
		    "basic: the placeholder without a user (no colon) does not");
		tap_ok(!cf_inject_carries(&b, "Bearer ph-ABCdef0123456789", 26, ph, pl) &&
		    !cf_inject_carries(&b, "Basic Z2l0OnBoLUFCQ2RlZjAxMjM0NTY3ODk*", 38, ph, pl) &&
		    !cf_inject_carries(&b, "Basic Z2l0OnBoLUFCQ2RlZjAxMjM0NTY3ODk===", 40, ph, pl) &&
		    !cf_inject_carries(&b, "BasicZ2l0OnBoLUFCQ2RlZjAxMjM0NTY3ODk=", 37, ph, pl),
		    "basic: another scheme, a byte outside base64, bad padding, no space: no");
		tap_ok(cf_inject_carries(&q, "/x?a=1&key=ph-ABCdef0123456789", 30, ph, pl) &&
		    cf_inject_carries(&q, "/x?key=ph-ABCdef0123456789&b", 28, ph, pl),
		    "query: the parameter named by the binding holds it");
		tap_ok(!cf_inject_carries(&q, "/x?other=ph-ABCdef0123456789", 28, ph, pl) &&
		    !cf_inject_carries(&q, "/x/ph-ABCdef0123456789?key=1", 28, ph, pl) &&
		    !cf_inject_carries(&q, "/x?akey=ph-ABCdef0123456789", 27, ph, pl) &&
		    !cf_inject_carries(&q, "/key=ph-ABCdef0123456789", 24, ph, pl),
		    "query: another parameter, the path, a longer name, no query: no");
		cf_inject_clear(&h);
		cf_inject_clear(&b);
		cf_inject_clear(&q);
	}

	/* The inject parser on its own. */
	{
		struct cf_inject inj;
		const char *why = NULL;
		tap_ok(cf_inject_parse("A.Test:8443/v1 header X-Key \"Token %s;x\"", &inj, &why) == 0 &&
		    strcmp(inj.host, "a.test") == 0 && inj.port == 8443 && strcmp(inj.path, "/v1") == 0 &&
		    strcmp(inj.format, "Token %s;x") == 0, "host normalised, port, path and format (%s)",
		    why ? why : "ok");
		cf_inject_clear(&inj);
		tap_ok(cf_inject_parse("", &inj, &why) == -EINVAL, "an empty binding is refused");
		tap_ok(cf_inject_parse("a.test header", &inj, &why) == -EINVAL, "header without a name");
		tap_ok(cf_inject_parse("a.test header x \"%s", &inj, &why) == -EINVAL, "unterminated format");
		tap_ok(cf_inject_parse("a.test header x \"\x01%s\"", &inj, &why) == -EINVAL, "control byte in a format");
		cf_inject_clear(NULL);
	}

	unlink(path_lf);
	unlink(path_empty);
	unlink(path_mid);
	unlink(path_long);
	rmdir(tmpdir);
	return tap_done();
}
