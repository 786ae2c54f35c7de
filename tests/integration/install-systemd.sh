#!/bin/sh
# install-systemd.sh: "make install" installs the systemd unit (naming the
# installed postern-proxy) and the example configs, and systemd-analyze
# verify accepts the installed unit with not one warning: every directive
# known to this systemd, the binaries it names executable, its man pages
# found.  The install goes to a prefix of the test's own.
set -u
: "${top_builddir:=.}"
: "${top_srcdir:=.}"
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
pass() { echo "PASS: $*"; }
command -v systemd-analyze >/dev/null 2>&1 || skip "systemd-analyze is not installed"
command -v make >/dev/null 2>&1 || skip "make is not installed"
T=$(mktemp -d /tmp/postern-install.XXXXXX) || fail "mktemp"
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM HUP

# A make of its own, not a job of the "make check" that runs this test.
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$top_builddir" install \
	prefix="$T" >"$T.log" 2>&1; then
	tail -n 20 "$T.log"
	rm -f "$T.log"
	fail "make install prefix=$T failed"
fi
rm -f "$T.log"
unit=$T/lib/systemd/system/postern-proxy.service
[ -f "$unit" ] || fail "make install installed no $unit"
pass "make install installs the unit in PREFIX/lib/systemd/system"
grep -q "^ExecStart=$T/bin/postern-proxy " "$unit" ||
	fail "the installed unit does not start the installed proxy: $(grep '^ExecStart=' "$unit")"
[ -x "$T/bin/postern-proxy" ] || fail "no installed postern-proxy"
pass "the installed unit starts the installed proxy"
for f in dev-laptop.ini host-proxy.ini sidecar.ini; do
	cmp -s "$T/share/doc/postern/examples/$f" "$top_srcdir/contrib/examples/$f" ||
		fail "make install did not install the example $f"
done
pass "make install installs the examples in DOCDIR/examples"

# Warnings (an unknown key, a missing binary or man page) leave the status
# 0: any output at all is a failure.  --man=no where man(1) is missing.
man=yes
command -v man >/dev/null 2>&1 || man=no
out=$(MANPATH="$T/share/man" systemd-analyze verify --man=$man "$unit" 2>&1)
rc=$?
[ $rc = 0 ] && [ -z "$out" ] || fail "systemd-analyze verify (status $rc): $out"
pass "systemd-analyze verify passes on the installed unit (man pages checked: $man)"

env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$top_builddir" uninstall prefix="$T" \
	>/dev/null 2>&1 || fail "make uninstall failed"
[ ! -e "$unit" ] || fail "make uninstall left the unit"
pass "make uninstall removes it"
exit 0
