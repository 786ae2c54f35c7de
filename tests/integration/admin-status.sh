#!/bin/sh
# admin-status: GET /status (JSON) and GET /metrics (Prometheus text,
# parsed strictly) report exactly the traffic this scenario made; POST
# /reload answers with the generation; other paths 404, wrong methods 405.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

conf="$WORLD_DIR/postern.ini"
{ admin_proxy_section; cat <<EOF; } >"$conf"
[defaults]
allow_hosts = allowed.test private
allow_hosts = allowed.test:7 private
deny_hosts = deny.test
[session agent]
listen = tcp:127.0.0.1:3129
allow_hosts = other.test:80 private
EOF
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"

# The traffic: default session 3 allowed HTTPS, 2 refused (not allowed),
# 1 refused by a deny rule, 1 tunnel held open; session agent 2 plain-HTTP
# requests of 1000 response bytes each.
for i in 1 2 3; do
	expect_eq 200 "$(curl_status -x http://127.0.0.1:3128 https://allowed.test/)" "allowed.test $i"
done
for i in 1 2; do
	expect_eq 403 "$(curl_status -x http://127.0.0.1:3128 https://other.test/)" "other.test $i refused"
done
expect_eq 403 "$(curl_status -x http://127.0.0.1:3128 https://deny.test/)" "deny.test refused"
for i in 1 2; do
	expect_eq 200 "$(curl_status -x http://127.0.0.1:3129 http://other.test/bytes/1000)" "agent request $i"
done
in_px "$WORLD_PYTHON" "$ADMIN_LIB/load.py" hold --proxy 127.0.0.1:3128 --target allowed.test:7 \
	--ready "$WORLD_DIR/hold.ready" --stop "$WORLD_DIR/hold.stop" >"$WORLD_DIR/hold.out" 2>&1 &
hold=$!
i=0
while [ ! -e "$WORLD_DIR/hold.ready" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
[ -e "$WORLD_DIR/hold.ready" ] || die "the held tunnel did not open"
# Wait for the close lines of the finished connections (the counters of a
# connection are added when it closes).
i=0
while [ "$(audit_count event=close)" -lt 8 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done

# ---- /status
admin_get /status >"$WORLD_DIR/status.json" || fail "GET /status"
st() {
	"$WORLD_PYTHON" -c 'import json,sys; s=json.load(open(sys.argv[1])); print(json.dumps(eval(sys.argv[2])))' \
		"$WORLD_DIR/status.json" "$1"
}
expect_eq "\"$("$POSTERN_PROXY" --version | sed 's/^postern-proxy //')\"" "$(st 's["version"]')" "status: version"
expect_eq "\"$conf\"" "$(st 's["config"]["path"]')" "status: config path"
expect_eq 1 "$(st 's["config"]["generation"]')" "status: generation 1"
expect_eq "\"$(sha12 "$conf")\"" "$(st 's["config"]["hash"]')" "status: the file's hash"
expect_eq null "$(st 's["last_reload"]["time"]')" "status: no reload yet"
expect_eq '["default", "agent"]' "$(st '[x["name"] for x in s["sessions"]]')" "status: the two sessions"
expect_eq '["tcp:127.0.0.1:3128"]' "$(st 's["sessions"][0]["listeners"]')" "status: default's listener"
expect_eq '["tcp:127.0.0.1:3129"]' "$(st 's["sessions"][1]["listeners"]')" "status: agent's listener"
expect_eq '[3, 2, 1]' "$(st '[s["sessions"][0][k] for k in ("rules", "allow_rules", "deny_rules")]')" \
	"status: default has 2 allow + 1 deny rules"
expect_eq '[4, 3, 1]' "$(st '[s["sessions"][1][k] for k in ("rules", "allow_rules", "deny_rules")]')" \
	"status: agent has the rules of [defaults] and its own"
expect_eq 1 "$(st 's["connections_open"]')" "status: one connection open (the held tunnel)"
expect_eq '[1, 7]' "$(st '[s["sessions"][0][k] for k in ("connections_open", "connections_total")]')" \
	"status: default: 1 open, 7 in all"
expect_eq '[0, 2]' "$(st '[s["sessions"][1][k] for k in ("connections_open", "connections_total")]')" \
	"status: agent: 0 open, 2 in all"
down=$(st 's["sessions"][1]["bytes_down"]')
[ "$down" -ge 2000 ] && [ "$down" -lt 8000 ] && ok "status: agent: $down bytes down (2 x 1000 + heads)" ||
	fail "status: agent: $down bytes down, want 2000 + heads"
up=$(st 's["sessions"][1]["bytes_up"]')
[ "$up" -gt 0 ] && [ "$up" -lt 2000 ] && ok "status: agent: $up bytes up (2 request heads)" ||
	fail "status: agent: $up bytes up"
# The held tunnel keeps echoing: its bytes show while it is still open.
up0=$(st 's["sessions"][0]["bytes_up"]')
m0=$(admin_get /metrics | sed -n 's/^postern_bytes_total{direction="up"} //p')
sleep 1
admin_get /status >"$WORLD_DIR/status.json" || fail "GET /status"
up1=$(st 's["sessions"][0]["bytes_up"]')
m1=$(admin_get /metrics | sed -n 's/^postern_bytes_total{direction="up"} //p')
expect_eq 1 "$(st 's["sessions"][0]["connections_open"]')" "status: the held tunnel is still open"
[ "$up1" -gt "$up0" ] && ok "status: an open tunnel's bytes count as they go ($up0 -> $up1)" ||
	fail "status: default's bytes_up stayed at $up0 -> $up1 while the open tunnel echoed"
[ "${m1:-0}" -gt "${m0:-0}" ] && ok "metrics: postern_bytes_total rises with an open tunnel ($m0 -> $m1)" ||
	fail "metrics: postern_bytes_total $m0 -> $m1 while the open tunnel echoed"

# ---- /metrics
admin_curl -D "$WORLD_DIR/metrics.head" -o "$WORLD_DIR/metrics.txt" http://postern/metrics ||
	fail "GET /metrics"
expect_match '^Content-Type: text/plain; version=0\.0\.4' "$(cat "$WORLD_DIR/metrics.head")" \
	"metrics: the Prometheus text content type"
out=$("$WORLD_PYTHON" "$ADMIN_LIB/prom.py" check "$WORLD_DIR/metrics.txt")
expect_eq 0 $? "metrics: valid Prometheus text ($out)"
m() { "$WORLD_PYTHON" "$ADMIN_LIB/prom.py" get "$WORLD_DIR/metrics.txt" "$@"; }
expect_eq 4 "$(m postern_decisions_total session=default reason=allowed)" "metrics: 4 allowed in default"
expect_eq 2 "$(m postern_decisions_total session=default reason=host_not_allowed)" "metrics: 2 host_not_allowed"
expect_eq 1 "$(m postern_decisions_total session=default reason=denied_by_rule)" "metrics: 1 denied_by_rule"
expect_eq 2 "$(m postern_decisions_total session=agent reason=allowed)" "metrics: 2 allowed in agent"
expect_eq 7 "$(m postern_connections_total session=default)" "metrics: 7 connections in default"
expect_eq 1 "$(m postern_connections_open session=default)" "metrics: 1 open in default"
expect_eq 2 "$(m postern_connections_total session=agent)" "metrics: 2 connections in agent"
expect_eq 3 "$(m postern_rule_hits_total "rule=$conf:7" "pattern=allowed.test private")" \
	"metrics: the allowed.test rule hit 3 times"
expect_eq 1 "$(m postern_rule_hits_total "rule=$conf:8" "pattern=allowed.test:7 private")" \
	"metrics: the allowed.test:7 rule hit once"
expect_eq 1 "$(m postern_rule_hits_total "rule=$conf:9" pattern=deny.test)" "metrics: the deny rule hit once"
expect_eq 2 "$(m postern_rule_hits_total "rule=$conf:12" "pattern=other.test:80 private")" \
	"metrics: the rule of session agent hit twice"
bdown=$(m postern_bytes_total direction=down)
[ "$bdown" -ge "$down" ] && ok "metrics: $bdown bytes down in all" || fail "metrics: $bdown bytes down < $down"
expect_eq 1 "$(m postern_config_generation)" "metrics: generation 1"
expect_eq 0 "$(m postern_config_reloads_total)" "metrics: no reload yet"
expect_eq 3 "$(m postern_tunnel_duration_seconds_count)" "metrics: 3 tunnels closed (a refused CONNECT is no tunnel)"

# ---- /reload and the rest
out=$(admin_curl -X POST -w '\n%{http_code}' http://postern/reload)
expect_eq 200 "$(printf '%s\n' "$out" | tail -n 1)" "POST /reload: 200"
expect_eq '{"taken":true,"generation":2,"hash":"'"$(sha12 "$conf")"'"}' "$(printf '%s\n' "$out" | head -n 1)" \
	"POST /reload: taken, generation 2"
expect_eq 2 "$(metrics_get postern_config_generation)" "metrics: generation 2"
expect_eq 1 "$(metrics_get postern_config_reloads_total)" "metrics: one reload taken"
expect_eq true "$(status_get 's["last_reload"]["ok"]')" "status: the last reload was taken"
expect_match '^"20[0-9-]*T[0-9:]*Z"$' "$(status_get 'json.dumps(s["last_reload"]["time"])')" \
	"status: the last reload's time"
code() { admin_curl -o /dev/null -w '%{http_code}' "$@"; }
expect_eq 404 "$(code http://postern/)" "GET / is 404"
expect_eq 404 "$(code http://postern/status/x)" "GET /status/x is 404"
expect_eq 404 "$(code -X POST http://postern/nope)" "POST /nope is 404"
expect_eq 405 "$(code -X POST http://postern/status)" "POST /status is 405"
expect_eq 405 "$(code -X DELETE http://postern/metrics)" "DELETE /metrics is 405"
expect_eq 405 "$(code http://postern/reload)" "GET /reload is 405"
expect_eq 2 "$(generation)" "and GET /reload reloaded nothing"
expect_match '^Allow: POST' "$(admin_curl -o /dev/null -D - http://postern/reload)" "405 says Allow: POST"
big=$(head -c 20000 /dev/zero | tr '\0' a)
expect_ne 200 "$(code -H "X-Big: $big" http://postern/status)" "an oversized head is refused"
expect_eq 2 "$(generation)" "the proxy still answers after it"

touch "$WORLD_DIR/hold.stop"
wait "$hold"
expect_eq 0 $? "the held tunnel lived through the reload"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
[ ! -e "$ADMIN_SOCK" ] && ok "the admin socket file is removed on exit" || fail "the admin socket file is left behind"
