#!/bin/sh
# h2-clients.sh: proxy/flow/h2 between real HTTP/2 programs, on loopback only.
# tests/integration/h2-relay puts the module between plaintext h2c clients
# (curl --http2-prior-knowledge, nghttp, h2load) and nghttpd --no-tls.
# Asserts: a download arrives whole; the upstream receives the injected
# authorization and never the client's placeholder; a refused path gets 403
# and x-postern-reason and never reaches the upstream; many concurrent
# streams over few connections all succeed; an upload arrives whole; three
# big downloads on one connection all complete.
set -u
: "${top_builddir:=.}"
skip() { echo "SKIP: $*"; exit 77; }
n=0 nfail=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); nfail=$((nfail + 1)); echo "not ok $n - $*"; }
check() { what=$1; shift; if "$@"; then ok "$what"; else notok "$what"; fi; }
for c in curl nghttpd nghttp h2load; do
	command -v "$c" >/dev/null 2>&1 || skip "$c is not installed (nghttp2-client, nghttp2-server)"
done
curl -V | grep -q HTTP2 || skip "curl has no HTTP/2"
relay="$top_builddir/tests/integration/h2-relay"
[ -x "$relay" ] || skip "$relay is not built"

T=$(mktemp -d /tmp/postern-h2.XXXXXX) || exit 1
srv= rly=
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; [ -n "$rly" ] && kill "$rly" 2>/dev/null; rm -rf "$T"' EXIT
mkdir -p "$T/docs/inject" "$T/docs/deny"
head -c 3000000 /dev/urandom >"$T/docs/big"
echo secret-stuff >"$T/docs/deny/x"
echo injected >"$T/docs/inject/x"

# A free loopback port for nghttpd: try a few at random.
port=
for try in 1 2 3 4 5 6 7 8; do
	p=$(( 20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 40000 ))
	nghttpd -v --no-tls --echo-upload -d "$T/docs" "$p" >"$T/nghttpd.log" 2>&1 &
	srv=$!
	sleep 0.3
	if kill -0 "$srv" 2>/dev/null; then port=$p; break; fi
	srv=
done
[ -n "$port" ] || { echo "FATAL: nghttpd did not start"; exit 1; }
"$relay" "$port" >"$T/port" 2>"$T/relay.log" &
rly=$!
i=0
while [ ! -s "$T/port" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
rp=$(cat "$T/port")
[ -n "$rp" ] || { echo "FATAL: h2-relay did not start"; exit 1; }
base="http://127.0.0.1:$rp"

curl -s --http2-prior-knowledge -o "$T/big.out" "$base/big"
check "curl: a 3 MB download arrives whole" cmp -s "$T/docs/big" "$T/big.out"

code=$(curl -s --http2-prior-knowledge -H 'authorization: Bearer placeholder-123' \
	-o "$T/inj.out" -w '%{http_code}' "$base/inject/x")
check "curl: the injected path is served ($code)" [ "$code" = 200 ]
check "upstream: receives the injected authorization" \
	grep -q 'authorization: Bearer real-from-relay' "$T/nghttpd.log"
check "upstream: never receives the placeholder" \
	sh -c "! grep -q placeholder-123 '$T/nghttpd.log'"

code=$(curl -s --http2-prior-knowledge -D "$T/deny.h" -o "$T/deny.out" \
	-w '%{http_code}' "$base/deny/x")
check "curl: a refused path gets 403 ($code)" [ "$code" = 403 ]
check "curl: with x-postern-reason: path_denied" grep -qi '^x-postern-reason: path_denied' "$T/deny.h"
check "upstream: never sees the refused path" sh -c "! grep -q '/deny' '$T/nghttpd.log'"

h2load -n 200 -c 2 -m 20 "$base/inject/x" >"$T/h2load.out" 2>&1
check "h2load: 200 requests over 2 connections, 20 streams each, all succeed" \
	grep -q '200 succeeded, 0 failed' "$T/h2load.out"

head -c 2000000 /dev/urandom >"$T/up.bin"
nghttp -d "$T/up.bin" "$base/big" >"$T/echo.out" 2>"$T/nghttp.err"
check "nghttp: a 2 MB upload comes back whole (--echo-upload)" cmp -s "$T/up.bin" "$T/echo.out"
check "relay: audited the upload's bytes" grep -q '^done POST /big 200 up=2000000 down=2000000' "$T/relay.log"

# Three 3 MB downloads on one connection, over its 1 MiB window: a window
# the module failed to give back would stall the later ones.
timeout 60 nghttp -n "$base/big" "$base/big?2" "$base/big?3" >/dev/null 2>"$T/nghttp3.err"
check "nghttp: three 3 MB downloads on one connection all complete" \
	[ "$(grep -c '^done GET /big 200 up=0 down=3000000 ' "$T/relay.log")" -ge 4 ]

if [ $nfail -ne 0 ]; then
	echo "# relay log:"; sed 's/^/# /' "$T/relay.log" | tail -20
fi
echo "1..$n"
[ $nfail -eq 0 ]
