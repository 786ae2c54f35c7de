/*
 * tests/unit/test-bridge-dns.c: the DNS stub's wire format (bridge/dnswire.h):
 * which queries are read and how (RFC 1035 §4.1), the answers built, and
 * the reader of the proxy's name-check answer.
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
	n = br_dns_reply(msg, len, &q, BR_DNS_NOERROR, &a, 5, out, sizeof(out));
	tap_ok(n == len + 16, "answer length %zu", n);
	tap_ok(out[0] == 0xab && out[1] == 0xcd && out[2] == 0x85 && out[3] == 0x00,
	    "ID echoed; QR, AA, RD set, RA clear, NOERROR");
	tap_ok(out[5] == 1 && out[7] == 1 && out[9] == 0 && out[11] == 0, "one question, one answer");
	tap_ok(memcmp(out + 12, msg + 12, len - 12) == 0, "the question echoed");
	tap_ok(out[len] == 0xc0 && out[len + 1] == 0x0c && out[len + 3] == 1 && out[len + 5] == 1 &&
	    out[len + 9] == 5 && out[len + 11] == 4 && memcmp(out + len + 12, &a, 4) == 0,
	    "A record: pointer to the name, IN, TTL 5, the address");
	n = br_dns_reply(msg, len, &q, BR_DNS_NXDOMAIN, NULL, 0, out, sizeof(out));
	tap_ok(n == len && (out[3] & 0xf) == 3 && out[7] == 0, "NXDOMAIN, no answer");
	n = br_dns_reply(msg, len, NULL, BR_DNS_FORMERR, NULL, 0, out, sizeof(out));
	tap_ok(n == 12 && (out[3] & 0xf) == 1 && out[5] == 0, "FORMERR: header only");
	n = br_dns_reply(msg, len, &q, BR_DNS_NOERROR, &a, 5, out, len + 15);
	tap_ok(n == 0, "no answer that does not fit");
	rc = br_dns_parse(out, br_dns_reply(msg, len, &q, 0, &a, 5, out, sizeof(out)), &q);
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
	return tap_done();
}
