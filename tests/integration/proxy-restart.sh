#!/bin/sh
# proxy-restart: the whole chain (curl in a sandbox with only lo ->
# postern-bridge -> the proxy's UNIX socket -> upstream).  The proxy killed
# with SIGKILL under traffic: the bridge answers 503 naming the socket
# during the gap; the proxy restarted (its stale socket replaced): the same
# bridge works again, with no restart of its own.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up --agent
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

sock="$WORLD_DIR/proxy.sock"
cat >"$WORLD_DIR/p.ini" <<EOF
[proxy]
listen = unix:$sock
log = $PROXY_LOG
dns_servers = $WORLD_DNS
[defaults]
allow_hosts = allowed.test private
EOF
proxy_start "$WORLD_DIR/p.ini" || die "no proxy"
ip netns exec "$WORLD_NS_AGENT" "$top_builddir/postern-bridge" --connect "$sock" --listen 127.0.0.1:3128 \
	>"$WORLD_DIR/bridge.out" 2>&1 &
bp=$!
in_agent "$WORLD_PYTHON" "$WORLD_LIB/world.py" wait --timeout 5 --pid "$bp" --tcp 127.0.0.1:3128 ||
	die "the bridge is not listening"
agent_curl() { in_agent curl -sS --max-time 10 --cacert "$WORLD_CA" -x http://127.0.0.1:3128 "$@"; }

out=$(agent_curl https://allowed.test/before)
expect_match "^sni=allowed\.test$" "$out" "sandbox -> bridge -> proxy -> upstream works"
# Traffic in flight while the proxy is killed.
in_agent curl -sS --max-time 10 --limit-rate 20M -o /dev/null --cacert "$WORLD_CA" -x http://127.0.0.1:3128 \
	https://allowed.test/bytes/200000000 2>/dev/null &
inflight=$!
sleep 0.3
kill -KILL "$WORLD_PROXY_PID"
wait "$WORLD_PROXY_PID" 2>/dev/null
WORLD_PROXY_PID=
wait "$inflight"
expect_ne 0 $? "the transfer in flight fails (it cannot survive its proxy)"

out=$(in_agent curl -s -i --max-time 5 -x http://127.0.0.1:3128 http://allowed.test/gap)
expect_eq 503 "$(status_of "$out")" "during the gap the bridge answers 503"
expect_match "proxy\.sock" "$out" "naming the socket"
[ -S "$sock" ] && ok "the killed proxy left its socket file behind" || fail "no stale socket file"

proxy_start "$WORLD_DIR/p.ini" || die "the proxy does not restart over its stale socket"
out=$(agent_curl https://allowed.test/after)
expect_match "^sni=allowed\.test$" "$out" "after the restart the same bridge works again"
kill -0 "$bp" 2>/dev/null && ok "the bridge was never restarted" || fail "the bridge died"
kill -TERM "$bp"; wait "$bp"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
