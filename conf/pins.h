/*
 * conf/pins.h: the [hosts] section of a config file: each line pins a host
 * name to the addresses the proxy takes instead of asking DNS
 * (struct cf_pin in config.h).
 */
#ifndef POSTERN_CONF_PINS_H
#define POSTERN_CONF_PINS_H

struct cf_build;

/*
 * Apply the [hosts] line "KEY = VALUE" (on line B->line; SHOWN: VALUE
 * escaped for messages) to the parse B: KEY a host name (never an address
 * or a wildcard), VALUE one to CF_PIN_MAX_ADDRS canonical IPv4 or IPv6
 * literals, comma-separated, bare or bracketed, without a zone.  A name
 * pinned twice, or any bad part, is reported with cfb_err() and pins
 * nothing.
 */
void cfh_add_pin(struct cf_build *b, const char *key, const char *value, const char *shown);

#endif
