/*
 * bridge/dnswire.c: the DNS stub's wire format (see dnswire.h).
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "base/cursor.h"
#include "base/text.h"
#include "bridge/dnswire.h"
#include "bridge/forward.h"

/* RFC 1035 §4.1.1 header bits. */
#define F_QR 0x8000u
#define F_OPCODE 0x7800u
#define F_AA 0x0400u
#define F_RD 0x0100u
/* RFC 3225 §3: the DO bit of the OPT record's flags, copied back. */
#define OPT_DO 0x8000u

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/*
 * Read the plain-label name at C (RFC 1035 §3.1, §4.1.2) into TEXT
 * (dotted, no trailing dot, at most 254 bytes with NUL), consuming it
 * through its root label.  *PLAIN is cleared when a label holds a byte
 * that would read differently in dotted text (a '.', a NUL).  Returns 0
 * or -EINVAL (a pointer, an extended label type, over 255 bytes, cut
 * short).
 */
static int
read_name(struct bs_cursor *c, char *text, size_t size, bool *plain)
{
	const unsigned char *label;
	size_t t = 0, total = 0, i;
	uint8_t l;

	*plain = true;
	for (;;) {
		if (bs_cur_fetch_u8(c, &l) < 0)
			return -EINVAL;
		total++;
		if (l == 0)
			break;
		/* 11: a compression pointer; 01 and 10: extended label
		 * types (RFC 6891 §5).  A question names itself in full. */
		if (l & 0xc0)
			return -EINVAL;
		if (total + l > 255 || bs_cur_fetch_bytes(c, l, &label) < 0)
			return -EINVAL;
		total += l;
		for (i = 0; i < l; i++) {
			uint8_t ch = label[i];

			if (ch == '.' || ch == 0)
				*plain = false;
			if (t + 2 < size)
				text[t++] = (char)ch;
			else
				*plain = false;
		}
		if (t + 2 < size)
			text[t++] = '.';
	}
	if (t > 0)
		t--; /* the last dot */
	text[t] = '\0';
	return 0;
}

int
br_dns_parse(const uint8_t *msg, size_t len, struct br_dns_query *q)
{
	char text[CF_HOST_MAX + 4];
	struct bs_cursor c;
	struct cf_host h;
	size_t qstart;
	uint16_t id, flags, qd, an, ns, ar, qtype, qclass;
	bool plain;

	if (msg == NULL || len < 12)
		return -EBADMSG;
	/* The header's six numbers are there: no fetch of them can fail. */
	bs_cur_init(&c, msg, len);
	bs_cur_fetch_be16(&c, &id);
	bs_cur_fetch_be16(&c, &flags);
	if (flags & F_QR)
		return -EBADMSG;
	memset(q, 0, sizeof(*q));
	q->id = id;
	q->flags = flags;
	if ((flags & F_OPCODE) != 0)
		return -ENOTSUP;
	bs_cur_fetch_be16(&c, &qd);
	bs_cur_fetch_be16(&c, &an);
	bs_cur_fetch_be16(&c, &ns);
	bs_cur_fetch_be16(&c, &ar);
	/* RFC 1035 §4.1.2 allows more, and no server answers them: one. */
	if (qd != 1 || an != 0 || ns != 0 || ar > 1)
		return -EINVAL;
	qstart = bs_cur_pos(&c);
	if (read_name(&c, text, sizeof(text), &plain) < 0 ||
	    bs_cur_fetch_be16(&c, &qtype) < 0 || bs_cur_fetch_be16(&c, &qclass) < 0)
		return -EINVAL;
	q->qtype = qtype;
	q->qclass = qclass;
	q->question = msg + qstart;
	q->qlen = bs_cur_pos(&c) - qstart;
	if (ar == 1) {
		uint16_t type, size, eflags, rdlen, code, olen;
		uint8_t root, ercode, version;

		/* One OPT pseudo-record (RFC 6891 §6.1.2): the root name,
		 * type 41, class (the UDP size), TTL (extended RCODE,
		 * VERSION, flags), RDLENGTH and exactly that much RDATA, to
		 * the end of the message. */
		if (bs_cur_left(&c) < 11)
			return -EINVAL;
		/* (Eleven bytes are there for these.) */
		bs_cur_fetch_u8(&c, &root);
		bs_cur_fetch_be16(&c, &type);
		bs_cur_fetch_be16(&c, &size);
		bs_cur_fetch_u8(&c, &ercode);
		bs_cur_fetch_u8(&c, &version);
		bs_cur_fetch_be16(&c, &eflags);
		bs_cur_fetch_be16(&c, &rdlen);
		if (root != 0 || type != BR_DNS_TYPE_OPT || rdlen != bs_cur_left(&c))
			return -EINVAL;
		/* The RDATA is whole options: code, length, that many bytes.
		 * None is acted on; a cut one is a malformed query. */
		while (bs_cur_left(&c) > 0)
			if (bs_cur_fetch_be16(&c, &code) < 0 || bs_cur_fetch_be16(&c, &olen) < 0 ||
			    bs_cur_consume(&c, olen) < 0)
				return -EINVAL;
		q->edns = 1;
		q->edns_version = version;
		q->edns_flags = eflags;
	}
	if (bs_cur_left(&c) != 0)
		return -EINVAL;
	if (plain && text[0] != '\0' &&
	    cf_host_parse(text, strlen(text), CF_HOST_NO_IP, &h, NULL) == 0 &&
	    h.kind == CF_HOST_NAME) {
		q->name_ok = 1;
		memcpy(q->name, h.name, sizeof(q->name));
	}
	return 0;
}

size_t
br_dns_reply(const uint8_t *msg, size_t len, const struct br_dns_query *q, int rcode,
    const struct in_addr *a, uint32_t ttl, const struct br_dns_ede *ede, uint8_t *out,
    size_t cap)
{
	size_t n = 12, need = 12, ol = 0, tl = 0, i;
	bool opt = q != NULL && q->edns;
	struct bs_cursor c;
	uint16_t flags;

	if (msg == NULL || len < 12 || cap < 12)
		return 0;
	bs_cur_init(&c, msg, len);
	bs_cur_consume(&c, 2);
	bs_cur_fetch_be16(&c, &flags);
	if (q != NULL)
		need += q->qlen + (a != NULL ? 16 : 0) + (opt ? 11 : 0);
	if (need > cap)
		return 0;
	/* The error's text takes what room is left, never the answer's. */
	if (opt && ede != NULL && cap - need >= 6) {
		if (ede->text != NULL)
			tl = strnlen(ede->text, BR_DNS_EDE_TEXT_MAX);
		if (tl > cap - need - 6)
			tl = cap - need - 6;
		ol = 6 + tl;
	}
	memcpy(out, msg, 2);
	/* QR, the opcode asked, AA (the stub is the authority for its own
	 * answers), RD echoed (RFC 1035 §4.1.1), RA clear: it recurses
	 * nowhere.  An RCODE past 15 has its upper bits in the OPT record. */
	put16(out + 2, (uint16_t)(F_QR | (flags & (F_OPCODE | F_RD)) | F_AA |
	    (rcode & 0xf)));
	put16(out + 4, q != NULL ? 1 : 0);
	put16(out + 6, q != NULL && a != NULL ? 1 : 0);
	put16(out + 8, 0);
	put16(out + 10, opt ? 1 : 0);
	if (q == NULL)
		return n;
	memcpy(out + n, q->question, q->qlen);
	n += q->qlen;
	if (a != NULL) {
		/* RFC 1035 §4.1.4: the name is the question's, at offset 12. */
		put16(out + n, 0xc00c);
		put16(out + n + 2, BR_DNS_TYPE_A);
		put16(out + n + 4, BR_DNS_CLASS_IN);
		put16(out + n + 6, (uint16_t)(ttl >> 16));
		put16(out + n + 8, (uint16_t)ttl);
		put16(out + n + 10, 4);
		memcpy(out + n + 12, &a->s_addr, 4);
		n += 16;
	}
	if (!opt)
		return n;
	/* RFC 6891 §6.1.2-3: root name, OPT, the largest message the stub
	 * reads, extended RCODE, version 0, DO copied, then the options. */
	out[n] = 0;
	put16(out + n + 1, BR_DNS_TYPE_OPT);
	put16(out + n + 3, BR_DNS_MSG_MAX);
	out[n + 5] = (uint8_t)((rcode >> 4) & 0xff);
	out[n + 6] = 0;
	put16(out + n + 7, (uint16_t)(q->edns_flags & OPT_DO));
	put16(out + n + 9, (uint16_t)ol);
	n += 11;
	if (ol == 0)
		return n;
	/* RFC 8914 §2: OPTION-CODE 15, its length, INFO-CODE, EXTRA-TEXT
	 * (UTF-8, no NUL; plain printable ASCII here). */
	put16(out + n, BR_DNS_OPT_EDE);
	put16(out + n + 2, (uint16_t)(2 + tl));
	put16(out + n + 4, ede->code);
	for (i = 0; i < tl; i++) {
		unsigned char ch = (unsigned char)ede->text[i];

		out[n + 6 + i] = ch >= 0x20 && ch < 0x7f ? ch : '?';
	}
	return n + ol;
}

int
br_dns_ports_parse(const char *buf, size_t len, uint16_t *ports, size_t max)
{
	static const char lead[] = "postern-name 1\nports";
	struct bs_cursor c;
	struct bs_reply r;
	size_t n = 0;
	uint64_t v;
	int rc, ch;

	rc = bs_reply_parse(buf, len, &r);
	if (rc < 0)
		return -EINVAL;
	if (rc == 0 || r.status != 200)
		return 0;
	bs_cur_init(&c, buf + r.head_len, len - r.head_len);
	if (bs_cur_expect(&c, lead, sizeof(lead) - 1) != 0)
		return -EINVAL;
	while (bs_cur_peek(&c) == ' ') {
		bs_cur_consume(&c, 1);
		/* Plain digits, no leading zero, 1-65535, ascending. */
		ch = bs_cur_peek(&c);
		if (ch < '1' || ch > '9' || bs_cur_num(&c, 65535, &v) < 0)
			return -EINVAL;
		if (n == max || (n > 0 && v <= ports[n - 1]))
			return -EINVAL;
		ports[n++] = (uint16_t)v;
	}
	if (n == 0 || bs_cur_left(&c) != 1 || bs_cur_peek(&c) != '\n')
		return -EINVAL;
	return (int)n;
}

/* Append the N bytes at P to S, each byte other than printable ASCII as
 * '?': an EXTRA-TEXT carries no control byte. */
static void
add_ascii(struct bs_str *s, const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char ch = p[i] >= 0x20 && p[i] < 0x7f ? p[i] : '?';

		bs_str_addn(s, &ch, 1);
	}
}

size_t
br_dns_refusal_text(const char *buf, size_t len, const char *name, char *out, size_t size)
{
	static const char lead[] = "To allow it, an admin can ";
	const unsigned char *p;
	struct bs_cursor c, l;
	struct bs_reply r;
	struct bs_str s;
	size_t k;
	int ok, ch;

	ok = buf != NULL && bs_reply_parse(buf, len, &r) == 1;
	bs_str_init(&s, out, size);
	bs_str_add(&s, "postern: refused ");
	add_ascii(&s, name, strlen(name));
	bs_str_add(&s, ": ");
	bs_str_add(&s, ok && r.reason[0] != '\0' ? r.reason : "refused");
	/* The proxy's own words for what would allow it: the line its
	 * refusal body gives a person (proxy/flow/conn.c). */
	if (!ok)
		goto out;
	bs_cur_init(&c, buf + r.head_len, len - r.head_len);
	while (bs_cur_left(&c) > 0) {
		/* L is one line, without its LF. */
		p = bs_cur_ptr(&c);
		bs_cur_init(&l, p, bs_cur_skip_until(&c, "\n"));
		bs_cur_consume(&c, 1);
		if (bs_cur_left(&l) <= sizeof(lead) - 1 ||
		    bs_cur_expect(&l, lead, sizeof(lead) - 1) != 0)
			continue;
		for (k = 0; (ch = bs_cur_peek_at(&l, k)) >= 0x20 && ch < 0x7f; k++)
			;
		if (k > 0) {
			bs_str_add(&s, "; to allow it, ");
			add_ascii(&s, (const char *)bs_cur_ptr(&l), k);
		}
		break;
	}
out:
	return s.len < size ? s.len : size - 1;
}
