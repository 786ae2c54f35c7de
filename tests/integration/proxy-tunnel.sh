#!/bin/sh
# proxy-tunnel: half-close is propagated through a CONNECT tunnel (neither
# tinyproxy nor squid does it); a client that shuts its write side still
# gets the whole answer; a WebSocket upgrade on the plain-HTTP path becomes
# a tunnel when the target is allowed; large transfers both ways are intact.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

conf=$(proxy_conf "[defaults]" "allow_hosts = allowed.test:7 private, allowed.test private")
proxy_start "$conf" || die "no proxy"

out=$(printf 'CONNECT allowed.test:7 HTTP/1.1\r\nHost: allowed.test:7\r\n\r\nline one\nline two\n' |
	raw 127.0.0.1 3128 --shut --timeout 5)
rc=$?
expect_match "^line two$" "$out" "after the client's half-close the echo still comes back"
expect_eq 0 "$rc" "and the upstream's close reaches the client (EOF, not a timeout)"
expect_audit "the tunnel's close is logged" event=close port=7 bytes_up~'^[1-9]' bytes_down~'^[1-9]'

# 8 MiB each way through the echo port, checksummed.  Every stream here
# starts with a line of text: one starting with byte 0x16 claims to be a
# TLS handshake, and the SNI check refuses it (a random stream does, one
# time in 256).
{ echo big; head -c 8388604 /dev/urandom; } >"$WORLD_DIR/big.bin"
want=$(sha256sum <"$WORLD_DIR/big.bin" | cut -d' ' -f1)
{ printf 'CONNECT allowed.test:7 HTTP/1.1\r\nHost: allowed.test:7\r\n\r\n'; cat "$WORLD_DIR/big.bin"; } |
	raw 127.0.0.1 3128 --shut --timeout 10 >"$WORLD_DIR/big.out"
got=$(tail -c 8388608 "$WORLD_DIR/big.out" | sha256sum | cut -d' ' -f1)
expect_eq "$want" "$got" "8 MiB up and back down through a tunnel arrive intact"

# A stream's pipe grows to 1 MiB, and no more than 16 do at once
# (BS_BIG_MAX, base/pump.h): 20 tunnels at once, 4 MiB each way, each
# with bytes of its own, so a pipe that changed hands with bytes in it
# would show.  The pipes' sizes are read through the proxy's /proc links.
rm -f "$WORLD_DIR/pipes.stop"
"$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/pipesizes.py" "$WORLD_PROXY_PID" \
	"$WORLD_DIR/pipes.stop" >"$WORLD_DIR/pipes.out" &
sampler=$!
pids=
i=0
while [ $i -lt 20 ]; do
	{ printf 'stream %02d\n' $i; head -c 4194294 /dev/urandom; } >"$WORLD_DIR/s$i.bin"
	( { printf 'CONNECT allowed.test:7 HTTP/1.1\r\nHost: allowed.test:7\r\n\r\n'; cat "$WORLD_DIR/s$i.bin"; } |
		raw 127.0.0.1 3128 --shut --timeout 30 >"$WORLD_DIR/s$i.out"
	  echo $? >"$WORLD_DIR/s$i.rc" ) &
	pids="$pids $!"
	i=$((i + 1))
done
wait $pids
: >"$WORLD_DIR/pipes.stop"
wait "$sampler"
bad=
i=0
while [ $i -lt 20 ]; do
	if ! tail -c 4194304 "$WORLD_DIR/s$i.out" | cmp -s - "$WORLD_DIR/s$i.bin"; then
		# How it failed, in the check's own line: short (a stall or a
		# cut) or wrong bytes, and how raw.py ended (3: a timeout, 4: a
		# reset).
		bad="$bad $i($(wc -c <"$WORLD_DIR/s$i.out") bytes with the head, raw.py exit $(cat "$WORLD_DIR/s$i.rc"))"
		diag "tunnel $i: answer '$(head -n 1 "$WORLD_DIR/s$i.out" | tr -d '\r')'," \
			"$(tail -c 4194304 "$WORLD_DIR/s$i.out" | cmp - "$WORLD_DIR/s$i.bin" 2>&1 | head -n 1)"
	fi
	i=$((i + 1))
done
expect_eq "" "$bad" "20 tunnels at once, 4 MiB each way: every one gets its own bytes back"
pipes=$(cat "$WORLD_DIR/pipes.out")
diag "the proxy's pipes during those: $pipes"
big=$(echo "$pipes" | sed -n 's/^big=\([0-9]*\) .*/\1/p')
[ -n "$big" ] && [ "$big" -ge 1 ] && [ "$big" -le 16 ] &&
	ok "streams got 1 MiB pipes, at most 16 at once ($big)" ||
	fail "1 MiB pipes at once: '$big', want 1 to 16"

out=$(printf 'GET http://allowed.test/upgrade HTTP/1.1\r\nHost: allowed.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\nraw-bytes-after-upgrade' |
	raw 127.0.0.1 3128 --shut --timeout 5)
expect_eq 101 "$(status_of "$out")" "Upgrade: websocket passes through: 101"
expect_match "raw-bytes-after-upgrade" "$out" "and the connection then carries raw bytes both ways"
expect_upstream "upstream saw the Upgrade header" target=/upgrade
proxy_alive && ok "the proxy still serves" || fail "the proxy died"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
