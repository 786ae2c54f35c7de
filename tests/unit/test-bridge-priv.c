/*
 * tests/unit/test-bridge-priv.c: reading uid_map text, and telling the
 * host's root apart from a namespace's root.
 */
#include "config.h"

#include <errno.h>

#include "bridge/priv.h"
#include "tests/unit/tap.h"

#define OV 65534UL

int
main(void)
{
	unsigned long out = 0;

	/* The maps as the kernel prints them. */
	tap_ok(br_priv_map_outside("         0          0 4294967295\n", 0, &out) == 0 &&
	    out == 0, "the initial namespace maps 0 to 0");
	tap_ok(br_priv_map_outside("         0       1000          1\n", 0, &out) == 0 &&
	    out == 1000, "unshare -r as uid 1000 maps 0 to 1000");
	tap_ok(br_priv_map_outside("         0       1000          1\n", 1, &out) == -ENOENT,
	    "an id past the range is unmapped");
	tap_ok(br_priv_map_outside("      1000          0          1\n", 1000, &out) == 0 &&
	    out == 0, "bwrap's inner namespace maps 1000 to 0");
	tap_ok(br_priv_map_outside("0 100000 10\n5 200000 1\n", 7, &out) == 0 && out == 100007,
	    "an id inside a range maps to its offset");
	tap_ok(br_priv_map_outside("0 100000 10\n20 200000 1\n", 20, &out) == 0 && out == 200000,
	    "the second line is read");
	tap_ok(br_priv_map_outside("", 0, &out) == -ENOENT, "an empty map maps nothing");
	tap_ok(br_priv_map_outside("0 0\n", 0, &out) == -EINVAL, "two numbers are no map line");
	tap_ok(br_priv_map_outside("0 -1 1\n", 0, &out) == -EINVAL, "a sign is refused");
	tap_ok(br_priv_map_outside("0 0 1 junk\n", 0, &out) == -EINVAL, "trailing bytes are refused");
	tap_ok(br_priv_map_outside("0 99999999999 1\n", 0, &out) == -EINVAL,
	    "a number past 32 bits is refused");

	/* Kernel root is mapped (root owns the sysctl as ROOT): decisive. */
	tap_ok(br_priv_is_root(0, 0, OV, NULL), "the host's root is root");
	tap_ok(br_priv_is_root(1000, 1000, OV, "1000 0 1\n"),
	    "root's bwrap --uid 1000: 1000 is the host's root");
	tap_ok(!br_priv_is_root(1000, 0, OV, "0 0 4294967295\n"), "uid 1000 of the host is not root");
	tap_ok(!br_priv_is_root(0, 1000, OV, "0 0 1\n"),
	    "a nested root whose map says 0 but whose sysctl owner is 1000 is not root");
	/* Kernel root unmapped (shows as the overflow id). */
	tap_ok(!br_priv_is_root(0, OV, OV, "0 1000 1\n"), "unshare -r as uid 1000: not root");
	tap_ok(!br_priv_is_root(1000, OV, OV, "1000 0 1\n"),
	    "user's bwrap: 1000 maps to 0 one level up, yet kernel root is unmapped");
	tap_ok(br_priv_is_root(OV, OV, OV, NULL), "an unmapped own id with no map: root, to be safe");
	tap_ok(br_priv_is_root(OV, OV, OV, "0 1000 1\n"), "an unmapped own id: root, to be safe");
	tap_ok(br_priv_is_root(OV, OV, OV, "65534 0 1\n"),
	    "65534 mapped to 0 one level up, kernel root unmapped: cannot tell, root");
	tap_ok(!br_priv_is_root(OV, OV, OV, "65534 1000 1\n"),
	    "65534 mapped to 1000 one level up: not root");
	return tap_done();
}
