#!/bin/sh
# install-systemd.sh: "make install" installs the systemd unit (naming the
# installed postern-proxy and config), the config it reads (never over an
# admin's), the logrotate file and the example configs; systemd-analyze
# verify accepts the installed unit with not one warning (every directive
# known to this systemd, the binaries it names executable, its man pages
# found); the unit's ExecStartPre --check passes on a fresh install; and
# the installed logrotate file, pointed at a log directory of the test's
# own, rotates audit.log and has the proxy reopen it (SIGUSR1).  The
# install goes to a prefix of the test's own.
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

conf=$T/etc/postern/postern.ini
grep -q "^ExecStartPre=$T/bin/postern-proxy --check -c $conf\$" "$unit" ||
	fail "the installed unit does not check the installed config: $(grep '^ExecStartPre=' "$unit")"
[ -f "$conf" ] || fail "make install installed no $conf"
pre=$(sed -n 's/^ExecStartPre=//p' "$unit")
out=$($pre 2>&1) || fail "the installed unit's ExecStartPre fails on a fresh install: $pre: $out"
pass "the installed unit's ExecStartPre ($pre) passes on the installed config"

# A second install keeps the admin's config.
echo "; edited by the admin" >>"$conf"
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$top_builddir" install-systemd \
	prefix="$T" >/dev/null 2>&1 || fail "make install-systemd prefix=$T failed"
tail -n 1 "$conf" | grep -q "edited by the admin" || fail "make install replaced an existing $conf"
pass "make install never replaces an existing config"

rot=$T/etc/logrotate.d/postern-proxy
cmp -s "$rot" "$top_srcdir/contrib/logrotate/postern-proxy" ||
	fail "make install did not install $rot"
pass "make install installs the logrotate file in SYSCONFDIR/logrotate.d"
if ! command -v logrotate >/dev/null 2>&1; then
	echo "SKIP: logrotate is not installed: the rotation part is skipped"
elif [ "$(id -u)" != 0 ]; then
	echo "SKIP: not root: the rotation part is skipped"
elif ! command -v unshare >/dev/null 2>&1 || ! unshare -n true 2>/dev/null; then
	echo "SKIP: unshare -n does not work here: the rotation part is skipped"
else
	# The installed config, its log in a directory of the test's own
	# and its socket beside it, run in a network namespace of its own.
	# The proxy drops to its user = and reopens the log as that uid.
	chmod 0711 "$T"
	L=$T/log
	mkdir -m 0711 "$L" "$T/run"
	log=$(sed -n 's/^log = //p' "$conf")
	[ "$log" = /var/log/postern/audit.log ] || fail "the installed config logs to '$log', not /var/log/postern/audit.log"
	sed -e "s|/var/log/postern/|$L/|" -e "s|/run/postern/|$T/run/|" "$conf" >"$T/run.ini"
	unshare -n "$T/bin/postern-proxy" -c "$T/run.ini" >"$T/proxy.out" 2>&1 &
	pid=$!
	trap 'kill $pid 2>/dev/null; rm -rf "$T"' EXIT
	# ask: a CONNECT to a host the config refuses, on the session's socket.
	ask() {
		python3 - "$T/run/agent/proxy.sock" "$1" <<'PY'
import socket, sys, time
for i in range(100):
    try:
        s = socket.socket(socket.AF_UNIX)
        s.connect(sys.argv[1])
        break
    except OSError:
        time.sleep(0.05)
s.sendall(b"CONNECT %s:443 HTTP/1.1\r\nHost: x\r\n\r\n" % sys.argv[2].encode())
print(s.recv(64).split(b" ")[1].decode())
PY
	}
	[ "$(ask first.test)" = 403 ] || fail "the installed config does not refuse first.test: $(cat "$T/proxy.out")"
	grep -q first.test "$L/audit.log" || fail "no line for first.test in $L/audit.log"
	sed -e "s|/var/log/postern/|$L/|" \
		-e "s|systemctl kill --kill-whom=main --signal=USR1 postern-proxy.service|kill -USR1 $pid|" \
		"$rot" >"$T/logrotate.conf"
	grep -q "^$L/\*\.log {" "$T/logrotate.conf" || fail "the logrotate file does not match /var/log/postern/*.log"
	grep -q "kill -USR1 $pid" "$T/logrotate.conf" || fail "the logrotate file has no postrotate signal to rewrite"
	out=$(logrotate -f -s "$T/logrotate.state" "$T/logrotate.conf" 2>&1) ||
		fail "logrotate failed: $out"
	[ -f "$L/audit.log.1" ] || fail "logrotate did not rotate $L/audit.log: $(ls "$L")"
	i=0
	until grep -q 'audit log reopened' "$T/proxy.out" || [ $i -ge 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	grep -q 'audit log reopened' "$T/proxy.out" || fail "the proxy did not reopen its log: $(cat "$T/proxy.out")"
	[ "$(ask second.test)" = 403 ] || fail "no answer after the rotation"
	grep -q second.test "$L/audit.log" || fail "the line after the rotation is not in the new audit.log"
	! grep -q second.test "$L/audit.log.1" || fail "the line after the rotation went to the rotated file"
	pass "the installed logrotate file rotates audit.log and the proxy reopens it on SIGUSR1"
	kill $pid
	wait $pid 2>/dev/null
fi

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
[ ! -e "$rot" ] || fail "make uninstall left the logrotate file"
[ -e "$conf" ] || fail "make uninstall removed the admin's edited config"
pass "make uninstall removes it"
exit 0
