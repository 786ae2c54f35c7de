/*
 * conf/host.h: the one normaliser for every host name postern sees.
 *
 * The CONNECT authority, an absolute URI's authority, the Host header, the
 * TLS server_name and the host patterns of the config all go through these
 * functions, so that every comparison is made between normal forms and never
 * between raw strings.
 */
#ifndef POSTERN_CONF_HOST_H
#define POSTERN_CONF_HOST_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

/* 253 octets of name plus the terminating NUL (RFC 1035 §2.3.4). */
#define CF_HOST_MAX 254
/* Longest canonical IPv6 text plus brackets and NUL. */
#define CF_HOST_TEXT_MAX (CF_HOST_MAX + 8)

enum cf_host_kind {
	CF_HOST_NAME = 1, /* an LDH name in normal form */
	CF_HOST_IPV4,     /* a dotted quad in canonical form */
	CF_HOST_IPV6,     /* a bracketed IPv6 literal */
};

struct cf_host {
	enum cf_host_kind kind;
	/*
	 * Normal form: for a name, lower case, no trailing dot; for IPv4, the
	 * canonical dotted quad; for IPv6, the inet_ntop(3) text without
	 * brackets.  Always NUL-terminated.
	 */
	char name[CF_HOST_MAX];
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} addr; /* valid for CF_HOST_IPV4 and CF_HOST_IPV6 only */
};

/* Flags for cf_host_parse() and cf_authority_parse(). */
#define CF_HOST_NO_IP 0x01  /* refuse IP literals (a TLS server_name) */

/*
 * Parse one host of LEN bytes at S (not NUL-terminated) into OUT.  Accepts an
 * LDH name (labels of 1-63 letters, digits and inner hyphens, 253 octets in
 * all, one optional trailing dot), a canonical dotted-quad IPv4 address, or a
 * bracketed IPv6 address.  Refuses anything else, in particular the
 * non-canonical IPv4 forms (2130706433, 0177.0.0.1, 0x7f.1, 127.1), userinfo,
 * %-escapes and zone identifiers, raw UTF-8, control bytes and empty labels.
 * Returns 0, or -EINVAL with *WHY (when WHY is not NULL) set to a static
 * English phrase saying what is wrong.  OUT is written only on success.
 */
int cf_host_parse(const char *s, size_t len, int flags, struct cf_host *out,
    const char **why);

/*
 * Parse a port of LEN bytes at S: plain decimal digits, 1-65535, no sign, no
 * leading zero, no trailing bytes.  Returns 0 and stores *OUT, or -EINVAL and
 * sets *WHY.
 */
int cf_port_parse(const char *s, size_t len, uint16_t *out, const char **why);

/*
 * Parse an authority "host[:port]" (RFC 9110 §4.2.3 / RFC 3986 §3.2) of LEN
 * bytes at S.  The host is parsed with cf_host_parse(); a userinfo part
 * ("user@") is refused.  *PORT is set to the port, or to 0 when the
 * authority has none (callers that need one, such as CONNECT, refuse 0).
 * Returns 0 or -EINVAL with *WHY set.
 */
int cf_authority_parse(const char *s, size_t len, int flags,
    struct cf_host *host, uint16_t *port, const char **why);

/*
 * Write HOST as it would appear in an authority (IPv6 in brackets) into BUF
 * of SIZE bytes, NUL-terminated.  Returns BUF.
 */
char *cf_host_format(const struct cf_host *host, char *buf, size_t size);

/* Nonzero when A and B are the same host in normal form. */
int cf_host_equal(const struct cf_host *a, const struct cf_host *b);

/*
 * The value of C as a hexadecimal digit (0-9, a-f, A-F: RFC 3986 §2.1's
 * HEXDIG, either case), or -1 when it is none.  The one hex digit reader of
 * the name, path and chunk-size parsers.
 */
int cf_hex_value(unsigned char c);

#endif
