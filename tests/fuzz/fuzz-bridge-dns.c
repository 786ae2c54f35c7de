/*
 * tests/fuzz/fuzz-bridge-dns.c: the bridge's DNS stub wire format
 * (bridge/dnswire.h): the strict query reader, the answer builder, and the
 * reader of the proxy's answer to the name check.  Invariants checked: a
 * parsed question lies within the input and ends it (or the OPT record
 * does); an accepted name is in normal form and re-parses to itself; every
 * answer fits its buffer, echoes the ID, and is itself no query; a
 * refusal's Extended DNS Error is there only for a query with EDNS, is
 * plain ASCII and is cut, never the answer; every port list read is
 * ascending and within its cap, and every refusal text plain ASCII.  The input is also read
 * as a TCP stream, split as the stub splits one (two-byte length, then
 * the message; a length past BR_DNS_MSG_MAX or the data ends it), and
 * each message so framed holds to the same.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/dnswire.h"
#include "conf/host.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one_message(const uint8_t *data, size_t size);
static void one_refusal(const uint8_t *data, size_t size, const struct br_dns_query *q);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint16_t ports[BR_DNS_PORTS_MAX];
	size_t i, off, ql;
	int rc;

	one_message(data, size);
	/* The TCP framing (RFC 1035 §4.2.2), as bridge/dnsstub.c reads it:
	 * each message in a buffer of its own size, so that a read past it
	 * is seen. */
	for (off = 0; off + 2 <= size; off += 2 + ql) {
		uint8_t *m;

		ql = (size_t)data[off] << 8 | data[off + 1];
		if (ql > BR_DNS_MSG_MAX || ql > size - off - 2)
			break;
		if ((m = malloc(ql ? ql : 1)) == NULL)
			abort();
		memcpy(m, data + off + 2, ql);
		one_message(m, ql);
		free(m);
	}

	rc = br_dns_ports_parse((const char *)data, size, ports, BR_DNS_PORTS_MAX);
	if (rc > BR_DNS_PORTS_MAX)
		abort();
	for (i = 1; rc > 0 && i < (size_t)rc; i++)
		if (ports[i] <= ports[i - 1])
			abort();
	for (i = 0; rc > 0 && i < (size_t)rc; i++)
		if (ports[i] == 0)
			abort();
	/* The input as the proxy's refusal: its text is plain ASCII. */
	{
		char why[BR_DNS_EDE_TEXT_MAX + 1];
		size_t k = br_dns_refusal_text((const char *)data, size, "a.test", why, sizeof(why));

		if (k >= sizeof(why) || strlen(why) != k ||
		    strncmp(why, "postern: refused a.test: ", 25) != 0)
			abort();
		for (i = 0; i < k; i++)
			if (why[i] < 0x20 || why[i] > 0x7e)
				abort();
	}
	return 0;
}

/*
 * The refusal of a parsed query Q, with an Extended DNS Error whose text
 * is the input itself (bytes the stub never sends, to see them replaced):
 * the answer part is whole, the OPT record there exactly when Q had one,
 * the text plain ASCII and the whole within 512 bytes.
 */
static void
one_refusal(const uint8_t *data, size_t size, const struct br_dns_query *q)
{
	char text[BR_DNS_EDE_TEXT_MAX + 40];
	struct br_dns_ede ede = { BR_DNS_EDE_BLOCKED, text };
	uint8_t out[BR_DNS_MSG_MAX];
	size_t n, k = size < sizeof(text) - 1 ? size : sizeof(text) - 1, base, i, tl;

	memcpy(text, data, k);
	text[k] = '\0';
	n = br_dns_reply(data, size, q, BR_DNS_NXDOMAIN, NULL, 0, &ede, out, sizeof(out));
	base = 12 + q->qlen;
	if (n < base || n > sizeof(out) || out[11] != (q->edns ? 1 : 0))
		abort();
	if (!q->edns) {
		if (n != base)
			abort();
		return;
	}
	/* OPT, then option 15 of INFO-CODE 15 and the text cut to fit. */
	tl = strlen(text) < BR_DNS_EDE_TEXT_MAX ? strlen(text) : BR_DNS_EDE_TEXT_MAX;
	if (tl > sizeof(out) - base - 17)
		tl = sizeof(out) - base - 17;
	if (n != base + 17 + tl || out[base] != 0 || out[base + 2] != BR_DNS_TYPE_OPT ||
	    (size_t)(out[base + 9] << 8 | out[base + 10]) != 6 + tl || out[base + 12] != 15 ||
	    out[base + 16] != 15)
		abort();
	for (i = 0; i < tl; i++)
		if (out[base + 17 + i] < 0x20 || out[base + 17 + i] > 0x7e)
			abort();
}

/* One message, as the stub's UDP and TCP paths hand it to dnswire. */
static void
one_message(const uint8_t *data, size_t size)
{
	struct br_dns_query q, q2;
	struct in_addr a = { .s_addr = 0x010012c6 };
	uint8_t out[BR_DNS_MSG_MAX];
	struct cf_host h;
	size_t n;
	int rc;

	rc = br_dns_parse(data, size, &q);
	if (rc == 0) {
		if (q.question < data + 12 || q.question + q.qlen > data + size || q.qlen < 5)
			abort();
		if (q.name_ok) {
			if (cf_host_parse(q.name, strlen(q.name), CF_HOST_NO_IP, &h, NULL) != 0 ||
			    strcmp(h.name, q.name) != 0)
				abort();
		} else if (q.name[0] != '\0') {
			abort();
		}
		n = br_dns_reply(data, size, &q, BR_DNS_NOERROR, &a, BR_DNS_TTL, NULL, out,
		    sizeof(out));
		if (n > sizeof(out) || (n != 0 && n != 12 + q.qlen + 16 + (q.edns ? 11 : 0)))
			abort();
		one_refusal(data, size, &q);
		/* An answer is never taken for a query (no loops between stubs). */
		if (n != 0 && br_dns_parse(out, n, &q2) != -EBADMSG)
			abort();
		if (n != 0 && memcmp(out, data, 2) != 0)
			abort();
	} else if (rc == -EINVAL || rc == -ENOTSUP) {
		n = br_dns_reply(data, size, NULL, BR_DNS_FORMERR, NULL, 0, NULL, out, sizeof(out));
		if (n != 12 || memcmp(out, data, 2) != 0)
			abort();
	} else if (rc != -EBADMSG) {
		abort();
	}
}
