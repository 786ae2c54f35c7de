/*
 * tests/unit/test-decider.c: the decider protocol (proxy/proto/decider.h):
 * a question's JSON, fields and escaping; answers taken and refused; a
 * hostile reason made safe; HTTP answers whole, partial and bad.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "proxy/proto/decider.h"
#include "tests/unit/tap.h"

static void
question(void)
{
	struct px_decider_question q;
	json_t *o, *r;
	json_error_t err;
	size_t len;
	char *t;

	memset(&q, 0, sizeof(q));
	q.id = 42;
	q.session = "agent";
	q.uid = 1000;
	q.pid = 77;
	q.kind = "http";
	q.method = "GET";
	q.host = "example.test";
	q.port = 80;
	q.path = "/a\"b\n\xff%";
	q.rule_text = "example.test/x";
	q.rule_file = "/etc/postern.ini";
	q.rule_line = 12;
	q.allowed = 0;
	q.reason = "path_not_allowed";
	t = px_decider_question_json(&q, &len);
	tap_ok(t != NULL, "a question is written");
	if (t == NULL)
		return;
	tap_ok(len == strlen(t) && t[len - 1] == '\n' && memchr(t, '\n', len - 1) == NULL,
	    "it is one line, ended by its newline");
	o = json_loads(t, 0, &err);
	tap_ok(json_is_object(o), "it is a JSON object");
	tap_cmp_int(json_integer_value(json_object_get(o, "id")), "==", 42, "id");
	tap_cmp_str(json_string_value(json_object_get(o, "session")), "agent", "session");
	tap_cmp_int(json_integer_value(json_object_get(o, "uid")), "==", 1000, "uid");
	tap_cmp_int(json_integer_value(json_object_get(o, "pid")), "==", 77, "pid");
	tap_cmp_str(json_string_value(json_object_get(o, "path")), "/a\"b%0A%FF%25",
	    "the path's control bytes, high bytes and '%%' are written %%XX");
	tap_cmp_str(json_string_value(json_object_get(o, "allowlist")), "deny", "the allowlist's verdict");
	tap_cmp_str(json_string_value(json_object_get(o, "allowlist_reason")), "path_not_allowed",
	    "and its reason");
	r = json_object_get(o, "rule");
	tap_cmp_str(json_string_value(json_object_get(r, "text")), "example.test/x", "the rule's text");
	tap_cmp_int(json_integer_value(json_object_get(r, "line")), "==", 12, "the rule's line");
	tap_ok(json_object_get(o, "sni") == NULL, "no sni when none is known");
	json_decref(o);
	free(t);

	q.uid = q.pid = -1;
	q.path = NULL;
	q.rule_text = NULL;
	t = px_decider_question_json(&q, &len);
	o = t != NULL ? json_loads(t, 0, &err) : NULL;
	tap_ok(o != NULL && json_object_get(o, "uid") == NULL && json_object_get(o, "pid") == NULL &&
	    json_object_get(o, "path") == NULL && json_object_get(o, "rule") == NULL,
	    "an unknown peer, no path and no rule leave their fields out");
	json_decref(o);
	free(t);
}

struct acase {
	const char *what, *text;
	int rc, allow;
	unsigned long long id;
	unsigned ttl;
	const char *reason;
};

static const struct acase acases[] = {
	{ "an allow", "{\"id\":1,\"decision\":\"allow\"}", 0, 1, 1, 0, "" },
	{ "a deny with a reason and a ttl", "{\"id\":9,\"decision\":\"deny\",\"reason\":\"not today\",\"ttl\":30}",
	  0, 0, 9, 30, "not today" },
	{ "other members are ignored", "{\"x\":[1,2],\"id\":3,\"decision\":\"allow\"}", 0, 1, 3, 0, "" },
	{ "a reason's CR LF cannot split a header", "{\"id\":2,\"decision\":\"deny\",\"reason\":\"a\\r\\nX-Evil: 1\"}",
	  0, 0, 2, 0, "a??X-Evil: 1" },
	{ "a reason's NUL and high bytes", "{\"id\":2,\"decision\":\"deny\",\"reason\":\"a\\u0000b\\u00e9\"}",
	  0, 0, 2, 0, "a?b??" },
	{ "a huge ttl is capped", "{\"id\":2,\"decision\":\"allow\",\"ttl\":999999999}", 0, 1, 2,
	  PX_DECIDER_TTL_MAX, "" },
	{ "not JSON", "allow", -1, 0, 0, 0, NULL },
	{ "JSON but not an object", "[1]", -1, 0, 0, 0, NULL },
	{ "no id", "{\"decision\":\"allow\"}", -1, 0, 0, 0, NULL },
	{ "id 0", "{\"id\":0,\"decision\":\"allow\"}", -1, 0, 0, 0, NULL },
	{ "a string id", "{\"id\":\"1\",\"decision\":\"allow\"}", -1, 0, 0, 0, NULL },
	{ "an unknown decision", "{\"id\":1,\"decision\":\"maybe\"}", -1, 0, 0, 0, NULL },
	{ "a decision with a NUL after allow", "{\"id\":1,\"decision\":\"allow\\u0000x\"}", -1, 0, 0, 0, NULL },
	{ "a member twice", "{\"id\":1,\"decision\":\"deny\",\"decision\":\"allow\"}", -1, 0, 0, 0, NULL },
	{ "a negative ttl", "{\"id\":1,\"decision\":\"allow\",\"ttl\":-1}", -1, 0, 0, 0, NULL },
	{ "a reason that is not a string", "{\"id\":1,\"decision\":\"deny\",\"reason\":5}", -1, 0, 0, 0, NULL },
	{ "two objects", "{\"id\":1,\"decision\":\"allow\"}{\"id\":2,\"decision\":\"allow\"}", -1, 0, 0, 0, NULL },
};

static void
answers(void)
{
	struct px_decider_answer a;
	const char *why;
	size_t i;
	char *big;

	for (i = 0; i < sizeof(acases) / sizeof(acases[0]); i++) {
		const struct acase *t = &acases[i];
		int rc = px_decider_answer_parse(t->text, strlen(t->text), &a, &why);

		tap_cmp_int(rc, "==", t->rc, "%s: result", t->what);
		if (rc != 0) {
			tap_ok(why != NULL && why[0] != '\0', "%s: says why", t->what);
			continue;
		}
		tap_ok(a.allow == t->allow && a.id == t->id && a.ttl == t->ttl, "%s: fields", t->what);
		tap_cmp_str(a.reason, t->reason, "%s: reason", t->what);
	}
	/* A reason is cut to its bound. */
	big = malloc(PX_DECIDER_LINE_MAX + 2);
	snprintf(big, PX_DECIDER_LINE_MAX, "{\"id\":1,\"decision\":\"deny\",\"reason\":\"%0*d\"}", 1000, 0);
	tap_ok(px_decider_answer_parse(big, strlen(big), &a, &why) == 0 &&
	    strlen(a.reason) == PX_DECIDER_REASON_MAX, "a long reason is cut to %d bytes",
	    PX_DECIDER_REASON_MAX);
	memset(big, ' ', PX_DECIDER_LINE_MAX + 1);
	memcpy(big, "{\"id\":1,\"decision\":\"allow\"}", 27);
	tap_ok(px_decider_answer_parse(big, PX_DECIDER_LINE_MAX + 1, &a, &why) == -1,
	    "an answer over PX_DECIDER_LINE_MAX is refused");
	free(big);
}

static void
http(void)
{
	static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
	    "content-length: 5\r\n\r\nhelloEXTRA";
	static const char noc[] = "HTTP/1.0 200\r\n\r\nbody";
	const char *body, *why;
	size_t blen, k;

	tap_ok(px_decider_http_body(ok, sizeof(ok) - 1, 0, &body, &blen, &why) == 1 && blen == 5 &&
	    memcmp(body, "hello", 5) == 0, "a 200 with Content-Length gives its body");
	for (k = 0; k < sizeof(ok) - 1 - 10; k++)
		if (px_decider_http_body(ok, k, 0, &body, &blen, &why) != 0)
			break;
	tap_cmp_int(k, "==", sizeof(ok) - 1 - 10, "every shorter prefix asks for more");
	tap_ok(px_decider_http_body(ok, 20, 1, &body, &blen, &why) == -1, "an EOF in the head is bad");
	tap_ok(px_decider_http_body(noc, sizeof(noc) - 1, 0, &body, &blen, &why) == 0,
	    "without Content-Length it waits for EOF");
	tap_ok(px_decider_http_body(noc, sizeof(noc) - 1, 1, &body, &blen, &why) == 1 && blen == 4,
	    "and the body ends at EOF");
	tap_ok(px_decider_http_body("HTTP/1.1 503 No\r\n\r\n", 19, 1, &body, &blen, &why) == -1,
	    "another status is bad");
	tap_ok(px_decider_http_body("HTTX/1.1 200 OK\r\n\r\n", 19, 1, &body, &blen, &why) == -1,
	    "a bad status line is bad");
	tap_ok(px_decider_http_body("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
	    58, 1, &body, &blen, &why) == -1, "Content-Length twice is bad");
	tap_ok(px_decider_http_body("HTTP/1.1 200 OK\r\nContent-Length: 99999\r\n\r\nx",
	    43, 1, &body, &blen, &why) == -1, "a Content-Length over the bound is bad");
}

int
main(void)
{
	question();
	answers();
	http();
	return tap_done();
}
