#!/bin/sh
# proxy-metrics-listen: `metrics = tcp:ADDR:PORT` serves GET /metrics, the
# admin socket's counters, and nothing else of the admin API: other paths
# 404, other methods 405, a body or a huge header refused, the proxy still
# serving after.  It works without an admin socket; a bad value is refused
# with FILE:LINE naming the key; a reload that changes it says restart.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

MPORT=9191
M="http://127.0.0.1:$MPORT"

# m_curl ARGS...: curl to the metrics listener, inside px.
m_curl() {
	in_px curl -sS --max-time 5 "$@"
}

# m_code ARGS...: the status of a request to the metrics listener.
m_code() {
	m_curl -o "$WORLD_DIR/m.body" -D "$WORLD_DIR/m.head" -w '%{http_code}' "$@" 2>/dev/null
}

# m_wait: wait until the metrics port listens (5 s at most).
m_wait() {
	in_px "$WORLD_PYTHON" "$WORLD_LIB/world.py" wait --timeout 5 --pid "$WORLD_PROXY_PID" \
		--tcp "127.0.0.1:$MPORT"
}

# counters FILE: the per-session and total counters of a /metrics body.
counters() {
	grep -E '^postern_(connections_total|decisions_total|bytes_total|config_reloads_total)' "$1"
}

conf="$WORLD_DIR/postern.ini"
{ admin_proxy_section "metrics = tcp:127.0.0.1:$MPORT"; cat <<EOF; } >"$conf"
[defaults]
allow_hosts = allowed.test private
EOF
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
m_wait || die "the metrics listener does not listen on 127.0.0.1:$MPORT"

for i in 1 2; do
	expect_eq 200 "$(curl_status -x http://127.0.0.1:3128 https://allowed.test/)" "allowed.test $i"
done
expect_eq 403 "$(curl_status -x http://127.0.0.1:3128 https://other.test/)" "other.test refused"
i=0
while [ "$(audit_count event=close)" -lt 3 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done

# ---- the same counters as the admin socket's /metrics
expect_eq 200 "$(m_code "$M/metrics")" "GET /metrics on the metrics listener: 200"
cp "$WORLD_DIR/m.body" "$WORLD_DIR/tcp.prom"
expect_match '^Content-Type: text/plain; version=0\.0\.4' "$(cat "$WORLD_DIR/m.head")" \
	"the Prometheus text content type"
"$WORLD_PYTHON" "$ADMIN_LIB/prom.py" check "$WORLD_DIR/tcp.prom" >/dev/null &&
	ok "the body parses as Prometheus text" || fail "the body does not parse"
admin_get /metrics >"$WORLD_DIR/unix.prom" || fail "GET /metrics on the admin socket"
expect_eq "$(counters "$WORLD_DIR/unix.prom")" "$(counters "$WORLD_DIR/tcp.prom")" \
	"the counters are the admin socket's"
expect_eq 3 "$("$WORLD_PYTHON" "$ADMIN_LIB/prom.py" get "$WORLD_DIR/tcp.prom" \
	postern_connections_total session=default)" "the three connections in the metrics"
expect_eq 200 "$(m_code -I "$M/metrics")" "HEAD /metrics: 200"
expect_eq 200 "$(m_code "$M/metrics?x=1")" "GET /metrics with a query: 200"

# ---- nothing else of the admin API
for p in /status /reload /sessions /sessions/x /grants /grants/save /pending /decide /learn \
	/ /metrics/ /METRICS //metrics /nope; do
	for m in GET POST PUT DELETE; do
		expect_eq 404 "$(m_code -X $m "$M$p")" "$m $p: 404"
	done
done
for m in POST PUT DELETE OPTIONS PATCH; do
	expect_eq 405 "$(m_code -X $m "$M/metrics")" "$m /metrics: 405"
	expect_match '^Allow: GET, HEAD' "$(cat "$WORLD_DIR/m.head")" "$m /metrics: Allow: GET, HEAD"
done
c=$(m_code -X GET --data-binary 'x=1' "$M/metrics")
[ "$c" != 200 ] && ok "GET /metrics with a body: refused ($c)" || fail "GET /metrics with a body: 200"
c=$(m_code -X POST --data-binary 'x=1' "$M/reload")
case $c in
404 | 413) ok "POST /reload with a body: refused ($c)" ;;
*) fail "POST /reload with a body: $c" ;;
esac
big=$("$WORLD_PYTHON" -c 'print("a" * 10000)')
c=$(m_code -H "X-Big: $big" "$M/metrics")
[ "$c" != 200 ] && ok "a 10000-byte header: refused ($c)" || fail "a 10000-byte header: 200"
expect_eq 1 "$(generation)" "no request on the metrics listener reloaded"
expect_eq 200 "$(curl_status -x http://127.0.0.1:3128 https://allowed.test/)" "the proxy still serves"
expect_eq 200 "$(m_code "$M/metrics")" "and the metrics listener still answers"

# ---- a reload that changes metrics = says it takes effect at restart
sed -i "s/^metrics = .*/metrics = tcp:127.0.0.1:9192/" "$conf"
admin_curl -X POST -o /dev/null http://postern/reload
wait_generation 2 >/dev/null || fail "the reload was not taken"
expect_match 'a changed metrics takes effect at the next restart' "$(cat "$WORLD_DIR/proxy.out")" \
	"a changed metrics: restart"
expect_eq 200 "$(m_code "$M/metrics")" "the old metrics listener still answers"
proxy_stop >/dev/null

# ---- no admin socket: the metrics listener alone
conf2="$WORLD_DIR/noadmin.ini"
cat >"$conf2" <<EOF
[proxy]
listen = tcp:127.0.0.1:3128
metrics = tcp:127.0.0.1:$MPORT
log = $PROXY_LOG
dns_servers = $WORLD_DNS
[defaults]
allow_hosts = allowed.test private
EOF
proxy_start "$conf2" || die "no proxy without an admin socket"
m_wait || die "no metrics listener without an admin socket"
expect_eq 200 "$(curl_status -x http://127.0.0.1:3128 https://allowed.test/)" "allowed.test, no admin"
i=0
while [ "$(m_curl "$M/metrics" | sed -n 's/^postern_connections_total{session="default"} //p')" != 1 ] &&
	[ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
expect_eq 200 "$(m_code "$M/metrics")" "GET /metrics without an admin socket: 200"
expect_eq 1 "$("$WORLD_PYTHON" "$ADMIN_LIB/prom.py" get "$WORLD_DIR/m.body" \
	postern_connections_total session=default)" "and it counts the connection"
expect_eq 404 "$(m_code "$M/status")" "GET /status without an admin socket: 404"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"

# ---- bad values: FILE:LINE naming the key, and the proxy does not start
bad() {
	printf '[proxy]\nlisten = tcp:127.0.0.1:3128\n%s\n[defaults]\nallow_hosts = a.test\n' "$1" \
		>"$WORLD_DIR/bad.ini"
	"$POSTERN_PROXY" --check -c "$WORLD_DIR/bad.ini" 2>&1
	echo "rc=$?"
}
for v in "unix:$WORLD_DIR/m.sock" tcp:localhost:9090 tcp:127.0.0.1 tcp:127.0.0.1:0 \
	"tcp:127.0.0.1:9090 auth=token" "tcp:127.0.0.1:9090 mode=0600" 9090 ""; do
	out=$(bad "metrics = $v")
	expect_match "$WORLD_DIR/bad.ini:3: metrics" "$out" "metrics = $v: FILE:LINE: metrics ..."
	expect_match 'rc=[1-9]' "$out" "metrics = $v: refused"
done
out=$(bad "metrics = tcp:127.0.0.1:9090
metrics = tcp:127.0.0.1:9091")
expect_match "$WORLD_DIR/bad.ini:4: metrics is given twice" "$out" "metrics twice: refused"
out=$(bad "metrics = tcp:127.0.0.1:3128")
expect_match "$WORLD_DIR/bad.ini:3: tcp:127.0.0.1:3128 is already the listener of default" "$out" \
	"metrics on a proxy listener's address: refused"
out=$(bad "metrics = tcp:127.0.0.1:9090")
expect_match 'rc=0' "$out" "metrics = tcp:127.0.0.1:9090: valid"

world_down
