/*
 * tests/unit/test-ranges.c: the never-reachable classifier, including the
 * IPv4 embedded in IPv6 (mapped, NAT64, 6to4, Teredo).
 */
#include "config.h"

#include <arpa/inet.h>
#include <string.h>

#include "conf/ranges.h"
#include "tests/unit/tap.h"

struct range_case {
	const char *addr;
	int blocked;
};

static const struct range_case cases[] = {
	{ "0.0.0.0", 1 }, { "0.255.255.255", 1 },
	{ "10.0.0.1", 1 }, { "10.255.255.255", 1 }, { "11.0.0.1", 0 },
	{ "100.64.0.1", 1 }, { "100.127.255.255", 1 }, { "100.128.0.1", 0 }, { "100.63.255.255", 0 },
	{ "127.0.0.1", 1 }, { "127.255.255.254", 1 },
	{ "169.254.169.254", 1 }, { "169.253.0.1", 0 },
	{ "172.16.0.1", 1 }, { "172.31.255.255", 1 }, { "172.32.0.1", 0 }, { "172.15.255.255", 0 },
	{ "192.0.0.1", 1 }, { "192.0.1.1", 0 },
	{ "192.168.1.1", 1 }, { "192.169.0.1", 0 },
	{ "198.18.0.1", 1 }, { "198.19.255.255", 1 }, { "198.20.0.1", 0 },
	{ "224.0.0.1", 1 }, { "239.255.255.255", 1 },
	{ "240.0.0.1", 1 }, { "255.255.255.255", 1 },
	{ "1.1.1.1", 0 }, { "93.184.216.34", 0 },
	/* More IANA IPv4 Special-Purpose registry entries. */
	{ "192.0.2.1", 1 }, { "198.51.100.7", 1 }, { "203.0.113.7", 1 }, { "203.0.114.1", 0 },
	{ "192.88.99.1", 1 }, { "192.88.98.1", 0 },
	{ "192.31.196.1", 0 }, { "192.175.48.1", 0 },
	{ "::", 1 }, { "::1", 1 },
	{ "::ffff:127.0.0.1", 1 }, { "::ffff:169.254.169.254", 1 }, { "::ffff:10.1.2.3", 1 },
	{ "::ffff:93.184.216.34", 0 },
	{ "64:ff9b::7f00:1", 1 }, { "64:ff9b::a9fe:a9fe", 1 }, { "64:ff9b::5db8:d822", 0 },
	{ "fc00::1", 1 }, { "fd12:3456::1", 1 }, { "fe80::1", 1 }, { "febf::1", 1 }, { "fec0::1", 1 }, { "feff::1", 1 },
	{ "ff02::1", 1 },
	{ "2002:7f00:0001::1", 1 }, { "2002:a9fe:a9fe::", 1 }, { "2002:5db8:d822::1", 0 },
	/* Teredo: client 127.0.0.1 is stored inverted: 80ff:fffe. */
	{ "2001:0:5db8:d822:0:0:80ff:fffe", 1 },
	{ "2001:0:5db8:d822:0:0:a201:2729", 0 },
	{ "2001:0:0a00:0001:0:0:a201:2729", 1 },
	{ "2606:4700::1111", 0 }, { "2001:db8::1", 1 },
	/* RFC 8215: 64:ff9b:1::a9fe:a9fe is 169.254.169.254 behind it. */
	{ "64:ff9b:1::a9fe:a9fe", 1 }, { "64:ff9b:1:ffff::1", 1 }, { "64:ff9b:2::5db8:d822", 0 },
	/* RFC 4291 2.5.5.1 IPv4-compatible, deprecated: public or not. */
	{ "::a9fe:a9fe", 1 }, { "::5db8:d822", 1 }, { "::2", 1 },
	{ "100::1", 1 }, { "100:0:0:1::1", 1 }, { "100:0:0:2::1", 0 },
	{ "2001:2::1", 1 }, { "2001:2:1::1", 0 }, { "2001:10::1", 1 }, { "2001:20::1", 0 },
	{ "2001:db7:ffff::1", 0 }, { "2001:db9::1", 0 },
	{ "3fff::1", 1 }, { "3fff:fff::1", 1 }, { "3fff:1000::1", 0 },
	{ "5f00::1", 1 }, { "5f01::1", 0 },
	{ "fe00::1", 0 }, { "2002:c058:6301::1", 1 },
};

struct v4of_case {
	const char *v6;
	const char *v4; /* NULL: stands for no IPv4 address */
};

/* cf_addr_v4_of(): the one unwrapping the rules and the listener check use. */
static const struct v4of_case v4of_cases[] = {
	{ "::ffff:10.200.65.3", "10.200.65.3" }, { "::ffff:169.254.169.254", "169.254.169.254" },
	{ "64:ff9b::7f00:1", "127.0.0.1" }, { "::10.1.2.3", "10.1.2.3" },
	{ "::", NULL }, { "::1", NULL }, { "64:ff9b:1::a9fe:a9fe", NULL },
	{ "2002:a9fe:a9fe::", NULL }, { "::fffe:a9fe:a9fe", NULL }, { "fd00::a9fe:a9fe", NULL },
};

int
main(void)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *r;
		if (strchr(cases[i].addr, ':') != NULL) {
			struct in6_addr a;
			inet_pton(AF_INET6, cases[i].addr, &a);
			r = cf_range_v6(&a);
		} else {
			struct in_addr a;
			inet_pton(AF_INET, cases[i].addr, &a);
			r = cf_range_v4(&a);
		}
		tap_ok((r != NULL) == cases[i].blocked, "%s is %s (%s)", cases[i].addr,
		    cases[i].blocked ? "never-reachable" : "reachable", r ? r : "public");
	}
	{
		struct sockaddr_in6 s6;
		memset(&s6, 0, sizeof(s6));
		s6.sin6_family = AF_INET6;
		inet_pton(AF_INET6, "::ffff:10.0.0.1", &s6.sin6_addr);
		tap_ok(cf_range_sockaddr((struct sockaddr *)&s6) != NULL, "sockaddr form of a mapped address");
	}
	for (i = 0; i < sizeof(v4of_cases) / sizeof(v4of_cases[0]); i++) {
		struct in6_addr a;
		struct in_addr v4;
		char buf[INET_ADDRSTRLEN] = "";
		int r;

		inet_pton(AF_INET6, v4of_cases[i].v6, &a);
		r = cf_addr_v4_of(&a, &v4);
		if (r)
			inet_ntop(AF_INET, &v4, buf, sizeof(buf));
		tap_ok(v4of_cases[i].v4 == NULL ? r == 0 : r == 1 && strcmp(buf, v4of_cases[i].v4) == 0,
		    "%s stands for %s (%s)", v4of_cases[i].v6,
		    v4of_cases[i].v4 ? v4of_cases[i].v4 : "no IPv4 address", r ? buf : "none");
	}
	return tap_done();
}
