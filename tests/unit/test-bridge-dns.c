/*
 * tests/unit/test-bridge-dns.c: the DNS stub's wire format (bridge/dnswire.h):
 * which queries are read and how (RFC 1035 §4.1), the OPT record read and
 * written (RFC 6891), the Extended DNS Error of a refusal (RFC 8914) byte
 * by byte, and the readers of the proxy's name-check answer.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "bridge/dnswire.h"
#include "tests/unit/tap.h"

/* Build a query: header words, then RAW (the question name, wire form),
 * QTYPE, class IN, then TAIL. */
static size_t
build(uint8_t *buf, uint16_t flags, uint16_t qd, uint16_t ar, const char *raw, size_t rawlen,
    uint16_t qtype, const uint8_t *tail, size_t taillen)
{
	size_t n = 0;

	buf[n++] = 0xab;
	buf[n++] = 0xcd;
	buf[n++] = (uint8_t)(flags >> 8);
	buf[n++] = (uint8_t)flags;
	buf[n++] = 0;
	buf[n++] = (uint8_t)qd;
	memset(buf + n, 0, 4);
	n += 4;
	buf[n++] = 0;
	buf[n++] = (uint8_t)ar;
	memcpy(buf + n, raw, rawlen);
	n += rawlen;
	buf[n++] = (uint8_t)(qtype >> 8);
	buf[n++] = (uint8_t)qtype;
	buf[n++] = 0;
	buf[n++] = 1;
	if (taillen > 0)
		memcpy(buf + n, tail, taillen);
	return n + taillen;
}

#define RAW(s) s, sizeof(s) - 1

struct qcase {
	const char *what;
	uint16_t flags, qd, ar;
	const char *raw;
	size_t rawlen;
	int tail_opt;       /* 1: a valid OPT, 2: a cut one, 3: one stray byte */
	int rc;
	const char *name;   /* NULL: name_ok 0 */
};

static const struct qcase qcases[] = {
	{ "a plain query", 0x0100, 1, 0, RAW("\x07" "allowed\x04test\x00"), 0, 0, "allowed.test" },
	{ "upper case is normalised", 0x0100, 1, 0, RAW("\x07" "ALLOWED\x04Test\x00"), 0, 0,
	    "allowed.test" },
	{ "EDNS: one OPT record", 0x0100, 1, 1, RAW("\x01" "a\x04test\x00"), 1, 0, "a.test" },
	{ "an OPT record cut short", 0x0100, 1, 1, RAW("\x01" "a\x04test\x00"), 2, -EINVAL, NULL },
	{ "a byte after the question", 0x0100, 1, 0, RAW("\x01" "a\x04test\x00"), 3, -EINVAL, NULL },
	{ "two questions", 0x0100, 2, 0, RAW("\x01" "a\x04test\x00"), 0, -EINVAL, NULL },
	{ "no question", 0x0100, 0, 0, RAW(""), 0, -EINVAL, NULL },
	{ "a compression pointer", 0x0100, 1, 0, RAW("\x01" "a\xc0\x0c"), 0, -EINVAL, NULL },
	{ "an extended label type", 0x0100, 1, 0, RAW("\x41" "a\x00"), 0, -EINVAL, NULL },
	{ "a label past the end", 0x0100, 1, 0, RAW("\x09" "a\x00"), 0, -EINVAL, NULL },
	{ "a response", 0x8100, 1, 0, RAW("\x01" "a\x04test\x00"), 0, -EBADMSG, NULL },
	{ "opcode IQUERY", 0x0900, 1, 0, RAW("\x01" "a\x04test\x00"), 0, -ENOTSUP, NULL },
	{ "a dot inside a label", 0x0100, 1, 0, RAW("\x03" "a.b\x04test\x00"), 0, 0, NULL },
	{ "a NUL inside a label", 0x0100, 1, 0, RAW("\x03" "a\0b\x04test\x00"), 0, 0, NULL },
	{ "an IP literal", 0x0100, 1, 0, RAW("\x02" "10\x01" "0\x01" "0\x01" "1\x00"), 0, 0, NULL },
	{ "an underscore label", 0x0100, 1, 0, RAW("\x04" "_sip\x04test\x00"), 0, 0, NULL },
	{ "the root", 0x0100, 1, 0, RAW("\x00"), 0, 0, NULL },
};

/* Parse MSG (LEN bytes) into Q; 0 or the error. */
static int
parse(const uint8_t *msg, size_t len, struct br_dns_query *q)
{
	return br_dns_parse(msg, len, q);
}

/* The OPT record of a query: its options walked, its fields kept. */
static void
test_opt(void)
{
	/* UDP 1232, VERSION 0, DO; a COOKIE option (10) of 8 bytes. */
	static const uint8_t cookie[] = { 0, 0, 41, 4, 0xd0, 0, 0, 0x80, 0, 0, 12,
		0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8 };
	/* The option says 9 bytes, the RDATA holds 8. */
	static const uint8_t cut[] = { 0, 0, 41, 4, 0xd0, 0, 0, 0, 0, 0, 12,
		0, 10, 0, 9, 1, 2, 3, 4, 5, 6, 7, 8 };
	/* Three bytes: not even an option's code and length. */
	static const uint8_t stray[] = { 0, 0, 41, 4, 0xd0, 0, 0, 0, 0, 0, 3, 0, 10, 0 };
	/* VERSION 1, two empty options. */
	static const uint8_t v1[] = { 0, 0, 41, 2, 0, 0, 1, 0, 0, 0, 8, 0, 3, 0, 0, 0, 15, 0, 0 };
	uint8_t msg[600];
	struct br_dns_query q;
	size_t len;
	int rc;

	len = build(msg, 0x0100, 1, 1, RAW("\x01" "a\x04test\x00"), 1, cookie, sizeof(cookie));
	rc = parse(msg, len, &q);
	tap_ok(rc == 0 && q.edns && q.edns_version == 0 && q.edns_flags == 0x8000 && q.name_ok,
	    "OPT with a cookie: EDNS 0, DO kept");
	len = build(msg, 0x0100, 1, 1, RAW("\x01" "a\x04test\x00"), 1, cut, sizeof(cut));
	tap_ok(parse(msg, len, &q) == -EINVAL, "an option past its RDATA: FORMERR");
	len = build(msg, 0x0100, 1, 1, RAW("\x01" "a\x04test\x00"), 1, stray, sizeof(stray));
	tap_ok(parse(msg, len, &q) == -EINVAL, "RDATA that is no whole option: FORMERR");
	len = build(msg, 0x0100, 1, 1, RAW("\x01" "a\x04test\x00"), 1, v1, sizeof(v1));
	rc = parse(msg, len, &q);
	tap_ok(rc == 0 && q.edns && q.edns_version == 1 && q.edns_flags == 0, "EDNS version 1 read");
	len = build(msg, 0x0100, 1, 0, RAW("\x01" "a\x04test\x00"), 1, NULL, 0);
	rc = parse(msg, len, &q);
	tap_ok(rc == 0 && !q.edns, "no OPT: no EDNS");
}

/* The answers to a query with and without EDNS, byte by byte. */
static void
test_ede(void)
{
	static const uint8_t opt[] = { 0, 0, 41, 4, 0xd0, 0, 0, 0x80, 0, 0, 0 };
	static const uint8_t want[] = {
		0xab, 0xcd, 0x85, 0x03, 0, 1, 0, 0, 0, 0, 0, 1,          /* NXDOMAIN, AR 1 */
		6, 'd', 'e', 'n', 'i', 'e', 'd', 4, 't', 'e', 's', 't', 0, 0, 1, 0, 1,
		0, 0, 41, 0x02, 0x00, 0, 0, 0x80, 0, 0, 22,               /* OPT 512, DO */
		0, 15, 0, 18, 0, 15,                                      /* EDE, Blocked */
		'p', 'o', 's', 't', 'e', 'r', 'n', ':', ' ', 'n', '?', '?', '?', '?', '?', '.',
	};
	const struct br_dns_ede ede = { BR_DNS_EDE_BLOCKED, "postern: n\033\n\xff\x80\x7f." };
	uint8_t msg[600], out[BR_DNS_MSG_MAX];
	char name[300], text[400];
	struct br_dns_query q;
	struct in_addr a;
	size_t len, n, i, k;

	len = build(msg, 0x0100, 1, 1, RAW("\x06" "denied\x04test\x00"), 1, opt, sizeof(opt));
	tap_ok(parse(msg, len, &q) == 0 && q.edns, "an EDNS query");
	n = br_dns_reply(msg, len, &q, BR_DNS_NXDOMAIN, NULL, 0, &ede, out, sizeof(out));
	tap_ok(n == sizeof(want) && memcmp(out, want, n) == 0,
	    "NXDOMAIN with an OPT record, EDE 15 and its text, control and high bytes as '?' "
	    "(%zu bytes)", n);
	for (i = 0; n == sizeof(want) && i < n; i++)
		if (out[i] != want[i])
			tap_diag("byte %zu: %02x, want %02x", i, out[i], want[i]);

	inet_pton(AF_INET, "198.18.0.1", &a);
	n = br_dns_reply(msg, len, &q, BR_DNS_NOERROR, &a, 5, NULL, out, sizeof(out));
	tap_ok(n == 12 + q.qlen + 16 + 11 && out[11] == 1 && out[12 + q.qlen + 16 + 2] == 41 &&
	    out[n - 2] == 0 && out[n - 1] == 0, "an answer to EDNS: A record, then an empty OPT");
	n = br_dns_reply(msg, len, &q, BR_DNS_BADVERS, NULL, 0, NULL, out, sizeof(out));
	tap_ok(n == 12 + q.qlen + 11 && (out[3] & 0xf) == 0 && out[12 + q.qlen + 5] == 1 &&
	    out[12 + q.qlen + 6] == 0, "BADVERS: RCODE 0 in the header, 1 in the OPT record");

	len = build(msg, 0x0100, 1, 0, RAW("\x06" "denied\x04test\x00"), 1, NULL, 0);
	tap_ok(parse(msg, len, &q) == 0 && !q.edns, "the same query without EDNS");
	n = br_dns_reply(msg, len, &q, BR_DNS_NXDOMAIN, NULL, 0, &ede, out, sizeof(out));
	tap_ok(n == len && out[11] == 0 && memcmp(out, want, 11) == 0 && (out[3] & 0xf) == 3,
	    "no OPT record, so no EDE: header and question only");

	/* The longest question (255 bytes of name), a text of 300 bytes:
	 * the answer is whole and 512 bytes, the text cut to what is left. */
	for (k = 0, i = 0; i < 4; i++) {
		name[k++] = i < 3 ? 63 : 61;
		memset(name + k, 'x', (size_t)name[k - 1]);
		k += (size_t)name[k - 1];
	}
	name[k++] = 0;
	memset(text, 't', 300);
	text[300] = '\0';
	len = build(msg, 0x0100, 1, 1, name, k, 1, opt, sizeof(opt));
	tap_ok(k == 255 && parse(msg, len, &q) == 0, "a 255-byte name with EDNS");
	{
		const struct br_dns_ede big = { BR_DNS_EDE_BLOCKED, text };

		n = br_dns_reply(msg, len, &q, BR_DNS_NXDOMAIN, NULL, 0, &big, out, sizeof(out));
		tap_ok(n == BR_DNS_MSG_MAX && memcmp(out + 12, msg + 12, q.qlen) == 0 &&
		    out[12 + q.qlen + 9] == 0 && out[12 + q.qlen + 10] == 4 + 2 + 224 &&
		    out[n - 1] == 't', "512 bytes: the question whole, 224 bytes of text (%zu)", n);
		n = br_dns_reply(msg, len, &q, BR_DNS_NXDOMAIN, NULL, 0, &big, out, 400);
		tap_ok(n == 400 && out[12 + q.qlen + 10] == 4 + 2 + 112 && out[n - 1] == 't',
		    "in 400 bytes: the text cut to 112 (%zu)", n);
		n = br_dns_reply(msg, len, &q, BR_DNS_NXDOMAIN, NULL, 0, &big, out,
		    12 + q.qlen + 11 + 5);
		tap_ok(n == 12 + q.qlen + 11 && out[n - 1] == 0 && out[n - 2] == 0,
		    "no room for the option: the OPT record without it");
		n = br_dns_reply(msg, len, &q, BR_DNS_NXDOMAIN, NULL, 0, &big, out, 12 + q.qlen + 10);
		tap_ok(n == 0, "no room for the OPT record: no answer");
	}
	/* A short name: the text is at most BR_DNS_EDE_TEXT_MAX bytes. */
	len = build(msg, 0x0100, 1, 1, RAW("\x01" "a\x04test\x00"), 1, opt, sizeof(opt));
	{
		const struct br_dns_ede big = { BR_DNS_EDE_BLOCKED, text };

		tap_ok(parse(msg, len, &q) == 0, "a short name with EDNS");
		n = br_dns_reply(msg, len, &q, BR_DNS_NXDOMAIN, NULL, 0, &big, out, sizeof(out));
		tap_ok(n == 12 + q.qlen + 11 + 6 + BR_DNS_EDE_TEXT_MAX,
		    "the text cut to %d bytes (%zu)", BR_DNS_EDE_TEXT_MAX, n);
	}
}

/* The words of the proxy's refusal, made into the EXTRA-TEXT. */
static void
test_refusal_text(void)
{
#define HEAD403 "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n" \
	"X-Postern-Reason: host_not_allowed\r\nConnection: close\r\n\r\n"
	static const char body[] = HEAD403 "postern refused this request: host_not_allowed\n"
	    "DNS denied.test:443\nno rule allows it\n"
	    "To allow it, an admin can pass --allow 'denied.test'\n(session agent)\n";
	char out[BR_DNS_EDE_TEXT_MAX + 1], small[24];
	size_t n;

	n = br_dns_refusal_text(RAW(body), "denied.test", out, sizeof(out));
	tap_ok(strcmp(out, "postern: refused denied.test: host_not_allowed; to allow it, pass "
	    "--allow 'denied.test'") == 0 && n == strlen(out), "refusal text: %s", out);
	n = br_dns_refusal_text(RAW("HTTP/1.1 403 Forbidden\r\n\r\nTo allow it, an admin can "
	    "add\x1b[31m it\n"), "denied.test", out, sizeof(out));
	tap_ok(strcmp(out, "postern: refused denied.test: refused; to allow it, add") == 0,
	    "no reason: \"refused\"; the suggestion cut at a control byte: %s", out);
	n = br_dns_refusal_text(RAW(HEAD403 "postern refused this request: x\n"), "a.test", out,
	    sizeof(out));
	tap_ok(strcmp(out, "postern: refused a.test: host_not_allowed") == 0,
	    "no suggestion: none offered: %s", out);
	n = br_dns_refusal_text(RAW("garbage"), "a.test", out, sizeof(out));
	tap_ok(strcmp(out, "postern: refused a.test: refused") == 0, "not HTTP: %s", out);
	n = br_dns_refusal_text(RAW(body), "denied.test", small, sizeof(small));
	tap_ok(n == sizeof(small) - 1 && strcmp(small, "postern: refused denied") == 0,
	    "cut to its buffer: %s", small);
}

int
main(void)
{
	static const uint8_t opt[] = { 0, 0, 41, 4, 0xd0, 0, 0, 0, 0, 0, 0 };
	uint8_t msg[600], out[BR_DNS_MSG_MAX];
	struct br_dns_query q;
	struct in_addr a;
	uint16_t ports[BR_DNS_PORTS_MAX];
	size_t i, n, len;
	int rc;

	for (i = 0; i < sizeof(qcases) / sizeof(qcases[0]); i++) {
		const struct qcase *t = &qcases[i];
		const uint8_t *tail = t->tail_opt ? opt : NULL;
		size_t tl = t->tail_opt == 1 ? sizeof(opt) : t->tail_opt == 2 ? sizeof(opt) - 1 :
		    t->tail_opt == 3 ? 1 : 0;

		len = build(msg, t->flags, t->qd, t->ar, t->raw, t->rawlen, 1, tail, tl);
		rc = br_dns_parse(msg, len, &q);
		if (t->rc != 0 || t->name == NULL)
			tap_ok(rc == t->rc && (rc != 0 || (!q.name_ok && q.name[0] == '\0')),
			    "%s: %d (want %d), name_ok %d", t->what, rc, t->rc, rc == 0 ? q.name_ok : 0);
		else
			tap_ok(rc == 0 && q.name_ok && strcmp(q.name, t->name) == 0 && q.id == 0xabcd &&
			    q.qtype == 1 && q.qclass == 1, "%s: %s", t->what, rc == 0 ? q.name : "refused");
	}
	rc = br_dns_parse(msg, 11, &q);
	tap_ok(rc == -EBADMSG, "shorter than a header: dropped");

	/* The answer: header, question echoed, one A record by pointer. */
	len = build(msg, 0x0100, 1, 0, RAW("\x07" "allowed\x04test\x00"), 28, NULL, 0);
	rc = br_dns_parse(msg, len, &q);
	tap_ok(rc == 0 && q.qtype == 28, "an AAAA query is read");
	inet_pton(AF_INET, "198.18.0.7", &a);
	n = br_dns_reply(msg, len, &q, BR_DNS_NOERROR, &a, 5, NULL, out, sizeof(out));
	tap_ok(n == len + 16, "answer length %zu", n);
	tap_ok(out[0] == 0xab && out[1] == 0xcd && out[2] == 0x85 && out[3] == 0x00,
	    "ID echoed; QR, AA, RD set, RA clear, NOERROR");
	tap_ok(out[5] == 1 && out[7] == 1 && out[9] == 0 && out[11] == 0, "one question, one answer");
	tap_ok(memcmp(out + 12, msg + 12, len - 12) == 0, "the question echoed");
	tap_ok(out[len] == 0xc0 && out[len + 1] == 0x0c && out[len + 3] == 1 && out[len + 5] == 1 &&
	    out[len + 9] == 5 && out[len + 11] == 4 && memcmp(out + len + 12, &a, 4) == 0,
	    "A record: pointer to the name, IN, TTL 5, the address");
	n = br_dns_reply(msg, len, &q, BR_DNS_NXDOMAIN, NULL, 0, NULL, out, sizeof(out));
	tap_ok(n == len && (out[3] & 0xf) == 3 && out[7] == 0, "NXDOMAIN, no answer");
	n = br_dns_reply(msg, len, NULL, BR_DNS_FORMERR, NULL, 0, NULL, out, sizeof(out));
	tap_ok(n == 12 && (out[3] & 0xf) == 1 && out[5] == 0, "FORMERR: header only");
	n = br_dns_reply(msg, len, &q, BR_DNS_NOERROR, &a, 5, NULL, out, len + 15);
	tap_ok(n == 0, "no answer that does not fit");
	rc = br_dns_parse(out, br_dns_reply(msg, len, &q, 0, &a, 5, NULL, out, sizeof(out)), &q);
	tap_ok(rc == -EBADMSG, "an answer is never read as a query");

	/* The name check's answer. */
#define HEAD200 "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n"
	rc = br_dns_ports_parse(RAW(HEAD200 "postern-name 1\nports 22 443 8080\n"), ports,
	    BR_DNS_PORTS_MAX);
	tap_ok(rc == 3 && ports[0] == 22 && ports[1] == 443 && ports[2] == 8080, "ports: %d", rc);
	rc = br_dns_ports_parse(RAW("HTTP/1.1 403 Forbidden\r\n\r\nrefused\n"), ports,
	    BR_DNS_PORTS_MAX);
	tap_ok(rc == 0, "a 403: refused");
	rc = br_dns_ports_parse(RAW("HTTP/1.1 400 Bad\r\n\r\n"), ports, BR_DNS_PORTS_MAX);
	tap_ok(rc == 0, "a 400: refused");
	{
		static const char *const bad[] = {
			HEAD200 "postern-name 1\nports\n", HEAD200 "postern-name 1\nports 443 80\n",
			HEAD200 "postern-name 1\nports 443 443\n", HEAD200 "postern-name 1\nports 0\n",
			HEAD200 "postern-name 1\nports 65536\n", HEAD200 "postern-name 1\nports 0443\n",
			HEAD200 "postern-name 1\nports  443\n", HEAD200 "postern-name 1\nports 443",
			HEAD200 "postern-name 1\nports 443\nx", HEAD200 "postern-name 2\nports 443\n",
			HEAD200 "postern-name 1\nports 443 \n", "SSH-2.0-x\r\n\r\n",
		};
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			tap_ok(br_dns_ports_parse(bad[i], strlen(bad[i]), ports, BR_DNS_PORTS_MAX) ==
			    -EINVAL, "malformed name-check answer %zu refused", i);
	}
	rc = br_dns_ports_parse(RAW(HEAD200 "postern-name 1\nports 1 2 3\n"), ports, 2);
	tap_ok(rc == -EINVAL, "more ports than the cap: refused");
	test_opt();
	test_ede();
	test_refusal_text();
	return tap_done();
}
