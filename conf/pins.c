/*
 * conf/pins.c: the [hosts] section, names pinned to addresses (see
 * pins.h).
 */
#include "conf/pins.h"

#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "conf/build.h"
#include "conf/config.h"

/*
 * One [hosts] line, "NAME = ADDR[, ADDR]...": NAME a host name (never an
 * address or a wildcard), each ADDR a canonical IPv4 or IPv6 literal (bare
 * or bracketed, no zone).  A name given twice is an error, not a merge: the
 * admin must see which line is in force.
 */
void
cfh_add_pin(struct cf_build *b, const char *key, const char *value, const char *shown)
{
	struct cf_host h;
	struct cf_pin pin, *nv;
	const char *why = NULL, *p = value;
	char skey[120];
	size_t i;

	cfb_show(skey, sizeof(skey), key);
	memset(&pin, 0, sizeof(pin));
	if (cf_host_parse(key, strlen(key), CF_HOST_NO_IP, &h, &why) != 0 || h.kind != CF_HOST_NAME) {
		cfb_err(b, b->line, "[hosts] pins a host name: %s (%s)", why ? why : "not a name", skey);
		return;
	}
	memcpy(pin.name, h.name, sizeof(pin.name));
	for (i = 0; i < b->npins; i++)
		if (strcmp(b->pins[i].name, pin.name) == 0) {
			cfb_err(b, b->line, "%s is pinned twice (first on line %d)", skey, b->pins[i].line);
			return;
		}
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char tmp[INET6_ADDRSTRLEN + 3];
		struct sockaddr_storage *ss;
		while (len > 0 && cfb_blank(*p))
			p++, len--;
		while (len > 0 && cfb_blank(p[len - 1]))
			len--;
		if (len > 2 && p[0] == '[' && p[len - 1] == ']')
			p++, len -= 2;
		if (len == 0 || len >= sizeof(tmp)) {
			cfb_err(b, b->line, "[hosts] %s = ADDRESS, ADDRESS, ...: an empty or overlong address (%s)",
			    skey, shown);
			return;
		}
		if (pin.naddrs == CF_PIN_MAX_ADDRS) {
			cfb_err(b, b->line, "[hosts] pins at most %d addresses to a name (%s)", CF_PIN_MAX_ADDRS, skey);
			return;
		}
		memcpy(tmp, p, len);
		tmp[len] = '\0';
		ss = &pin.addrs[pin.naddrs];
		if (memchr(tmp, ':', len) != NULL) {
			struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
			if (inet_pton(AF_INET6, tmp, &sin6->sin6_addr) != 1) {
				cfb_err(b, b->line, "[hosts] %s: not an IPv6 address (%s)", skey, shown);
				return;
			}
			sin6->sin6_family = AF_INET6;
		} else {
			struct sockaddr_in *sin = (struct sockaddr_in *)ss;
			if (cf_host_parse(tmp, len, 0, &h, &why) != 0 || h.kind != CF_HOST_IPV4) {
				cfb_err(b, b->line, "[hosts] %s: not a canonical IPv4 address (%s)", skey, shown);
				return;
			}
			sin->sin_family = AF_INET;
			sin->sin_addr = h.addr.v4;
		}
		pin.naddrs++;
		if (comma == NULL)
			break;
		p = comma + 1;
	}
	pin.line = b->line;
	nv = realloc(b->pins, (b->npins + 1) * sizeof(*nv));
	if (nv == NULL) {
		cfb_err(b, b->line, "out of memory");
		return;
	}
	nv[b->npins++] = pin;
	b->pins = nv;
}
