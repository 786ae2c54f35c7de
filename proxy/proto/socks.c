/*
 * proxy/proto/socks.c: the SOCKS5 parser (RFC 1928); socks.h has the contract.
 * Every length is checked against the bytes received before it is used:
 * the peer is the sandbox.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <arpa/inet.h>

#include "base/cursor.h"
#include "conf/decide.h"
#include "proxy/proto/socks.h"

#define ATYP_IPV4 0x01
#define ATYP_NAME 0x03
#define ATYP_IPV6 0x04

int
px_socks_greeting(const unsigned char *buf, size_t len, size_t *used, int *noauth,
    const char **why)
{
	struct bs_cursor c;
	const unsigned char *methods;
	uint8_t ver, n;

	*noauth = 0;
	bs_cur_init(&c, buf, len);
	if (bs_cur_fetch_u8(&c, &ver) < 0)
		return PX_SOCKS_INCOMPLETE;
	if (ver != PX_SOCKS_VERSION) {
		*why = "not SOCKS version 5";
		return PX_SOCKS_BAD;
	}
	if (bs_cur_fetch_u8(&c, &n) < 0)
		return PX_SOCKS_INCOMPLETE;
	/* RFC 1928 §3: NMETHODS is 1 to 255; an empty list offers nothing
	 * to choose and is no greeting. */
	if (n == 0) {
		*why = "the SOCKS5 greeting offers no method";
		return PX_SOCKS_BAD;
	}
	if (bs_cur_fetch_bytes(&c, n, &methods) < 0)
		return PX_SOCKS_INCOMPLETE;
	if (memchr(methods, 0x00, n) != NULL)
		*noauth = 1;
	*used = bs_cur_pos(&c);
	return PX_SOCKS_OK;
}

static int
bad(int *rep, int code, const char **why, const char *text)
{
	*rep = code;
	*why = text;
	return PX_SOCKS_BAD;
}

int
px_socks_request(const unsigned char *buf, size_t len, size_t *used,
    struct px_socks_request *req, int *rep, const char **why)
{
	char text[CF_HOST_TEXT_MAX];
	const char *hwhy = NULL;
	const unsigned char *addr;
	struct bs_cursor c;
	uint8_t ver, cmd, rsv, atyp, alen;
	uint16_t port;

	bs_cur_init(&c, buf, len);
	if (bs_cur_fetch_u8(&c, &ver) < 0)
		return PX_SOCKS_INCOMPLETE;
	if (ver != PX_SOCKS_VERSION)
		return bad(rep, PX_SOCKS_REP_FAILURE, why, "the SOCKS5 request is not version 5");
	if (bs_cur_left(&c) < 3)
		return PX_SOCKS_INCOMPLETE;
	bs_cur_fetch_u8(&c, &cmd);
	bs_cur_fetch_u8(&c, &rsv);
	bs_cur_fetch_u8(&c, &atyp);
	/* RFC 1928 §4: RSV is X'00'.  Anything else is not a request we
	 * understand, and a request not understood is not judged. */
	if (rsv != 0x00)
		return bad(rep, PX_SOCKS_REP_FAILURE, why, "the SOCKS5 request's reserved byte is not 0");
	switch (atyp) {
	case ATYP_IPV4:
		alen = 4;
		break;
	case ATYP_IPV6:
		alen = 16;
		break;
	case ATYP_NAME:
		/* RFC 1928 §5: the first octet is the name's length, and
		 * there is no terminating NUL. */
		if (bs_cur_fetch_u8(&c, &alen) < 0)
			return PX_SOCKS_INCOMPLETE;
		if (alen == 0)
			return bad(rep, PX_SOCKS_REP_FAILURE, why, "the SOCKS5 request names an empty host");
		break;
	default:
		return bad(rep, PX_SOCKS_REP_ATYP_UNSUPPORTED, why, "the SOCKS5 address type is unknown");
	}
	if (bs_cur_fetch_bytes(&c, alen, &addr) < 0 || bs_cur_fetch_be16(&c, &port) < 0)
		return PX_SOCKS_INCOMPLETE;

	memset(req, 0, sizeof(*req));
	req->cmd = cmd;
	req->atyp = atyp;
	req->port = port;
	if (atyp == ATYP_NAME) {
		if (cf_host_parse((const char *)addr, alen, 0, &req->host, &hwhy) != 0)
			return bad(rep, PX_SOCKS_REP_FAILURE, why, "the SOCKS5 request's host name is malformed");
	} else {
		/* A literal is judged as its canonical text is in an HTTP
		 * CONNECT: through the same normaliser, so that mapped and
		 * special addresses meet the same rules. */
		if (atyp == ATYP_IPV4) {
			inet_ntop(AF_INET, addr, text, sizeof(text));
		} else {
			char v6[INET6_ADDRSTRLEN];
			inet_ntop(AF_INET6, addr, v6, sizeof(v6));
			snprintf(text, sizeof(text), "[%s]", v6);
		}
		if (cf_host_parse(text, strlen(text), 0, &req->host, &hwhy) != 0)
			return bad(rep, PX_SOCKS_REP_FAILURE, why, "the SOCKS5 request's address is malformed");
	}
	/* Port 0 is no destination (an HTTP CONNECT refuses it too). */
	if (req->port == 0 && req->cmd == PX_SOCKS_CONNECT)
		return bad(rep, PX_SOCKS_REP_FAILURE, why, "the SOCKS5 request's port is 0");
	*used = bs_cur_pos(&c);
	return PX_SOCKS_OK;
}

size_t
px_socks_reply(unsigned char out[PX_SOCKS_REPLY_LEN], int rep)
{
	memset(out, 0, PX_SOCKS_REPLY_LEN);
	out[0] = PX_SOCKS_VERSION;
	out[1] = (unsigned char)rep;
	out[3] = ATYP_IPV4;
	return PX_SOCKS_REPLY_LEN;
}

int
px_socks_rep_for(int status, int reason)
{
	/* A budget's 429 is the ruleset's word too (RFC 1928 §6, X'02'). */
	if (status == 403 || status == 429)
		return PX_SOCKS_REP_NOT_ALLOWED;
	if (reason == CF_R_DNS_FAILURE || (reason == CF_R_TIMEOUT && status == 504))
		return PX_SOCKS_REP_HOST_UNREACH;
	return PX_SOCKS_REP_FAILURE;
}

const char *
px_socks_cmd_name(int cmd)
{
	switch (cmd) {
	case PX_SOCKS_CONNECT: return "SOCKS5 CONNECT";
	case PX_SOCKS_BIND: return "SOCKS5 BIND";
	case PX_SOCKS_UDP_ASSOCIATE: return "SOCKS5 UDP ASSOCIATE";
	default: return "SOCKS5";
	}
}
