/*
 * conf/ranges.c: the never-reachable address classifier (see ranges.h).
 */
#include "config.h"

#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>

#include "conf/ranges.h"

struct v4range {
	uint32_t net;
	int len;
	const char *name;
};

/*
 * The never-reachable ranges, IPv4 part: the IANA IPv4
 * Special-Purpose Address Registry (RFC 6890 and its successors) entries
 * that are not globally reachable, plus multicast and the reserved block.
 * Registry entries left out are globally reachable: 192.31.196.0/24
 * (AS112, RFC 7535), 192.52.193.0/24 (AMT, RFC 7450), 192.175.48.0/24
 * (AS112, RFC 7534).
 */
static const struct v4range v4ranges[] = {
	{ 0x00000000, 8, "0.0.0.0/8 (this network)" },         /* RFC 791 3.2, RFC 1122 3.2.1.3 */
	{ 0x0a000000, 8, "10.0.0.0/8 (private)" },             /* RFC 1918 */
	{ 0x64400000, 10, "100.64.0.0/10 (carrier-grade NAT)" }, /* RFC 6598 */
	{ 0x7f000000, 8, "127.0.0.0/8 (loopback)" },           /* RFC 1122 3.2.1.3 */
	{ 0xa9fe0000, 16, "169.254.0.0/16 (link-local, cloud metadata)" }, /* RFC 3927 */
	{ 0xac100000, 12, "172.16.0.0/12 (private)" },         /* RFC 1918 */
	{ 0xc0000000, 24, "192.0.0.0/24 (IETF protocol assignments)" }, /* RFC 6890 2.1 */
	{ 0xc0000200, 24, "192.0.2.0/24 (documentation, TEST-NET-1)" }, /* RFC 5737 */
	{ 0xc0586300, 24, "192.88.99.0/24 (deprecated 6to4 relay anycast)" }, /* RFC 7526 */
	{ 0xc0a80000, 16, "192.168.0.0/16 (private)" },        /* RFC 1918 */
	{ 0xc6120000, 15, "198.18.0.0/15 (benchmarking)" },    /* RFC 2544 */
	{ 0xc6336400, 24, "198.51.100.0/24 (documentation, TEST-NET-2)" }, /* RFC 5737 */
	{ 0xcb007100, 24, "203.0.113.0/24 (documentation, TEST-NET-3)" }, /* RFC 5737 */
	{ 0xe0000000, 4, "224.0.0.0/4 (multicast)" },          /* RFC 5771 */
	{ 0xf0000000, 4, "240.0.0.0/4 (reserved, broadcast)" }, /* RFC 1112 4, RFC 919 7 */
};

struct v6range {
	uint8_t net[16];
	int len;
	const char *name;
};

/*
 * IPv6 part: the IANA IPv6 Special-Purpose Address Registry entries that are
 * not globally reachable and embed no IPv4 address to judge instead, and
 * the retired blocks that must not be dialled either.  ::, ::1, the
 * IPv4-compatible, IPv4-mapped, NAT64, 6to4 and Teredo forms are handled
 * in cf_range_v6() itself.  Entries of 2001::/23 left out are globally
 * reachable (RFC 7723 PCP, RFC 8155 TURN, RFC 7450 AMT, RFC 7535 AS112,
 * RFC 7343 ORCHIDv2, RFC 9374 DRIP).
 */
static const struct v6range v6ranges[] = {
	{ { 0x00, 0x64, 0xff, 0x9b, 0x00, 0x01 }, 48,
	    "64:ff9b:1::/48 (local-use NAT64)" },               /* RFC 8215 */
	{ { 0x01, 0x00 }, 64, "100::/64 (discard-only)" },      /* RFC 6666 */
	{ { 0x01, 0x00, 0, 0, 0, 0, 0, 0x01 }, 64, "100:0:0:1::/64 (dummy prefix)" }, /* RFC 9780 */
	{ { 0x20, 0x01, 0x00, 0x02, 0x00, 0x00 }, 48,
	    "2001:2::/48 (benchmarking)" },                     /* RFC 5180 */
	{ { 0x20, 0x01, 0x00, 0x10 }, 28, "2001:10::/28 (deprecated ORCHID)" }, /* RFC 4843 */
	{ { 0x20, 0x01, 0x0d, 0xb8 }, 32, "2001:db8::/32 (documentation)" }, /* RFC 3849 */
	{ { 0x3f, 0xff }, 20, "3fff::/20 (documentation)" },    /* RFC 9637 */
	{ { 0x5f, 0x00 }, 16, "5f00::/16 (SRv6 SIDs)" },        /* RFC 9602 */
	{ { 0xfc }, 7, "fc00::/7 (unique local)" },             /* RFC 4193 */
	{ { 0xfe, 0x80 }, 10, "fe80::/10 (link-local)" },       /* RFC 4291 2.5.6 */
	{ { 0xfe, 0xc0 }, 10, "fec0::/10 (deprecated site-local)" }, /* RFC 3879 */
	{ { 0xff }, 8, "ff00::/8 (multicast)" },                /* RFC 4291 2.7 */
};

const char *
cf_range_v4(const struct in_addr *a)
{
	uint32_t v = ntohl(a->s_addr);
	size_t i;

	for (i = 0; i < sizeof(v4ranges) / sizeof(v4ranges[0]); i++) {
		uint32_t mask = v4ranges[i].len == 0 ? 0 :
		    0xffffffffu << (32 - v4ranges[i].len);
		if ((v & mask) == v4ranges[i].net)
			return v4ranges[i].name;
	}
	return NULL;
}

static int
prefix_eq(const uint8_t *a, const uint8_t *p, int bytes)
{
	return memcmp(a, p, (size_t)bytes) == 0;
}

static int
in_prefix6(const uint8_t *a, const uint8_t *net, int len)
{
	int full = len / 8, rem = len % 8;

	if (memcmp(a, net, (size_t)full) != 0)
		return 0;
	return rem == 0 || (a[full] & (uint8_t)(0xff << (8 - rem))) == net[full];
}

/* Classify the IPv4 address stored at B (network byte order). */
static const char *
embedded(const uint8_t *b)
{
	struct in_addr v4;

	memcpy(&v4.s_addr, b, 4);
	return cf_range_v4(&v4);
}

int
cf_addr_v4_of(const struct in6_addr *a, struct in_addr *v4)
{
	static const uint8_t zero[12];
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const uint8_t nat64[12] = { 0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0 };
	const uint8_t *b = a->s6_addr;

	if (prefix_eq(b, mapped, 12) || prefix_eq(b, nat64, 12) ||
	    (prefix_eq(b, zero, 12) && !(b[12] == 0 && b[13] == 0 && b[14] == 0 && b[15] <= 1))) {
		memcpy(&v4->s_addr, b + 12, 4);
		return 1;
	}
	return 0;
}

const struct sockaddr *
cf_sockaddr_unmap(const struct sockaddr *sa, struct sockaddr_in *tmp)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)(const void *)sa;
	struct in_addr v4;

	if (sa->sa_family != AF_INET6 || !cf_addr_v4_of(&s6->sin6_addr, &v4))
		return sa;
	memset(tmp, 0, sizeof(*tmp));
	tmp->sin_family = AF_INET;
	tmp->sin_port = s6->sin6_port;
	tmp->sin_addr = v4;
	return (const struct sockaddr *)tmp;
}

const char *
cf_range_v6(const struct in6_addr *a)
{
	static const uint8_t zero[16];
	const uint8_t *b = a->s6_addr;
	struct in_addr v4;
	uint8_t teredo[4];
	size_t i;

	if (prefix_eq(b, zero, 16))
		return ":: (unspecified)";                      /* RFC 4291 2.5.2 */
	if (prefix_eq(b, zero, 15) && b[15] == 1)
		return "::1 (loopback)";                        /* RFC 4291 2.5.3 */
	/* RFC 4291 2.5.5.1: deprecated, and nothing routes it. */
	if (prefix_eq(b, zero, 12))
		return "::/96 (deprecated IPv4-compatible)";
	/* Mapped (RFC 4291 2.5.5.2) and NAT64 (RFC 6052): the IPv4 inside is
	 * what the connection reaches; judge that. */
	if (cf_addr_v4_of(a, &v4))
		return cf_range_v4(&v4);
	for (i = 0; i < sizeof(v6ranges) / sizeof(v6ranges[0]); i++)
		if (in_prefix6(b, v6ranges[i].net, v6ranges[i].len))
			return v6ranges[i].name;
	if (b[0] == 0x20 && b[1] == 0x02)                       /* 6to4, RFC 3056 */
		return embedded(b + 2);
	if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x00 && b[3] == 0x00) {
		/* Teredo: the client's IPv4 address is the last 32 bits, inverted
		 * (RFC 4380 §4); the server's is bits 32-63.  Check both. */
		const char *r;
		teredo[0] = (uint8_t)~b[12];
		teredo[1] = (uint8_t)~b[13];
		teredo[2] = (uint8_t)~b[14];
		teredo[3] = (uint8_t)~b[15];
		r = embedded(teredo);
		if (r != NULL)
			return r;
		return embedded(b + 4);
	}
	return NULL;
}

const char *
cf_range_sockaddr(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return cf_range_v4(&((const struct sockaddr_in *)(const void *)sa)->sin_addr);
	if (sa->sa_family == AF_INET6)
		return cf_range_v6(&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr);
	return "not an IP address";
}
