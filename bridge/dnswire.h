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
/* Ports one name gets listeners on, at most (proxy/flow/bridgereq.h's cap). */
#define BR_DNS_PORTS_MAX 32
/* TTL of a synthetic answer: short, though the address never changes. */
#define BR_DNS_TTL 5

/* Response codes (RFC 1035 §4.1.1). */
#define BR_DNS_NOERROR 0
#define BR_DNS_FORMERR 1
#define BR_DNS_SERVFAIL 2
#define BR_DNS_NXDOMAIN 3
#define BR_DNS_NOTIMP 4
/* RFC 6891 §9: an extended RCODE, carried half in the OPT record. */
#define BR_DNS_BADVERS 16

#define BR_DNS_TYPE_A 1
#define BR_DNS_TYPE_AAAA 28
#define BR_DNS_TYPE_OPT 41
#define BR_DNS_CLASS_IN 1

/* Extended DNS Errors (RFC 8914): the option and the INFO-CODEs used. */
#define BR_DNS_OPT_EDE 15
#define BR_DNS_EDE_OTHER 0
/* §4.16 Blocked: a policy "imposed by the operator of the resolver", which
 * is what an allowlist is.  Filtered (17) is the requestor's own policy,
 * Censored (16) an external one: neither fits. */
#define BR_DNS_EDE_BLOCKED 15
#define BR_DNS_EDE_NETWORK 23
/* The longest EXTRA-TEXT the stub writes: what 512 bytes hold after the
 * longest question (12 + 259), the OPT record (11) and the option's head
 * (6), so that no answer of the stub's is cut for it. */
#define BR_DNS_EDE_TEXT_MAX 224

/* An Extended DNS Error to add to a response (RFC 8914 §2). */
struct br_dns_ede {
	uint16_t code;               /* INFO-CODE */
	const char *text;            /* EXTRA-TEXT, NUL-terminated, or NULL */
};

/* One query, as br_dns_parse() read it.  Points into the message. */
struct br_dns_query {
	uint16_t id;
	uint16_t flags;              /* the header's second word, as sent */
	uint16_t qtype, qclass;
	const uint8_t *question;     /* the question section, QNAME to QCLASS */
	size_t qlen;                 /* its bytes */
	int edns;                    /* the query had an OPT record */
	uint8_t edns_version;        /* its VERSION */
	uint16_t edns_flags;         /* its flags (DO is 0x8000) */
	int name_ok;                 /* NAME passed cf_host_parse() */
	char name[CF_HOST_MAX];      /* its normal form when name_ok, else "" */
};

/*
 * Parse MSG (LEN bytes, untrusted: any process of the sandbox) as a DNS
 * query (RFC 1035 §4.1): a header with QR 0, QDCOUNT 1, ANCOUNT and NSCOUNT
 * 0, ARCOUNT 0 or 1 (then one OPT record with the root name, RFC 6891
 * §6.1.2, whose RDATA is a whole number of options, code, length and
 * that many bytes, §6.1.2, and nothing after it), one question whose name is made of plain
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
 * NOTIMP), the header only with no question.
 *
 * When Q had an OPT record, the response has one too (RFC 6891 §7: a
 * responder must, and must not add one to a query without it): UDP size
 * BR_DNS_MSG_MAX, the upper bits of RCODE (BADVERS), version 0, DO
 * copied, and with EDE not NULL one Extended DNS Error option (RFC 8914)
 * of EDE's code and text.  The text is written as plain ASCII (any other
 * byte as '?'), at most BR_DNS_EDE_TEXT_MAX bytes, and cut to what fits
 * in CAP: the answer itself is never cut for it.  Without an OPT record
 * in Q, EDE is not written.  Returns the length, or 0 when the answer
 * and its OPT record do not fit in CAP or LEN is shorter than a header.
 */
size_t br_dns_reply(const uint8_t *msg, size_t len, const struct br_dns_query *q, int rcode,
    const struct in_addr *a, uint32_t ttl, const struct br_dns_ede *ede, uint8_t *out,
    size_t cap);

/*
 * Parse BUF (LEN bytes: the proxy's whole answer to the name check, head
 * and body) into PORTS (at most MAX).  Returns the number of ports (>= 1)
 * for a 200 whose body is exactly "postern-name 1" LF "ports P..." LF with
 * 1 to MAX ascending ports 1-65535 separated by single spaces; 0 for any
 * other status (the name is refused); -EINVAL for a 200 that is malformed
 * or an answer that is not an HTTP response.
 */
int br_dns_ports_parse(const char *buf, size_t len, uint16_t *ports, size_t max);

/*
 * The EXTRA-TEXT for NAME (a host name in normal form) refused by the
 * proxy's answer BUF (LEN bytes, head and body) to the name check, into
 * OUT of SIZE bytes (SIZE > 0), NUL-terminated and cut to fit:
 * "postern: refused NAME: REASON" with REASON the X-Postern-Reason code
 * ("refused" when there is none), then "; to allow it, SUGGESTION" when
 * the body has a line "To allow it, an admin can SUGGESTION" (printable
 * ASCII only: the line is cut at any other byte).  Returns the length.
 */
size_t br_dns_refusal_text(const char *buf, size_t len, const char *name, char *out,
    size_t size);

#endif
