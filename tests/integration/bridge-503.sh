#!/bin/sh
# bridge-503.sh: when the proxy's UNIX socket is missing, or exists but
# refuses, the client gets "HTTP/1.1 503" with a body naming the socket and
# the errno (never a bare reset); once the proxy is there, the next
# connection works, without restarting the bridge.
. "$top_srcdir/tests/integration/lib-bridge.sh"
br_init
command -v curl >/dev/null || br_skip "curl is not installed"
sock="$BR_T/proxy.sock"
br_start_upstream

cat > "$BR_T/cmd.sh" <<EOF2
set -u
# 1: no socket file at all.
curl -sS -i --max-time 5 http://upstream.test/hello.txt > "$BR_T/r1" 2>&1
echo "curl1=\$?" >> "$BR_T/r1"
# 2: a socket file nobody listens on.
python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.bind("$sock")'
curl -sS -i --max-time 5 http://upstream.test/hello.txt > "$BR_T/r2" 2>&1
echo "curl2=\$?" >> "$BR_T/r2"
rm -f "$sock"
# 3: now the proxy is there.
touch "$BR_T/start-proxy"
i=0
while [ ! -S "$sock" ] && [ \$i -lt 100 ]; do sleep 0.05; i=\$((i + 1)); done
curl -sS -i --max-time 5 http://upstream.test/hello.txt > "$BR_T/r3" 2>&1
echo "curl3=\$?" >> "$BR_T/r3"
EOF2

# The proxy starts when the client inside asks for it.
( while [ ! -e "$BR_T/start-proxy" ]; do sleep 0.05; done
  exec python3 "$BR_T/proxy.py" "$sock" "$UP_PORT" "$BR_T/proxy.log" ) &
BR_PIDS="$BR_PIDS $!"

br_ns "$BRIDGE" --connect "$sock" $BR_ROOT -- sh "$BR_T/cmd.sh" 2> "$BR_T/bridge.err" ||
	br_fail "bridge run failed: $(cat "$BR_T/bridge.err")"

for r in r1 r2 r3; do echo "--- $r"; cat "$BR_T/$r"; done
echo "--- bridge stderr"; cat "$BR_T/bridge.err"

head -n 1 "$BR_T/r1" | grep -q '^HTTP/1.1 503 ' || br_fail "missing socket: no 503"
grep -q "proxy's UNIX socket $sock: No such file or directory (ENOENT)" "$BR_T/r1" ||
	br_fail "missing socket: body does not name the socket and ENOENT"
grep -q '^curl1=0$' "$BR_T/r1" || br_fail "missing socket: curl saw an error, not a response"
br_pass "missing socket: 503 naming $sock and ENOENT"

head -n 1 "$BR_T/r2" | grep -q '^HTTP/1.1 503 ' || br_fail "refusing socket: no 503"
grep -q "proxy's UNIX socket $sock: Connection refused (ECONNREFUSED)" "$BR_T/r2" ||
	br_fail "refusing socket: body does not name the socket and ECONNREFUSED"
br_pass "refusing socket: 503 naming ECONNREFUSED"

head -n 1 "$BR_T/r3" | grep -q '^HTTP/1.[01] 200 ' || br_fail "proxy back: no 200"
grep -q '^hello from upstream$' "$BR_T/r3" || br_fail "proxy back: unexpected answer"
br_pass "socket appeared later: the next connection works"

# The log says it once per outage, not once per client.
[ "$(grep -c 'answering 503' "$BR_T/bridge.err")" = 1 ] || br_fail "503 logged more than once"
exit 0
