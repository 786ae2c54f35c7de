/*
 * tests/unit/test-awskey.c: [secret NAME] kind = aws-sigv4 (conf/awskey.h,
 * conf/secret.h): its keys and their errors with FILE:LINE and never a
 * value, the placeholders (an access key id of AWS's shape, a 40-character
 * secret key, a session token only with one; random per session, never a
 * real value), the hosts it binds (*.amazonaws.com unless written), and
 * the names the session CA is constrained to.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/awskey.h"
#include "conf/config.h"
#include "conf/secret.h"
#include "tests/unit/tap.h"

#define HEAD "[proxy]\nlisten = tcp:127.0.0.1:3128\n[defaults]\nallow_hosts = *.amazonaws.com, s3.test\n"
/* Lines 1-4 are HEAD; a section's first key is on line 7. */
#define AWS(body) HEAD "secrets = aws\n[secret aws]\nkind = aws-sigv4\n" body

#define REAL_SECRET "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define REAL_ID "AKIAIOSFODNN7EXAMPLE"
#define REAL_TOKEN "RealSessionToken0123456789abcdefXYZ"

static struct cf_config *
parse(const char *text, struct cf_diag *d)
{
	memset(d, 0, sizeof(*d));
	return cf_config_parse("t.ini", text, strlen(text), NULL, d);
}

static int
has_error(const struct cf_diag *d, const char *s)
{
	size_t i;

	for (i = 0; i < d->nerrors; i++)
		if (strstr(d->errors[i], s) != NULL)
			return 1;
	return 0;
}

static int
no_value_in(const struct cf_diag *d)
{
	static const char *const v[] = { REAL_SECRET, REAL_ID, REAL_TOKEN, NULL };
	size_t i, j;

	for (j = 0; v[j] != NULL; j++)
		for (i = 0; i < d->nerrors; i++)
			if (strstr(d->errors[i], v[j]) != NULL)
				return 0;
	return 1;
}

static const struct {
	const char *what, *text, *expect;
} errs[] = {
	{ "no key id", AWS("from_env = TA_SECRET\n"),
	    "t.ini:6: secret aws (kind aws-sigv4) needs exactly one of access_key_id and access_key_id_env" },
	{ "two key ids", AWS("from_env = TA_SECRET\naccess_key_id = " REAL_ID "\naccess_key_id_env = TA_ID\n"),
	    "needs exactly one of access_key_id and access_key_id_env" },
	{ "a key id of the wrong shape", AWS("from_env = TA_SECRET\naccess_key_id = akia-lower\n"),
	    "t.ini:9: access_key_id is 16 to 128 upper-case letters and digits (what is written is not shown)" },
	{ "a bad variable name", AWS("from_env = TA_SECRET\naccess_key_id_env = " REAL_SECRET "\n"),
	    "t.ini:9: access_key_id_env is an environment variable's name" },
	{ "a relative token file", AWS("from_env = TA_SECRET\naccess_key_id_env = TA_ID\nsession_token_file = tok\n"),
	    "t.ini:10: session_token_file is an absolute path (tok)" },
	{ "both token sources", AWS("from_env = TA_SECRET\naccess_key_id_env = TA_ID\nsession_token_env = TA_TOKEN\n"
	    "session_token_file = /nonexistent\n"), "session_token_env and session_token_file both set" },
	{ "bad hosts", AWS("from_env = TA_SECRET\naccess_key_id_env = TA_ID\nhosts = *.com\n"),
	    "t.ini:10: hosts is a list of host names or *.DOMAIN" },
	{ "hosts with an address", AWS("from_env = TA_SECRET\naccess_key_id_env = TA_ID\nhosts = 10.0.0.1\n"),
	    "t.ini:10: hosts is a list" },
	{ "inject lines refused", AWS("from_env = TA_SECRET\naccess_key_id_env = TA_ID\n"
	    "inject = s3.test header x-k\n"), "is bound by hosts =, not by inject lines" },
	{ "aws keys on a static secret", HEAD "secrets = s\n[secret s]\nfrom_env = TA_SECRET\n"
	    "inject = s3.test header x-k\naccess_key_id = " REAL_ID "\n", "t.ini:6: secret s: access_key_id is for "
	    "kind = aws-sigv4" },
	{ "key id variable unset", AWS("from_env = TA_SECRET\naccess_key_id_env = TA_UNSET\n"),
	    "secret aws: $TA_UNSET is not set" },
	{ "token variable unset", AWS("from_env = TA_SECRET\naccess_key_id_env = TA_ID\nsession_token_env = TA_UNSET\n"),
	    "secret aws: $TA_UNSET is not set" },
	{ "key id variable of the wrong shape", AWS("from_env = TA_SECRET\naccess_key_id_env = TA_SECRET\n"),
	    "secret aws: $TA_SECRET is not an access key id" },
	{ "unknown kind", HEAD "secrets = s\n[secret s]\nkind = aws\n", "t.ini:7: kind is static, aws-sigv4, oauth2 or github-app (aws)" },
};

static int
shape(const char *s, const char *prefix, size_t n, const char *set)
{
	size_t pl = strlen(prefix);

	return s != NULL && strlen(s) == pl + n && strncmp(s, prefix, pl) == 0 && strspn(s + pl, set) == n;
}

int
main(void)
{
	static const char up[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	struct cf_diag d;
	struct cf_config *c;
	const struct cf_session *s;
	const struct cf_secret *sec;
	const char *const *names;
	size_t i, n, tl = 0;
	char id1[64];

	setenv("TA_SECRET", REAL_SECRET, 1);
	setenv("TA_ID", REAL_ID, 1);
	setenv("TA_TOKEN", REAL_TOKEN, 1);
	unsetenv("TA_UNSET");
	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		c = parse(errs[i].text, &d);
		tap_ok(c == NULL && has_error(&d, errs[i].expect) && no_value_in(&d), "%s: %s%s%s", errs[i].what,
		    errs[i].expect, d.nerrors ? " / got: " : " / no error", d.nerrors ? d.errors[0] : "");
		cf_config_free(c);
		cf_diag_free(&d);
	}

	/* Without a token: two variables; the default hosts. */
	c = parse(AWS("from_env = TA_SECRET\naccess_key_id = " REAL_ID "\n")
	    "[session b]\nlisten = tcp:127.0.0.1:3129\nsecrets = aws\n", &d);
	tap_ok(c != NULL, "kind = aws-sigv4 with access_key_id loads%s%s", d.nerrors ? ": " : "",
	    d.nerrors ? d.errors[0] : "");
	if (c == NULL)
		return tap_done();
	s = cf_config_session(c, 0);
	sec = cf_session_secret(s, 0);
	tap_ok(sec != NULL && cf_secret_kind(sec) == CF_SECRET_AWS_SIGV4 && cf_secret_aws(sec) != NULL,
	    "the secret is aws-sigv4");
	tap_cmp_str(cf_secret_placeholder_env(sec), "AWS_ACCESS_KEY_ID", "placeholder_env defaults to AWS_ACCESS_KEY_ID");
	tap_ok(shape(cf_session_placeholder(s, 0), "AKIA", 16, up), "the key id placeholder is AKIA and 16 of "
	    "[A-Z0-9]: %s", cf_session_placeholder(s, 0));
	tap_cmp_str(cf_secret_more_env(sec, 0), "AWS_SECRET_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY is given");
	tap_ok(shape(cf_session_placeholder_more(s, 0, 0), "", 40, b64), "its placeholder is 40 characters");
	tap_ok(strcmp(cf_session_placeholder_more(s, 0, 0), REAL_SECRET) != 0, "and not the real key");
	tap_ok(cf_secret_more_env(sec, 1) == NULL && cf_session_placeholder_more(s, 0, 1) == NULL,
	    "no AWS_SESSION_TOKEN without a token");
	snprintf(id1, sizeof(id1), "%s", cf_session_placeholder(s, 0));
	tap_ok(strcmp(cf_session_placeholder(cf_config_find_session(c, "b"), 0), id1) != 0,
	    "another session has another key id placeholder");
	tap_cmp_str(cf_aws_key_id(cf_secret_aws(sec)), REAL_ID, "the real key id is kept");
	tap_ok(cf_session_aws_secret(s, "sts.amazonaws.com", 443) == 0 &&
	    cf_session_aws_secret(s, "bucket.s3.eu-west-1.amazonaws.com", 443) == 0,
	    "bound to names under amazonaws.com");
	tap_ok(cf_session_aws_secret(s, "amazonaws.com", 443) < 0 && cf_session_aws_secret(s, "evilamazonaws.com", 443) < 0 &&
	    cf_session_aws_secret(s, "sts.amazonaws.com", 8443) < 0 && cf_session_aws_secret(s, "s3.test", 443) < 0,
	    "not to amazonaws.com itself, a name that only ends so, another port or another host");
	tap_ok(cf_session_terminates(s, "sts.amazonaws.com", 443), "its hosts are terminated");
	tap_ok(cf_secret_binding(sec, "sts.amazonaws.com", 443, "/", 1) != NULL &&
	    cf_secret_binding(sec, "s3.test", 443, "/", 1) == NULL, "a binding on its hosts only");
	tap_ok(cf_session_bound_secret(s, "sts.amazonaws.com", 443) < 0, "no injection binding (nothing narrowed)");
	n = cf_session_terminated_hosts(s, &names);
	tap_ok(n == 1 && strcmp(names[0], "amazonaws.com") == 0, "the CA is constrained to amazonaws.com");
	cf_config_free(c);
	cf_diag_free(&d);

	/* With a token and hosts =. */
	c = parse(AWS("from_env = TA_SECRET\naccess_key_id_env = TA_ID\nsession_token_env = TA_TOKEN\n"
	    "hosts = s3.test, *.s3.test:8443\nplaceholder_env = MY_ID\n"), &d);
	tap_ok(c != NULL, "with a token and hosts = it loads%s%s", d.nerrors ? ": " : "", d.nerrors ? d.errors[0] : "");
	if (c == NULL)
		return tap_done();
	s = cf_config_session(c, 0);
	sec = cf_session_secret(s, 0);
	tap_cmp_str(cf_secret_placeholder_env(sec), "MY_ID", "placeholder_env as written");
	tap_cmp_str(cf_secret_more_env(sec, 1), "AWS_SESSION_TOKEN", "AWS_SESSION_TOKEN is given");
	tap_ok(cf_session_placeholder_more(s, 0, 1) != NULL &&
	    strcmp(cf_session_placeholder_more(s, 0, 1), REAL_TOKEN) != 0 &&
	    strncmp(cf_session_placeholder_more(s, 0, 1), "FwoGZXIvYXdzE", 13) == 0, "its placeholder is not the token");
	tap_ok(cf_aws_token(cf_secret_aws(sec), &tl) != NULL && tl == strlen(REAL_TOKEN), "the real token is read");
	tap_ok(cf_session_aws_secret(s, "s3.test", 443) == 0 && cf_session_aws_secret(s, "b.s3.test", 8443) == 0 &&
	    cf_session_aws_secret(s, "b.s3.test", 443) < 0 && cf_session_aws_secret(s, "sts.amazonaws.com", 443) < 0,
	    "hosts = replaces the default");
	cf_config_free(c);
	cf_diag_free(&d);
	return tap_done();
}
