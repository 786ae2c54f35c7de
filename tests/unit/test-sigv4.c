/*
 * tests/unit/test-sigv4.c: proxy/proto/sigv4.c against AWS's published
 * example and against signatures botocore made (python3-botocore 1.29,
 * S3SigV4Auth, S3SigV4QueryAuth and SigV4Auth with the clock fixed at
 * 20150830T123600Z), and its refusals of malformed forms.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "proxy/proto/sigv4.h"
#include "tests/unit/tap.h"

static const char SECRET[] = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
static const char EMPTY_SHA[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

#define H(n, v) { n, sizeof(n) - 1, v, sizeof(v) - 1 }

/* Parse AUTH, build the canonical request of M TARGET with headers H and
 * PAYLOAD, sign it at DATE, and compare with WANT. */
static void
check_header_form(const char *what, const char *m, const char *target, const struct px_sigv4_header *h,
    size_t nh, const char *auth, const char *payload, const char *date, int s3, const char *want)
{
	struct px_sigv4_auth a;
	const char *why = NULL;
	char *cr, sig[65] = "";
	size_t crlen = 0;

	tap_cmp_int(px_sigv4_parse_header(auth, strlen(auth), &a, &why), "==", 1, "%s: header parsed", what);
	cr = px_sigv4_canonical(m, strlen(m), target, strlen(target), h, nh, a.signed_headers, payload, s3, 0,
	    &crlen, &why);
	tap_ok(cr != NULL, "%s: canonical request built (%s)", what, cr == NULL ? why : "ok");
	if (cr == NULL)
		return;
	tap_cmp_int(px_sigv4_sign(SECRET, strlen(SECRET), date, &a.cred, cr, crlen, sig), "==", 0,
	    "%s: signed", what);
	tap_cmp_str(sig, want, "%s: the signature", what);
	tap_cmp_str(a.signature, want, "%s: the parsed signature", what);
	free(cr);
}

static void
test_aws_example(void)
{
	/* AWS's "GET https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08"
	 * example of the signing documentation. */
	static const struct px_sigv4_header h[] = {
		H("Host", "iam.amazonaws.com"),
		H("Content-Type", "application/x-www-form-urlencoded; charset=utf-8"),
		H("X-Amz-Date", "20150830T123600Z"),
	};
	static const char want_cr[] =
	    "GET\n/\nAction=ListUsers&Version=2010-05-08\n"
	    "content-type:application/x-www-form-urlencoded; charset=utf-8\nhost:iam.amazonaws.com\n"
	    "x-amz-date:20150830T123600Z\n\ncontent-type;host;x-amz-date\n"
	    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
	const char *auth = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, "
	    "SignedHeaders=content-type;host;x-amz-date, "
	    "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7";
	const char *why = NULL;
	size_t len = 0;
	char *cr = px_sigv4_canonical("GET", 3, "/?Action=ListUsers&Version=2010-05-08", 37, h, 3,
	    "content-type;host;x-amz-date", EMPTY_SHA, 0, 0, &len, &why);
	struct px_sigv4_auth a;
	char out[512];

	tap_cmp_str(cr, want_cr, "AWS example: the canonical request");
	free(cr);
	check_header_form("AWS example", "GET", "/?Action=ListUsers&Version=2010-05-08", h, 3, auth, EMPTY_SHA,
	    "20150830T123600Z", 0, "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7");
	px_sigv4_parse_header(auth, strlen(auth), &a, &why);
	tap_cmp_str(a.cred.key_id, "AKIDEXAMPLE", "AWS example: the key id");
	tap_cmp_str(a.cred.region, "us-east-1", "AWS example: the region");
	tap_cmp_str(a.cred.service, "iam", "AWS example: the service");
	tap_ok(px_sigv4_auth_value(&a.cred, a.signed_headers, a.signature, out, sizeof(out)) > 0 &&
	    strcmp(out, auth) == 0, "AWS example: the Authorization value is written back the same");
}

static void
test_botocore(void)
{
	/* S3 PUT, x-amz-content-sha256: UNSIGNED-PAYLOAD, an encoded path
	 * and query: S3 does not encode the path again. */
	static const struct px_sigv4_header put[] = {
		H("Host", "examplebucket.s3.us-east-1.amazonaws.com"),
		H("Content-Type", "text/plain"),
		H("X-Amz-Date", "20150830T123600Z"),
		H("X-Amz-Content-SHA256", "UNSIGNED-PAYLOAD"),
		H("Content-Length", "5"),
	};
	/* STS: the body hashed (no x-amz-content-sha256). */
	static const struct px_sigv4_header sts[] = {
		H("Content-Type", "application/x-www-form-urlencoded; charset=utf-8"),
		H("X-Amz-Date", "20150830T123600Z"),
		H("Host", "sts.amazonaws.com"),
	};
	/* Another service: dot segments, an empty segment and %20 in the path
	 * (encoded again), a repeated parameter, a session token signed. */
	static const struct px_sigv4_header api[] = {
		H("Host", "api.example.amazonaws.com"),
		H("X-Amz-Security-Token", "TOKEN"),
		H("X-Amz-Date", "  20150830T123600Z "),
	};
	const char *presigned = "/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F20150830"
	    "%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20150830T123600Z&X-Amz-Expires=86400&"
	    "X-Amz-SignedHeaders=host&X-Amz-Signature=b83edb11df81b4aed71b8cbac85ec18f10676d4cb3fdfe3adf9ad0ad691326f8";
	static const struct px_sigv4_header ph[] = { H("Host", "examplebucket.s3.us-east-1.amazonaws.com") };
	struct px_sigv4_auth a;
	const char *why = NULL;
	char *cr, sig[65] = "";
	size_t len = 0;
	unsigned char body_hash[32];
	char bh[65];
	size_t i;

	check_header_form("botocore S3 UNSIGNED-PAYLOAD", "PUT", "/dir/my%20file.txt?partNumber=2&uploadId=abc%2Fdef",
	    put, 5, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/s3/aws4_request, "
	    "SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date, "
	    "Signature=5030c50ccf4de1e4e67f2566e75ac758cec37df65660b0ea31f2afd87b699576", "UNSIGNED-PAYLOAD",
	    "20150830T123600Z", 1, "5030c50ccf4de1e4e67f2566e75ac758cec37df65660b0ea31f2afd87b699576");
	/* sha256("Action=GetCallerIdentity&Version=2011-06-15") */
	{
		static const char body[] = "Action=GetCallerIdentity&Version=2011-06-15";
		SHA256((const unsigned char *)body, sizeof(body) - 1, body_hash);
		for (i = 0; i < 32; i++)
			snprintf(bh + 2 * i, 3, "%02x", body_hash[i]);
	}
	check_header_form("botocore STS body hash", "POST", "/", sts, 3,
	    "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/sts/aws4_request, "
	    "SignedHeaders=content-type;host;x-amz-date, "
	    "Signature=6fb20d31f734d876c5682fdd2678d194cf68b862755f83b7ba1373c0874be25c", bh,
	    "20150830T123600Z", 0, "6fb20d31f734d876c5682fdd2678d194cf68b862755f83b7ba1373c0874be25c");
	check_header_form("botocore other service, path encoded again", "GET", "/a/./b//c%20d/../e?z=1&a=%2F&a=2",
	    api, 3, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/eu-west-1/execute-api/aws4_request, "
	    "SignedHeaders=host;x-amz-date;x-amz-security-token, "
	    "Signature=926cdcb9cdeb1c88811edf7357400999343b8d50e817cf8d83690c6266552be1", EMPTY_SHA,
	    "20150830T123600Z", 0, "926cdcb9cdeb1c88811edf7357400999343b8d50e817cf8d83690c6266552be1");

	/* S3 presigned (S3SigV4QueryAuth, expires 86400). */
	tap_cmp_int(px_sigv4_parse_query(presigned, strlen(presigned), &a, &why), "==", 1, "presigned: parsed");
	tap_cmp_str(a.cred.key_id, "AKIDEXAMPLE", "presigned: the key id decoded");
	tap_cmp_str(a.amz_date, "20150830T123600Z", "presigned: X-Amz-Date");
	tap_cmp_str(a.signed_headers, "host", "presigned: signed headers");
	cr = px_sigv4_canonical("GET", 3, presigned, strlen(presigned), ph, 1, a.signed_headers,
	    PX_SIGV4_UNSIGNED, 1, 1, &len, &why);
	tap_ok(cr != NULL && strstr(cr, "X-Amz-Signature") == NULL, "presigned: the canonical query leaves "
	    "out X-Amz-Signature");
	if (cr != NULL)
		px_sigv4_sign(SECRET, strlen(SECRET), a.amz_date, &a.cred, cr, len, sig);
	tap_cmp_str(sig, "b83edb11df81b4aed71b8cbac85ec18f10676d4cb3fdfe3adf9ad0ad691326f8",
	    "presigned: the signature botocore made");
	free(cr);
	tap_cmp_int(px_sigv4_parse_query("/x?a=1", 6, &a, &why), "==", 0, "a query without X-Amz-*: not presigned");
}

static void
test_set_param(void)
{
	static const char t1[] = "/p?a=1&X-Amz-Signature=old&b=2&X-Amz-Signature=x";
	static const char t3[] = "/p?X-Amz-Security-Token=T&a=1";
	size_t n = 0;
	char *t = px_sigv4_set_param(t1, sizeof(t1) - 1, "X-Amz-Signature", "new", &n);

	tap_cmp_str(t, "/p?a=1&X-Amz-Signature=new&b=2", "set_param: first one replaced, the others dropped");
	free(t);
	t = px_sigv4_set_param("/p", 2, "X-Amz-Security-Token", "T", &n);
	tap_cmp_str(t, "/p?X-Amz-Security-Token=T", "set_param: appended");
	free(t);
	t = px_sigv4_set_param(t3, sizeof(t3) - 1, "X-Amz-Security-Token", NULL, &n);
	tap_cmp_str(t, "/p?a=1", "set_param: dropped");
	free(t);
}

static void
test_refused(void)
{
	static const struct {
		const char *v;
		int want;
	} hdr[] = {
		{ "Bearer abc", 0 },
		{ "AWS AKIDEXAMPLE:abc", 0 },
		{ "AWS4-HMAC-SHA256", -EINVAL },
		{ "aws4-hmac-sha256 Credential=A/20150830/r/s/aws4_request, SignedHeaders=host, "
		    "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7", -EINVAL },
		{ "AWS4-HMAC-SHA256 Credential=A/20150830/r/s/aws4_request, SignedHeaders=host", -EINVAL },
		{ "AWS4-HMAC-SHA256 Credential=A/2015083/r/s/aws4_request, SignedHeaders=host, "
		    "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7", -EINVAL },
		{ "AWS4-HMAC-SHA256 Credential=A/20150830/r/s/aws4_reques, SignedHeaders=host, "
		    "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7", -EINVAL },
		{ "AWS4-HMAC-SHA256 Credential=A/20150830/r/s/x/aws4_request, SignedHeaders=host, "
		    "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7", -EINVAL },
		{ "AWS4-HMAC-SHA256 Credential=A/20150830/r/s/aws4_request, SignedHeaders=Host, "
		    "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7", -EINVAL },
		{ "AWS4-HMAC-SHA256 Credential=A/20150830/r/s/aws4_request, SignedHeaders=x-amz-date, "
		    "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7", -EINVAL },
		{ "AWS4-HMAC-SHA256 Credential=A/20150830/r/s/aws4_request, SignedHeaders=host, "
		    "Signature=5D672D79C15B13162D9279B0855CFBA6789A8EDB4C82C400E06B5924A6F2B5D7", -EINVAL },
		{ "AWS4-HMAC-SHA256 Credential=A/20150830/r/s/aws4_request, Credential=B/20150830/r/s/aws4_request, "
		    "SignedHeaders=host, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7",
		    -EINVAL },
		{ "AWS4-HMAC-SHA256 Credential=A/20150830/r/s/aws4_request, SignedHeaders=host, Extra=1, "
		    "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7", -EINVAL },
		{ "AWS4-HMAC-SHA256 Credential=A\"/20150830/r/s/aws4_request, SignedHeaders=host, "
		    "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7", -EINVAL },
	};
	static const char *const query[] = {
		"/?X-Amz-Algorithm=AWS4-HMAC-SHA256",
		"/?X-Amz-Algorithm=AWS4-HMAC-SHA1&X-Amz-Credential=A%2F20150830%2Fr%2Fs%2Faws4_request"
		    "&X-Amz-Date=20150830T123600Z&X-Amz-SignedHeaders=host&X-Amz-Signature="
		    "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7",
		"/?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=A%2F20150830%2Fr%2Fs%2Faws4_request"
		    "&X-Amz-Date=20150831T123600Z&X-Amz-SignedHeaders=host&X-Amz-Signature="
		    "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7",
		"/?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=A%2F20150830%2Fr%2Fs%2Faws4_request"
		    "&X-Amz-Date=20150830T123600Z&X-Amz-SignedHeaders=host&X-Amz-Signature=zz",
		"/?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=A%2G20150830%2Fr%2Fs%2Faws4_request"
		    "&X-Amz-Date=20150830T123600Z&X-Amz-SignedHeaders=host&X-Amz-Signature="
		    "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7",
		"/?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=A%2F20150830%2Fr%2Fs%2Faws4_request"
		    "&X-Amz-Credential=B%2F20150830%2Fr%2Fs%2Faws4_request"
		    "&X-Amz-Date=20150830T123600Z&X-Amz-SignedHeaders=host&X-Amz-Signature="
		    "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7",
		"/?X-Amz-Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7",
		"/?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=A%2F20150830%2Fr%2Fs%2Faws4_request"
		    "&X-Amz-Date=20150830T123600Z&X-Amz-SignedHeaders=host&X-Amz-Signature="
		    "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
		    "&X-Amz-Security-Token=a&X-Amz-Security-Token=b",
	};
	static const struct px_sigv4_header h[] = { H("Host", "h") };
	struct px_sigv4_auth a;
	const char *why;
	size_t i, len;
	char *cr;

	int r;

	for (i = 0; i < sizeof(hdr) / sizeof(hdr[0]); i++) {
		why = NULL;
		r = px_sigv4_parse_header(hdr[i].v, strlen(hdr[i].v), &a, &why);
		tap_ok(r == hdr[i].want && (r == 0 || why != NULL), "header %zu: %s", i,
		    hdr[i].want == 0 ? "not SigV4" : why != NULL ? why : "(no reason)");
	}
	for (i = 0; i < sizeof(query) / sizeof(query[0]); i++) {
		why = NULL;
		r = px_sigv4_parse_query(query[i], strlen(query[i]), &a, &why);
		tap_ok(r == -EINVAL && why != NULL, "query %zu refused: %s", i, why != NULL ? why : "(no reason)");
	}
	why = NULL;
	cr = px_sigv4_canonical("GET", 3, "/", 1, h, 1, "host;x-amz-date", EMPTY_SHA, 0, 0, &len, &why);
	tap_ok(cr == NULL && why != NULL, "a signed header missing from the request: %s", why ? why : "none");
	free(cr);
	tap_ok(px_sigv4_payload_ok("UNSIGNED-PAYLOAD", 16), "UNSIGNED-PAYLOAD may be re-signed");
	tap_ok(px_sigv4_payload_ok(EMPTY_SHA, 64), "a hex hash may be re-signed");
	tap_ok(!px_sigv4_payload_ok("STREAMING-AWS4-HMAC-SHA256-PAYLOAD", 34), "the signed chunked form may not");
	tap_ok(!px_sigv4_payload_ok("E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855", 64),
	    "an upper-case hash may not");
}

int
main(void)
{
	test_aws_example();
	test_botocore();
	test_set_param();
	test_refused();
	return tap_done();
}
