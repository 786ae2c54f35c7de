/*
 * bridge/dnswire.h: the DNS stub's wire format (bridge/dnsstub.h): the
 * strict reader of a query, the answer builder, and the reader of the
 * proxy's answer to the name check.  Pure functions: no I/O, no state;
 * fuzzed by tests/fuzz/fuzz-bridge-dns.c.
 */
#ifndef POSTERN_BRIDGE_DNSWIRE_H
#define POSTERN_BRIDGE_DNSWIRE_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#include "conf/host.h"

/* RFC 1035 §4.2.1: a UDP message of at most 512 bytes. */
#define BR_DNS_MSG_MAX 512
/* The synthetic range: 198.18.0.0/15 (RFC 2544 §C.2.2, RFC 6890). */
#define BR_DNS_NET 0xc6120000u
#define BR_DNS_PREFIX 15
/* How many names get an address; past it the stub answers SERVFAIL. */
#define BR_DNS_NAMES_MAX 1024
/* Ports one name gets listeners on, at most (proxy/sessreq.h's cap). */
#define BR_DNS_PORTS_MAX 32
/* TTL of a synthetic answer: short, though the address never changes. */
#define BR_DNS_TTL 5

/* Response codes (RFC 1035 §4.1.1). */
#define BR_DNS_NOERROR 0
#define BR_DNS_FORMERR 1
#define BR_DNS_SERVFAIL 2
#define BR_DNS_NXDOMAIN 3
#define BR_DNS_NOTIMP 4

#define BR_DNS_TYPE_A 1
#define BR_DNS_TYPE_AAAA 28
#define BR_DNS_TYPE_OPT 41
#define BR_DNS_CLASS_IN 1

/* One query, as br_dns_parse() read it.  Points into the message. */
struct br_dns_query {
	uint16_t id;
	uint16_t flags;              /* the header's second word, as sent */
	uint16_t qtype, qclass;
	const uint8_t *question;     /* the question section, QNAME to QCLASS */
	size_t qlen;                 /* its bytes */
	int name_ok;                 /* NAME passed cf_host_parse() */
	char name[CF_HOST_MAX];      /* its normal form when name_ok, else "" */
};

/*
 * Parse MSG (LEN bytes, untrusted: any process of the sandbox) as a DNS
 * query (RFC 1035 §4.1): a header with QR 0, QDCOUNT 1, ANCOUNT and NSCOUNT
 * 0, ARCOUNT 0 or 1 (then one OPT record with the root name, RFC 6891
 * §6.1.2, and nothing after it), one question whose name is made of plain
 * labels (no compression pointer, RFC 1035 §4.1.4, no extended label type,
 * at most 255 bytes) and nothing after it.  The name is kept in normal form
 * when its labels hold no '.' and the dotted text passes cf_host_parse()
 * (no IP literal); otherwise name_ok is 0 and the query is still
 * answerable.  Returns 0 and fills Q; -ENOTSUP for an opcode other than
 * QUERY (answer NOTIMP); -EINVAL for any other malformation of a message
 * with a whole header and QR 0 (answer FORMERR); -EBADMSG when it is not a
 * query at all (shorter than a header, or QR 1: drop it, never answer).
 */
int br_dns_parse(const uint8_t *msg, size_t len, struct br_dns_query *q);

/*
 * Write into OUT (CAP bytes) the response to the query MSG (LEN bytes):
 * its ID and RD bit, QR, AA, RCODE; when Q is not NULL (a parsed query)
 * its question echoed, and when A is not NULL one A record for it (a
 * pointer to the question's name, class IN, TTL). With Q NULL (FORMERR or
 * NOTIMP), the header only with no question.  Returns the length, or 0
 * when it does not fit in CAP or LEN is shorter than a header.
 */
size_t br_dns_reply(const uint8_t *msg, size_t len, const struct br_dns_query *q, int rcode,
    const struct in_addr *a, uint32_t ttl, uint8_t *out, size_t cap);

/*
 * Parse BUF (LEN bytes: the proxy's whole answer to the name check, head
 * and body) into PORTS (at most MAX).  Returns the number of ports (>= 1)
 * for a 200 whose body is exactly "postern-name 1" LF "ports P..." LF with
 * 1 to MAX ascending ports 1-65535 separated by single spaces; 0 for any
 * other status (the name is refused); -EINVAL for a 200 that is malformed
 * or an answer that is not an HTTP response.
 */
int br_dns_ports_parse(const char *buf, size_t len, uint16_t *ports, size_t max);

#endif
