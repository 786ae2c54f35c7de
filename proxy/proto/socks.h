/*
 * proxy/proto/socks.h: the SOCKS5 parser (RFC 1928), no libevent and no state
 * of its own, so that it can be fuzzed alone.  The proxy speaks SOCKS5 on
 * every listener next to HTTP (accept.c tells them apart by the first
 * byte: 0x05 is the SOCKS version, and no HTTP method begins with it) and
 * takes only what postern can judge as an HTTP CONNECT: method 0x00 (no
 * authentication) and the CONNECT command.
 *
 * Each parser looks at the bytes received so far, from the start of its
 * message, and either asks for more (nothing consumed), or takes one whole
 * message and says how many bytes it was.  Bytes may arrive in pieces of
 * any size, one at a time included: the caller keeps them and calls again
 * with more.  A SOCKS5 greeting is at most 257 bytes and a request at most
 * 262, so parsing again from the start is cheap and there is no resume
 * state to get wrong.
 */
#ifndef POSTERN_PROXY_SOCKS_H
#define POSTERN_PROXY_SOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "conf/host.h"

#define PX_SOCKS_VERSION 0x05

/* Results of the parsers. */
enum px_socks_result {
	PX_SOCKS_BAD = -1,        /* not SOCKS5, or malformed: *REP and *WHY say */
	PX_SOCKS_INCOMPLETE = 0,  /* need more bytes; nothing consumed */
	PX_SOCKS_OK = 1,          /* one message taken, *USED bytes */
};

/* Commands (RFC 1928 §4). */
enum px_socks_cmd {
	PX_SOCKS_CONNECT = 0x01,
	PX_SOCKS_BIND = 0x02,
	PX_SOCKS_UDP_ASSOCIATE = 0x03,
};

/* Reply codes (RFC 1928 §6). */
enum px_socks_rep {
	PX_SOCKS_REP_OK = 0x00,
	PX_SOCKS_REP_FAILURE = 0x01,        /* general SOCKS server failure */
	PX_SOCKS_REP_NOT_ALLOWED = 0x02,    /* connection not allowed by ruleset */
	PX_SOCKS_REP_NET_UNREACH = 0x03,
	PX_SOCKS_REP_HOST_UNREACH = 0x04,
	PX_SOCKS_REP_REFUSED = 0x05,
	PX_SOCKS_REP_TTL_EXPIRED = 0x06,
	PX_SOCKS_REP_CMD_UNSUPPORTED = 0x07,
	PX_SOCKS_REP_ATYP_UNSUPPORTED = 0x08,
};

/* The length of a reply as px_socks_reply() writes it: IPv4 bound address. */
#define PX_SOCKS_REPLY_LEN 10

/*
 * The client's greeting (RFC 1928 §3): VER, NMETHODS, METHODS.  Takes it
 * from the LEN bytes at BUF: PX_SOCKS_OK with *USED (its length) and
 * *NOAUTH nonzero when METHODS offers 0x00, the one method postern accepts
 * (the session is the listener's, so there is nothing to authenticate);
 * PX_SOCKS_INCOMPLETE; or PX_SOCKS_BAD with *WHY (a static English phrase)
 * when VER is not 5 or NMETHODS is 0.
 */
int px_socks_greeting(const unsigned char *buf, size_t len, size_t *used, int *noauth,
    const char **why);

/* A request (RFC 1928 §4), as parsed. */
struct px_socks_request {
	int cmd;                  /* PX_SOCKS_CONNECT, _BIND, _UDP_ASSOCIATE or another byte */
	int atyp;                 /* 0x01 IPv4, 0x03 domain name, 0x04 IPv6 */
	struct cf_host host;      /* DST.ADDR through cf_host_parse() */
	uint16_t port;            /* DST.PORT */
};

/*
 * The client's request (RFC 1928 §4): VER, CMD, RSV, ATYP, DST.ADDR,
 * DST.PORT, from the LEN bytes at BUF.  DST.ADDR goes through the one host
 * normaliser, cf_host_parse(): a domain name (ATYP 0x03) as its octets (so
 * "1.2.3.4" spelled as a name is the literal, as in an HTTP CONNECT), an
 * IPv4 or IPv6 literal (ATYP 0x01, 0x04) as its canonical text.  Returns
 * PX_SOCKS_OK with *USED and *REQ set, whatever the command (the caller
 * refuses those it does not serve); PX_SOCKS_INCOMPLETE; or PX_SOCKS_BAD
 * with *REP (the reply code to send: 0x08 for an unknown ATYP, 0x01
 * otherwise) and *WHY set, for a VER other than 5, a nonzero RSV, an
 * unknown ATYP, an empty or malformed name, or a CONNECT to port 0 (a
 * UDP ASSOCIATE names 0.0.0.0:0 when the client does not know its own
 * address yet, RFC 1928 §7; it is refused all the same).
 */
int px_socks_request(const unsigned char *buf, size_t len, size_t *used,
    struct px_socks_request *req, int *rep, const char **why);

/*
 * Write the reply (RFC 1928 §6) with code REP into OUT: VER 5, REP, RSV 0,
 * ATYP 0x01 and BND.ADDR:BND.PORT 0.0.0.0:0.  The proxy never tells the
 * client the address it connects from: the sandbox has no use for it and
 * should not learn the host's addresses.  Returns PX_SOCKS_REPLY_LEN.
 */
size_t px_socks_reply(unsigned char out[PX_SOCKS_REPLY_LEN], int rep);

/*
 * The reply code (RFC 1928 §6) for a refusal the proxy words for HTTP as
 * STATUS with REASON (enum cf_reason): a refusal by the rules (every 403:
 * host, port, address, SNI, session) is 0x02 "connection not allowed by
 * ruleset"; a name that does not resolve, or an upstream that does not
 * answer in connect_timeout, 0x04 "host unreachable"; anything else 0x01
 * "general SOCKS server failure".
 */
int px_socks_rep_for(int status, int reason);

/* A name for command CMD, for the audit line: "SOCKS5 CONNECT", "SOCKS5
 * BIND", "SOCKS5 UDP ASSOCIATE", or "SOCKS5" for any other. */
const char *px_socks_cmd_name(int cmd);

#endif
