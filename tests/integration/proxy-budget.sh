#!/bin/sh
# proxy-budget: per-host budgets.  A tunnel under up=64k/h is
# closed at the budget: the upstream echo receives exactly 64 KiB (spliced,
# and as a pipelined first flight, one over the whole budget too), the close line says budget_exceeded,
# and a new tunnel is answered 429 with X-Postern-Reason and Retry-After;
# rps=2 refuses some of 5 quick plain-HTTP requests; conns=1 refuses a
# second tunnel while one is open; a request body over up= is not sent; a
# reload that keeps the rule keeps the use, one that raises the limit lets
# traffic through; /status and /metrics show the use.  Inside a terminated
# tunnel each request counts against rps= and its body against up=, and
# over HTTP/2 each stream against rps= and every client byte against up=.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

state="$WORLD_DIR/state"
mkdir -p "$state"
chmod 700 "$state"

# An h2 upstream on allowed.test:8443 when nghttpd is there.
HAVE_H2=
if command -v nghttpd >/dev/null 2>&1 && curl -V | grep -q '^Features:.* HTTP2'; then
	HAVE_H2=1
	mkdir -p "$WORLD_DIR/docs"
	echo "h2 get" >"$WORLD_DIR/docs/get"
	ip netns exec "$WORLD_NS_UP" nghttpd -d "$WORLD_DIR/docs" \
		-a "$WORLD_UP4" 8443 "$WORLD_KEY" "$WORLD_CERT" </dev/null >"$WORLD_DIR/nghttpd.log" 2>&1 &
else
	diag "nghttpd or curl's HTTP/2 is missing: the HTTP/2 part is not tried"
fi
conf="$WORLD_DIR/postern.ini"
# write_conf UP [LINE]: the config, allowed.test:7's budget UP per hour.
write_conf() {
	{
		admin_proxy_section "upstream_ca_file = $WORLD_CA" "state_dir = $state"
		echo "[defaults]"
		echo "allow_hosts = allowed.test:7 private up=$1/h"
		echo "allow_hosts = other.test:7 private up=64k/h"
		echo "allow_hosts = other.test:80 private rps=2"
		echo "allow_hosts = api.example.test:7 private conns=1"
		echo "allow_hosts = wild.test:80 private up=1k/h"
		echo "allow_hosts = wild.test:7 private up=1k/h"
		echo "allow_hosts = api.example.test inspect private up=2k/h"
		echo "allow_hosts = dual.test inspect private rps=2"
		echo "allow_hosts = allowed.test:8443 inspect private rps=2 up=16k/h"
		[ -n "${2:-}" ] && echo "$2"
	} >"$conf.new"
	mv "$conf.new" "$conf"
}
write_conf 64k
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"

flood() { in_px "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/flood.py" 127.0.0.1 3128 "$@"; }
connect_head() {
	printf 'CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n' "$1" "$1" | raw 127.0.0.1 3128 --timeout 2
}
# echo_in: bytes_in of each closed echo connection, one a line.
echo_in() { world__py jq --get bytes_in "$WORLD_UPSTREAM_LOG" event=close kind=echo; }
wait_echo() {
	local i=0
	while [ -z "$(echo_in)" ] && [ $i -lt 60 ]; do sleep 0.05; i=$((i + 1)); done
}
# reload_to UP [LINE]: rewrite the config, reload, wait for the generation.
reload_to() {
	local gen i=0
	gen=$(generation)
	write_conf "$@"
	proxy_reload
	# The config watch may take the new file before SIGHUP does.
	while [ "$(generation)" = "$gen" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	if [ "$(generation)" -gt "$gen" ]; then ok "the reload to up=$1 is taken"
	else fail "the reload to up=$1 is not taken"; fi
	sleep 0.2
}
bud() { status_get "[b for b in s[\"sessions\"][0][\"budgets\"] if b[\"rule\"].startswith(\"$1\")][0]$2"; }

# ---- up=: a spliced tunnel is closed at the budget
out=$(flood allowed.test:7 300000)
diag "flood: $out"
expect_match "^200 .*closed=yes" "$out" "the tunnel over up=64k/h is closed by the proxy"
expect_audit "its close line says budget_exceeded" event=close host=allowed.test port=7 \
	why=budget_exceeded
wait_echo
expect_eq 65536 "$(echo_in | head -1)" "the upstream received exactly the 64 KiB budget"
out=$(connect_head allowed.test:7)
expect_eq 429 "$(status_of "$out")" "a new tunnel after it is answered 429"
expect_eq budget_exceeded "$(reason_of "$out")" "with X-Postern-Reason: budget_exceeded"
expect_match "^Retry-After: [1-9][0-9]*$" "$out" "and a Retry-After for the up window"
expect_match "up budget of allow_hosts = allowed\.test:7 private up=64k/h" "$out" \
	"the body names the budget"
expect_match "frees up in [1-9][0-9]*s" "$out" "and when it frees up"
expect_audit "the refusal is audited" event=decision host=allowed.test decision=deny \
	reason=budget_exceeded
out=$(in_px "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/socks5.py" 127.0.0.1 3128 \
	--target allowed.test --tport 7 --send hi)
expect_match "^rep=02$" "$out" "a SOCKS5 tunnel over the budget gets reply 2 (not allowed by ruleset)"

# ---- up=: a first flight sent behind the CONNECT is bounded too
upstream_log_reset
out=$(flood other.test:7 100000 --pipelined)
diag "pipelined flood: $out"
expect_audit "the pipelined tunnel is closed at its budget" event=close host=other.test port=7 \
	why=budget_exceeded
wait_echo
expect_eq 65536 "$(echo_in | head -1)" "the upstream received exactly the budget of the pipelined tunnel"
# A first flight (32 KiB) over the whole budget (1 KiB): what the proxy
# writes at once, at the tunnel's start, is bounded as well.
upstream_log_reset
out=$(flood wild.test:7 5000 --pipelined)
diag "pipelined flood over up=1k/h: $out"
expect_audit "the tunnel whose first flight is over its budget is closed" event=close \
	host=wild.test port=7 why=budget_exceeded
wait_echo
expect_eq 1024 "$(echo_in | head -1)" "the upstream received exactly the 1 KiB budget of the first flight"

# ---- rps=2: five quick plain-HTTP requests, from one curl: five curl
# processes in a row can take longer than the window on a loaded machine.
n200=0
n429=0
for c in $(curl_px -o /dev/null -w '%{http_code}\n' -x http://127.0.0.1:3128 \
	http://other.test/r1 http://other.test/r2 http://other.test/r3 http://other.test/r4 \
	http://other.test/r5); do
	case $c in 200) n200=$((n200 + 1)) ;; 429) n429=$((n429 + 1)) ;; esac
done
diag "rps=2: $n200 answered, $n429 refused"
expect_eq 5 $((n200 + n429)) "each of the five got 200 or 429"
if [ "$n200" -ge 2 ]; then ok "the burst of 2 went through"; else fail "only $n200 went through"; fi
if [ "$n429" -ge 1 ]; then ok "some were refused 429"; else fail "none of the 5 was refused"; fi
out=$(curl_px -si -x http://127.0.0.1:3128 http://other.test/x http://other.test/y http://other.test/z)
expect_match "^Retry-After: 1$" "$out" "an rps refusal says Retry-After: 1"
expect_match "^X-Postern-Reason: budget_exceeded$" "$out" "and budget_exceeded"

# ---- conns=1: a second tunnel while one is open
in_px "$WORLD_PYTHON" "$ADMIN_LIB/load.py" hold --proxy 127.0.0.1:3128 --target api.example.test:7 \
	--ready "$WORLD_DIR/hold.ready" --stop "$WORLD_DIR/hold.stop" >"$WORLD_DIR/hold.out" 2>&1 &
hold=$!
i=0
while [ ! -e "$WORLD_DIR/hold.ready" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
[ -e "$WORLD_DIR/hold.ready" ] || fail "the held tunnel did not open"
out=$(connect_head api.example.test:7)
expect_eq 429 "$(status_of "$out")" "a second tunnel under conns=1 is answered 429"
expect_match "conns budget" "$out" "naming the conns budget"
expect_eq 1 "$(bud api. '["conns"]["open"]')" "/status shows the one connection open"
touch "$WORLD_DIR/hold.stop"
wait $hold
i=0
while [ "$(bud api. '["conns"]["open"]')" != 0 ] && [ $i -lt 60 ]; do sleep 0.05; i=$((i + 1)); done
out=$(connect_head api.example.test:7)
expect_eq 200 "$(status_of "$out")" "once it closed, a new tunnel is let through"

# ---- up=1k/h on plain-HTTP request bodies
head -c 600 /dev/zero >"$WORLD_DIR/body600"
expect_eq 200 "$(curl_status -x http://127.0.0.1:3128 --data-binary @"$WORLD_DIR/body600" http://wild.test/b1)" \
	"a 600-byte body fits in up=1k/h"
curl_px -x http://127.0.0.1:3128 --data-binary @"$WORLD_DIR/body600" http://wild.test/b2 >/dev/null 2>&1
expect_audit "the second body is over the budget: closed" event=close host=wild.test why=budget_exceeded
expect_eq 0 "$(upstream_count target=/b2 body_length=600)" "and its body never reached the upstream whole"
expect_eq 429 "$(curl_status -x http://127.0.0.1:3128 http://wild.test/b3)" \
	"the attempt spent the budget: the next request is refused 429"

# ---- inside a terminated tunnel
CA="$state/ca/default.pem"
tc() { in_px curl -sS --max-time 10 -x http://127.0.0.1:3128 --cacert "$CA" "$@"; }
head -c 1500 /dev/zero >"$WORLD_DIR/body1500"
out=$(tc -o /dev/null -w '%{http_code}' --data-binary @"$WORLD_DIR/body1500" https://api.example.test/t1)
expect_eq 200 "$out" "a 1500-byte body inside a terminated tunnel fits in up=2k/h"
tc -o /dev/null --data-binary @"$WORLD_DIR/body1500" https://api.example.test/t2 2>/dev/null
expect_audit "the second is over the budget: the tunnel is closed" event=close host=api.example.test \
	why=budget_exceeded
expect_eq 0 "$(upstream_count target=/t2 body_length=1500)" "and its body never reached the upstream whole"
tc -o /dev/null https://api.example.test/t3 2>/dev/null
expect_audit "then a new tunnel to it is refused" event=decision method=CONNECT host=api.example.test \
	decision=deny reason=budget_exceeded
out=$(tc -s -o /dev/null -w '%{http_code}\n' https://dual.test/d1 https://dual.test/d2 https://dual.test/d3)
diag "rps=2 inside TLS: $(echo $out)"
expect_match "^200$" "$out" "under rps=2, the first request inside the tunnel is answered"
expect_audit "a later one inside the tunnel is refused 429" host=dual.test tls=terminated \
	reason=budget_exceeded

if [ -n "$HAVE_H2" ]; then
	in_up "$WORLD_PYTHON" -c '
import socket, sys, time
for i in range(100):
    try:
        socket.create_connection((sys.argv[1], 8443), timeout=1).close()
        break
    except OSError:
        time.sleep(0.05)
' "$WORLD_UP4"
	h2c() { in_px curl -sS --max-time 20 --http2 -x http://127.0.0.1:3128 --cacert "$CA" "$@"; }
	out=$(h2c -o /dev/null -w '%{http_version} %{http_code}\n' https://allowed.test:8443/get \
		-o /dev/null https://allowed.test:8443/get)
	diag "h2 under rps=2: $(echo $out)"
	expect_match "^2 200$" "$out" "HTTP/2: the first stream under rps=2 is answered"
	expect_match "^2 429$" "$out" "the second stream on the same connection is 429"
	expect_audit "the stream's refusal is audited" event=decision port=8443 tls=terminated \
		reason=budget_exceeded
	sleep 1.1
	head -c 32768 /dev/zero >"$WORLD_DIR/body32k"
	h2c -o /dev/null --data-binary @"$WORLD_DIR/body32k" https://allowed.test:8443/get 2>/dev/null
	expect_audit "HTTP/2 bytes past up=16k/h close the tunnel" event=close host=allowed.test port=8443 \
		why=budget_exceeded
	used=$(bud allowed.test:8443 '["up"]["used_bytes"]')
	expect_eq 16384 "$used" "and at most the budget was taken from the client"
fi

# ---- /status and /metrics
expect_eq 65536 "$(bud allowed. '["up"]["used_bytes"]')" "/status: the bytes used"
expect_eq 65536 "$(bud allowed. '["up"]["limit_bytes"]')" "/status: the limit"
r=$(bud allowed. '["up"]["resets_in_seconds"]')
if [ "$r" -gt 3500 ] && [ "$r" -le 3600 ]; then ok "/status: the window resets in $r s"; else fail "resets in '$r'"; fi
admin_curl -H 'Accept: text/plain' http://postern/status >"$WORLD_DIR/status.txt"
expect_match "^ +up 65536 of 65536 bytes used, window resets in [0-9]+s$" \
	"$(cat "$WORLD_DIR/status.txt")" "the text status shows the use"
admin_get /metrics >"$WORLD_DIR/metrics.txt"
m=$(cat "$WORLD_DIR/metrics.txt")
expect_match '^postern_budget_used_bytes\{session="default",rule="allowed\.test:7 private up=64k/h"\} 65536$' "$m" \
	"/metrics: postern_budget_used_bytes"
expect_match '^postern_budget_exceeded_total\{session="default",rule="allowed\.test:7 private up=64k/h",kind="up"\} [2-9]$' \
	"$m" "/metrics: postern_budget_exceeded_total kind=up"
expect_match '^postern_budget_exceeded_total\{session="default",rule="other\.test:80 private rps=2",kind="rps"\} [1-9][0-9]*$' \
	"$m" "/metrics: the rps refusals"

# ---- reload: the use survives; a raised limit lets traffic through
reload_to 64k "allow_hosts = deny.test:7 private"
out=$(connect_head allowed.test:7)
expect_eq 429 "$(status_of "$out")" "a reload that keeps the rule keeps its use: still 429"
expect_eq 65536 "$(bud allowed. '["up"]["used_bytes"]')" "/status: the use after the reload"
reload_to 1M
out=$(flood allowed.test:7 4096)
diag "after raising: $out"
expect_match "^200 sent=4096 echoed=4096" "$out" "a raised limit lets the tunnel through"
expect_eq $((65536 + 4096)) "$(bud allowed. '["up"]["used_bytes"]')" \
	"the new limit applies to the use so far"
expect_eq 1048576 "$(bud allowed. '["up"]["limit_bytes"]')" "/status: the new limit"

proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
