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

/* DESIGN.md "Never-reachable ranges", IPv4 part. */
static const struct v4range v4ranges[] = {
	{ 0x00000000, 8, "0.0.0.0/8 (this network)" },
	{ 0x0a000000, 8, "10.0.0.0/8 (private)" },
	{ 0x64400000, 10, "100.64.0.0/10 (carrier-grade NAT)" },
	{ 0x7f000000, 8, "127.0.0.0/8 (loopback)" },
	{ 0xa9fe0000, 16, "169.254.0.0/16 (link-local, cloud metadata)" },
	{ 0xac100000, 12, "172.16.0.0/12 (private)" },
	{ 0xc0000000, 24, "192.0.0.0/24 (IETF protocol assignments)" },
	{ 0xc0a80000, 16, "192.168.0.0/16 (private)" },
	{ 0xc6120000, 15, "198.18.0.0/15 (benchmarking)" },
	{ 0xe0000000, 4, "224.0.0.0/4 (multicast)" },
	{ 0xf0000000, 4, "240.0.0.0/4 (reserved, broadcast)" },
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

/* Classify the IPv4 address stored at B (network byte order). */
static const char *
embedded(const uint8_t *b)
{
	struct in_addr v4;

	memcpy(&v4.s_addr, b, 4);
	return cf_range_v4(&v4);
}

const char *
cf_range_v6(const struct in6_addr *a)
{
	static const uint8_t zero[16];
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const uint8_t nat64[12] = { 0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0 };
	const uint8_t *b = a->s6_addr;
	uint8_t teredo[4];

	if (prefix_eq(b, zero, 16))
		return ":: (unspecified)";
	if (prefix_eq(b, zero, 15) && b[15] == 1)
		return "::1 (loopback)";
	/* The IPv4 inside is what the kernel will connect to; judge that. */
	if (prefix_eq(b, mapped, 12))
		return embedded(b + 12);
	if (prefix_eq(b, nat64, 12))
		return embedded(b + 12);
	if ((b[0] & 0xfe) == 0xfc)
		return "fc00::/7 (unique local)";
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
		return "fe80::/10 (link-local)";
	if (b[0] == 0xff)
		return "ff00::/8 (multicast)";
	if (b[0] == 0x20 && b[1] == 0x02)
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
