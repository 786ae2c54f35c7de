/*
 * tests/unit/test-base-sockmsg.c: the socket maker's path rule and messages
 * (base/sockmsg.h), table-driven: which paths it serves, and that a
 * request survives the trip while a damaged one is refused.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "base/sockmsg.h"
#include "tests/unit/tap.h"

static const struct {
	const char *path;
	int ok;
} under[] = {
	{ "/run/postern/a.sock", 1 },
	{ "/run/postern/sub/deeper/a.sock", 1 },
	{ "/run/postern", 0 },
	{ "/run/postern/", 0 },
	{ "/run/posternx/a.sock", 0 },
	{ "/run/postern/../etc/a.sock", 0 },
	{ "/run/postern/./a.sock", 0 },
	{ "/run/postern/sub/..", 0 },
	{ "/run/postern//a.sock", 0 },
	{ "/run/postern/sub/", 0 },
	{ "run/postern/a.sock", 0 },
	{ "/etc/a.sock", 0 },
	{ "/run/postern/..a", 1 },
	/* 107 bytes fit sun_path with the NUL; 108 do not. */
	{ "/run/postern/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 0 },
};

static const struct {
	const char *path;
	int ok;
} normal[] = {
	{ "/run/postern", 1 },
	{ "/", 0 },
	{ "", 0 },
	{ "/run/", 0 },
	{ "/run/../x", 0 },
	{ "relative", 0 },
};

int
main(void)
{
	unsigned char buf[BS_SOCKREQ_LEN + 1], rbuf[BS_SOCKREP_LEN];
	struct bs_sockreq req, out;
	struct bs_sockrep rep, rout;
	const char *why;
	char path[200];
	size_t i;

	for (i = 0; i < sizeof(under) / sizeof(under[0]); i++)
		tap_ok((bs_sockpath_under(under[i].path, "/run/postern", &why) == 0) == under[i].ok,
		    "%s under /run/postern: %s", under[i].path, under[i].ok ? "yes" : "no");
	for (i = 0; i < sizeof(normal) / sizeof(normal[0]); i++)
		tap_ok((bs_sockpath_normal(normal[i].path, &why) == 0) == normal[i].ok,
		    "\"%s\" is %snormal", normal[i].path, normal[i].ok ? "" : "not ");
	snprintf(path, sizeof(path), "/run/postern/%0*d", 94, 0);
	tap_ok(strlen(path) == 107 && bs_sockpath_under(path, "/run/postern", &why) == 0,
	    "a 107-byte path is served");

	memset(&req, 0, sizeof(req));
	req.seq = 7;
	req.op = BS_SOCK_BIND;
	req.owner = 1001;
	req.group = 65532;
	req.mode = 0600;
	snprintf(req.path, sizeof(req.path), "/run/postern/sub/a.sock");
	bs_sockreq_encode(&req, buf);
	tap_ok(bs_sockreq_decode(buf, BS_SOCKREQ_LEN, &out, &why) == 0 && out.seq == 7 &&
	    out.op == BS_SOCK_BIND && out.owner == 1001 && out.group == 65532 && out.mode == 0600 &&
	    strcmp(out.path, req.path) == 0, "a bind request survives the trip");
	tap_ok(bs_sockreq_decode(buf, BS_SOCKREQ_LEN - 1, &out, &why) < 0, "one byte short: refused");
	buf[BS_SOCKREQ_LEN] = 0;
	tap_ok(bs_sockreq_decode(buf, BS_SOCKREQ_LEN + 1, &out, &why) < 0, "one byte long: refused");
	buf[BS_SOCKREQ_LEN - 1] = 'x';
	tap_ok(bs_sockreq_decode(buf, BS_SOCKREQ_LEN, &out, &why) < 0 &&
	    strstr(why, "stray") != NULL, "a byte after the path: refused (%s)", why);
	buf[BS_SOCKREQ_LEN - 1] = 0;
	buf[6 * 4] = 40;   /* the path's length, past its NUL */
	tap_ok(bs_sockreq_decode(buf, BS_SOCKREQ_LEN, &out, &why) < 0, "a length past the path: refused");
	req.mode = 04755;
	bs_sockreq_encode(&req, buf);
	tap_ok(bs_sockreq_decode(buf, BS_SOCKREQ_LEN, &out, &why) < 0, "mode 04755: refused");
	req.mode = 0600;
	req.owner = BS_SOCK_KEEP;
	bs_sockreq_encode(&req, buf);
	tap_ok(bs_sockreq_decode(buf, BS_SOCKREQ_LEN, &out, &why) < 0, "a bind without an owner: refused");
	req.op = BS_SOCK_PERMS;
	bs_sockreq_encode(&req, buf);
	tap_ok(bs_sockreq_decode(buf, BS_SOCKREQ_LEN, &out, &why) == 0 && out.owner == BS_SOCK_KEEP,
	    "a perms request may keep the owner");
	req.op = 4;
	bs_sockreq_encode(&req, buf);
	tap_ok(bs_sockreq_decode(buf, BS_SOCKREQ_LEN, &out, &why) < 0, "an unknown op: refused");
	req.op = BS_SOCK_UNLINK;
	snprintf(req.path, sizeof(req.path), "/run/postern/../etc/passwd");
	bs_sockreq_encode(&req, buf);
	tap_ok(bs_sockreq_decode(buf, BS_SOCKREQ_LEN, &out, &why) < 0, "a path with ..: refused");

	memset(&rep, 0, sizeof(rep));
	rep.seq = 3;
	rep.err = 40;
	snprintf(rep.why, sizeof(rep.why), "not followed");
	bs_sockrep_encode(&rep, rbuf);
	tap_ok(bs_sockrep_decode(rbuf, sizeof(rbuf), &rout) == 0 && rout.seq == 3 && rout.err == 40 &&
	    strcmp(rout.why, "not followed") == 0, "a reply survives the trip");
	rbuf[2 * 4] = 0xff;
	rbuf[2 * 4 + 3] = 0x7f;
	tap_ok(bs_sockrep_decode(rbuf, sizeof(rbuf), &rout) < 0, "a reply with an errno beyond 4095: refused");
	return tap_done();
}
