/*
 * tests/unit/test-ocsf.c: audit lines as OCSF records (proxy/proto/ocsf.h),
 * the kinds a running proxy rarely shows a test: a terminated request with
 * its status, a UNIX peer, an IPv6 peer, a grant, an escaped value, an
 * overflow line, a line that is not flat.  Each record parses as JSON and
 * carries its class, activity, type_uid, endpoints and unmapped fields.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "proxy/proto/ocsf.h"
#include "tests/unit/tap.h"

#define T "{\"time\":\"2026-01-02T03:04:05.678Z\""

static json_t *
rec(const char *line, const char *what)
{
	static char out[16384];
	json_error_t e;
	size_t n = px_ocsf_line(line, strlen(line), out, sizeof(out), "9.9");
	json_t *j;

	if (!tap_ok(n > 0 && out[n - 1] == '\n', "%s: mapped", what))
		return NULL;
	j = json_loadb(out, n, 0, &e);
	tap_ok(j != NULL, "%s: the record is JSON (%s)", what, j ? "ok" : e.text);
	return j;
}

static long long
num(json_t *j, const char *path)
{
	char p[128], *k, *save = NULL;

	snprintf(p, sizeof(p), "%s", path);
	for (k = strtok_r(p, ".", &save); k != NULL && j != NULL; k = strtok_r(NULL, ".", &save))
		j = json_object_get(j, k);
	return json_is_integer(j) ? (long long)json_integer_value(j) : -1;
}

static const char *
str(json_t *j, const char *path)
{
	char p[128], *k, *save = NULL;

	snprintf(p, sizeof(p), "%s", path);
	for (k = strtok_r(p, ".", &save); k != NULL && j != NULL; k = strtok_r(NULL, ".", &save))
		j = json_object_get(j, k);
	return json_is_string(j) ? json_string_value(j) : "(none)";
}

int
main(void)
{
	static char out[16384];
	json_t *j;

	j = rec(T ",\"event\":\"request\",\"session\":\"s\",\"peer\":\"[fd00::1]:4242\",\"method\":\"POST\","
	    "\"host\":\"api.test\",\"port\":443,\"path\":\"/v1/x\",\"tls\":\"terminated\",\"status\":201,"
	    "\"decision\":\"allow\",\"reason\":\"allowed\",\"rule\":\"api.test\",\"rule_at\":\"/e/p.ini:7\","
	    "\"bytes_up\":10,\"bytes_down\":20,\"generation\":3,\"config\":\"abc\"}\n", "a terminated request");
	tap_cmp_int(num(j, "time"), "==", 1767323045678LL, "time in ms");
	tap_cmp_int(num(j, "class_uid"), "==", 4002, "HTTP Activity");
	tap_cmp_int(num(j, "activity_id"), "==", 6, "POST is activity 6");
	tap_cmp_int(num(j, "type_uid"), "==", 400206, "type_uid");
	tap_cmp_int(num(j, "http_response.code"), "==", 201, "the status");
	tap_cmp_str(str(j, "src_endpoint.ip"), "fd00::1", "an IPv6 peer's address, without brackets");
	tap_cmp_int(num(j, "src_endpoint.port"), "==", 4242, "... and port");
	tap_cmp_str(str(j, "http_request.url.path"), "/v1/x", "the path");
	tap_cmp_int(num(j, "traffic.bytes_out"), "==", 10, "bytes up are bytes_out");
	tap_cmp_int(num(j, "disposition_id"), "==", 1, "allowed");
	tap_cmp_str(str(j, "unmapped.rule_at"), "/e/p.ini:7", "the rule's FILE:LINE in unmapped");
	tap_cmp_str(str(j, "unmapped.tls"), "terminated", "tls in unmapped");
	tap_cmp_str(str(j, "metadata.product.version"), "9.9", "the product's version");
	tap_cmp_str(str(j, "metadata.version"), "1.1.0", "OCSF 1.1.0");
	json_decref(j);

	j = rec(T ",\"event\":\"decision\",\"session\":\"s\",\"peer\":\"unix:pid=5,uid=7\",\"pid\":5,\"uid\":7,"
	    "\"method\":\"CONNECT\",\"host\":\"x\\\"y.test\",\"port\":443,\"address\":null,\"decision\":\"deny\","
	    "\"reason\":\"host_not_allowed\",\"detail\":\"no rule\",\"generation\":1,\"config\":\"c\"}\n",
	    "a refused tunnel from a UNIX peer");
	tap_cmp_int(num(j, "class_uid"), "==", 4001, "Network Activity");
	tap_cmp_int(num(j, "activity_id"), "==", 5, "Refuse");
	tap_cmp_int(num(j, "severity_id"), "==", 3, "a deny is Medium");
	tap_cmp_str(str(j, "src_endpoint.name"), "unix:pid=5,uid=7", "a UNIX peer by name");
	tap_cmp_str(str(j, "dst_endpoint.hostname"), "x\"y.test", "an escaped host stays escaped, and parses");
	tap_ok(json_object_get(json_object_get(j, "dst_endpoint"), "ip") == NULL, "no ip for a null address");
	tap_cmp_int(num(j, "unmapped.uid"), "==", 7, "the peer's uid in unmapped");
	tap_cmp_str(str(j, "message"), "no rule", "the detail is the message");
	json_decref(j);

	j = rec(T ",\"event\":\"grant\",\"session\":\"s\",\"host\":\"h.test\",\"port\":443,\"grant\":\"allow\"}\n",
	    "a grant");
	tap_cmp_int(num(j, "activity_id"), "==", 99, "a grant is activity Other");
	tap_cmp_int(num(j, "type_uid"), "==", 400199, "... type_uid 400199");
	tap_cmp_str(str(j, "unmapped.event"), "grant", "its event in unmapped");
	json_decref(j);

	tap_ok(px_ocsf_line("{\"event\":\"audit_overflow\"}\n", 27, out, sizeof(out), "v") == 0,
	    "an overflow line (no time) is not mapped");
	tap_ok(px_ocsf_line(T ",\"event\":\"x\",\"a\":{\"b\":1}}\n", strlen(T ",\"event\":\"x\",\"a\":{\"b\":1}}\n"),
	    out, sizeof(out), "v") == 0, "a line that is not flat is not mapped");
	tap_ok(px_ocsf_line(T ",\"event\":\"x\"}\n", strlen(T ",\"event\":\"x\"}\n"), out, 100, "v") == 0,
	    "a short buffer: nothing");
	return tap_done();
}
