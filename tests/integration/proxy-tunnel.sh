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

# 8 MiB each way through the echo port, checksummed.
head -c 8388608 /dev/urandom >"$WORLD_DIR/big.bin"
want=$(sha256sum <"$WORLD_DIR/big.bin" | cut -d' ' -f1)
{ printf 'CONNECT allowed.test:7 HTTP/1.1\r\nHost: allowed.test:7\r\n\r\n'; cat "$WORLD_DIR/big.bin"; } |
	raw 127.0.0.1 3128 --shut --timeout 10 >"$WORLD_DIR/big.out"
got=$(tail -c 8388608 "$WORLD_DIR/big.out" | sha256sum | cut -d' ' -f1)
expect_eq "$want" "$got" "8 MiB up and back down through a tunnel arrive intact"

out=$(printf 'GET http://allowed.test/upgrade HTTP/1.1\r\nHost: allowed.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\nraw-bytes-after-upgrade' |
	raw 127.0.0.1 3128 --shut --timeout 5)
expect_eq 101 "$(status_of "$out")" "Upgrade: websocket passes through: 101"
expect_match "raw-bytes-after-upgrade" "$out" "and the connection then carries raw bytes both ways"
expect_upstream "upstream saw the Upgrade header" target=/upgrade
proxy_alive && ok "the proxy still serves" || fail "the proxy died"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
