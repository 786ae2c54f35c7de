#!/bin/sh
# proxy-decider: decider = asks an outside program (lib-proxy/decider.py)
# about what the allowlist refuses, over a UNIX socket and over HTTP.  Its
# allow lets the request go (CONNECT, plain HTTP, SOCKS5), its deny refuses
# with its reason (made safe: no header can be added), a kept answer (ttl)
# is not asked again.  A slow answer times out (decider_timeout) while other
# questions are answered meanwhile; a bad answer, a decider that is down or
# crashes refuse, and a restarted decider serves again.  Deny rules and the
# never-reachable ranges hold whatever it says; decider_ask = all asks about
# allowed requests too.  /metrics counts the answers.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

D="$top_srcdir/tests/integration/lib-proxy/decider.py"
SOCK="$WORLD_DIR/decider.sock"
QLOG="$WORLD_DIR/questions.log"
touch "$QLOG"

# decider_start WHERE: start decider.py (answers slow ones after 3 s) in px
# on WHERE (unix:PATH or http:ADDR:PORT); returns once it listens.
decider_start() {
	local out i
	out="$WORLD_DIR/decider.$(echo "$1" | tr -c 'a-z0-9' _)"
	rm -f "$out"
	SLOW=3 ip netns exec "$WORLD_NS_PX" "$WORLD_PYTHON" "$D" "$1" "$QLOG" >"$out" \
		2>>"$WORLD_DIR/decider.err" &
	i=0
	while ! grep -q ready "$out" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	grep -q ready "$out" || die "decider.py did not start on $1"
}
# asked COND: how many questions decider.py got matching the Python
# expression COND over q (one question).
asked() {
	"$WORLD_PYTHON" -c '
import json, sys
n = 0
for l in open(sys.argv[1]):
    q = json.loads(l)
    n += bool(eval(sys.argv[2]))
print(n)' "$QLOG" "$1"
}
# get PORT URL: "STATUS REASON" of a plain-HTTP GET through the proxy on PORT.
get() {
	local out
	out=$(curl_px -s -i -x "http://127.0.0.1:$1" "$2" 2>/dev/null | tr -d '\r')
	echo "$(printf '%s\n' "$out" | sed -n '1s/^HTTP\/1\.[01] \([0-9]*\).*/\1/p') $(reason_of "$out")"
}
# connect PORT HOST:PORT: "STATUS REASON" of a CONNECT.
connect() {
	local out
	out=$(printf 'CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n' "$2" "$2" | raw 127.0.0.1 "$1" --timeout 5)
	echo "$(status_of "$out") $(reason_of "$out")"
}

conf="$WORLD_DIR/postern.ini"
{
	admin_proxy_section
	echo "[defaults]"
	echo "allow_hosts = allowed.test:8443 private"
	echo "allow_hosts = http://other.test/api/ private"
	echo "deny_hosts = deny.test"
	echo "decider = unix:$SOCK"
	echo "decider_timeout = 1s"
	echo "[session h]"
	echo "listen = tcp:127.0.0.1:3129"
	echo "decider = http://127.0.0.1:8901/decide"
	echo "[session all]"
	echo "listen = tcp:127.0.0.1:3130"
	echo "decider_ask = all"
	echo "[session u]"
	echo "listen = unix:$WORLD_DIR/u.sock"
} >"$conf"

# Bad addresses are refused with FILE:LINE.
for bad in "http://10.200.1.2:80/x" "http://localhost:80/x" "unix:relative" "tcp:127.0.0.1:80" \
	"http://127.0.0.1/x" "http://127.0.0.1:80/a b"; do
	printf '[proxy]\nlisten = tcp:127.0.0.1:3999\n[defaults]\ndecider = %s\n' "$bad" >"$WORLD_DIR/bad.ini"
	out=$("$POSTERN_PROXY" --check -c "$WORLD_DIR/bad.ini" 2>&1)
	expect_match "bad.ini:4: decider: " "$out" "decider = $bad is refused with FILE:LINE"
done
printf '[proxy]\nlisten = tcp:127.0.0.1:3999\n[defaults]\ndecider_ask = some\n' >"$WORLD_DIR/bad.ini"
expect_match "bad.ini:4: decider_ask is unlisted or all" "$("$POSTERN_PROXY" --check -c "$WORLD_DIR/bad.ini" 2>&1)" \
	"decider_ask takes unlisted or all"

proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"

# Down before it ever started: refused, not allowed.
expect_eq "403 decider_down" "$(connect 3128 allowed.test:443)" "a decider that is not there refuses (decider_down)"
decider_start "unix:$SOCK"
sleep 2.2 # past the back-off of that failure

# Allow: CONNECT to a port the allowlist does not list.
code=$(curl_status -x http://127.0.0.1:3128 https://allowed.test/via-decider)
expect_eq 200 "$code" "the decider's allow lets a CONNECT the allowlist refused go"
expect_upstream "it reached the upstream" sni=allowed.test target=/via-decider
expect_audit "its decision line says the decider allowed it" host=allowed.test port=443 decision=allow decider=allow
expect_eq 1 "$(asked 'q["host"] == "allowed.test" and q["port"] == 443 and q["method"] == "CONNECT" and q["session"] == "default" and q["allowlist"] == "deny" and q["allowlist_reason"] == "port_not_allowed" and q["rule"]["text"] == "allowed.test:8443 private" and q["rule"]["line"] > 0 and q["kind"] == "connect" and "path" not in q')" \
	"the question has the session, method, host, port, the allowlist's verdict and its rule"

# Plain HTTP: the path goes in the question.
expect_eq "200 " "$(get 3128 http://other.test/x/y)" "the decider's allow lets a plain-HTTP request the allowlist refused go"
expect_eq 1 "$(asked 'q["host"] == "other.test" and q.get("path") == "/x/y" and q["method"] == "GET" and q["kind"] == "http" and q["allowlist_reason"] == "path_not_allowed"')" \
	"a plain-HTTP question carries the path"

# SOCKS5.
out=$(in_px "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/socks5.py" 127.0.0.1 3128 \
	--target allowed.test --tport 443 --timeout 5)
expect_match "rep=00" "$out" "SOCKS5: the decider's allow lets it go"
expect_eq 1 "$(asked 'q["kind"] == "socks5" and q["host"] == "allowed.test"')" "SOCKS5 asks too"

# A UNIX listener: the peer's uid and pid go in the question.
in_px "$WORLD_PYTHON" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n")
print(s.recv(100).split(b"\r\n")[0].decode())' "$WORLD_DIR/u.sock" >"$WORLD_DIR/u.out"
expect_match "^HTTP/1.1 200" "$(cat "$WORLD_DIR/u.out")" "a UNIX listener's request is allowed by the decider"
expect_eq 1 "$(asked 'q["session"] == "u" and q["uid"] == 0 and q["pid"] > 1')" \
	"its question carries the peer's uid and pid (SO_PEERCRED)"
expect_eq 0 "$(asked 'q["session"] != "u" and ("uid" in q or "pid" in q)')" "a TCP peer's has neither"

# Deny, with a hostile reason.
resp=$(curl_px -s -i -x http://127.0.0.1:3128 http://other.test/nope | tr -d '\r')
expect_eq 403 "$(printf '%s\n' "$resp" | sed -n '1s/^HTTP\/1\.[01] \([0-9]*\).*/\1/p')" "the decider's deny refuses"
expect_eq decider_denied "$(reason_of "$resp")" "with decider_denied"
expect_match "denied it: policy says no\?\?X-Injected: yes" "$resp" "the agent sees the decider's reason, its CR LF made harmless"
expect_no_match "^X-Injected" "$resp" "the reason adds no header"
expect_audit "the refusal is audited with the reason" path=/nope reason=decider_denied decider=deny
expect_eq 0 "$(upstream_count path=/nope)" "nothing reached the upstream"

# Deny rules and never-reachable ranges hold against an allowing decider.
expect_eq "403 denied_by_rule" "$(connect 3128 deny.test:443)" "a deny rule refuses whatever the decider would say"
expect_eq 0 "$(asked 'q["host"] == "deny.test"')" "and the decider is not even asked"
expect_eq "403 private_address" "$(connect 3128 loop.test:443)" "an allowed name resolving to 127.0.0.1 is refused at its address"
expect_eq "403 private_address" "$(connect 3128 meta.test:443)" "and one resolving to 169.254.169.254"
expect_eq "403 private_address" "$(connect 3128 127.0.0.1:443)" "and the literal 127.0.0.1"
expect_eq 3 "$(asked 'q["host"] in ("loop.test", "meta.test", "127.0.0.1")')" "(the decider allowed all three)"

# ttl: the second request is not asked.
expect_eq "200 " "$(get 3128 http://other.test/ttl/a)" "an allow with a ttl"
expect_eq "200 " "$(get 3128 http://other.test/ttl/a)" "the same request again is allowed"
expect_eq 1 "$(asked 'q.get("path") == "/ttl/a"')" "from the kept answer: asked once"
expect_eq "200 " "$(get 3128 http://other.test/ttl/b)" "another path is asked"
expect_eq 1 "$(asked 'q.get("path") == "/ttl/b"')" "once"

# Slow: a timeout refuses it, and others are answered meanwhile.
rm -f "$WORLD_DIR/slow"
( get 3128 http://other.test/slow >"$WORLD_DIR/slow.tmp"; mv "$WORLD_DIR/slow.tmp" "$WORLD_DIR/slow" ) &
i=0
while [ "$(asked 'q.get("path") == "/slow"')" = 0 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
expect_eq "200 " "$(get 3128 http://other.test/meanwhile)" "while one question waits, another is answered"
if [ -e "$WORLD_DIR/slow" ]; then
	fail "the slow request was answered before the fast one"
else
	ok "the slow one still waits then"
fi
i=0
while [ ! -e "$WORLD_DIR/slow" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
expect_eq "403 decider_timeout" "$(cat "$WORLD_DIR/slow")" "no answer within decider_timeout refuses with decider_timeout"
expect_audit "the timeout is audited" path=/slow reason=decider_timeout decider=timeout
sleep 2.2 # its late answer comes, and is dropped
expect_eq "200 " "$(get 3128 http://other.test/after-late)" "a late answer changes nothing; the next is served"

# Bad answers.
expect_eq "403 decider_bad_answer" "$(connect 3128 garbage.test:443)" "an answer that is not JSON refuses (decider_bad_answer)"
expect_eq "403 decider_bad_answer" "$(connect 3128 wrongid.test:443)" "an answer to an id never asked refuses"
expect_eq "403 decider_bad_answer" "$(connect 3128 big.test:443)" "a line over the bound refuses"
expect_eq "200 " "$(get 3128 http://other.test/after-bad)" "the decider is asked again afterwards"
expect_eq "502 dns_failure" "$(connect 3128 blank.test:443)" \
	"a blank line before an answer is skipped (the allow taken; blank.test has no address)"

# Crash mid-way, then a restart.
expect_eq "403 decider_down" "$(connect 3128 crash.test:443)" "a decider that dies refuses what it was asked (decider_down)"
expect_eq "403 decider_down" "$(get 3128 http://other.test/while-down)" "and what comes while it is down"
decider_start "unix:$SOCK"
i=0
while [ "$(get 3128 http://other.test/back)" != "200 " ] && [ $i -lt 40 ]; do sleep 0.25; i=$((i + 1)); done
expect_eq "200 " "$(get 3128 http://other.test/back)" "a restarted decider serves again"

# decider_ask = all: an allowed request is asked, and a deny refuses it.
expect_eq "200 " "$(get 3130 http://other.test/api/one)" "decider_ask = all: an allowed request the decider allows goes"
expect_eq 1 "$(asked 'q["session"] == "all" and q.get("path") == "/api/one" and q["allowlist"] == "allow" and q["allowlist_reason"] == "allowed"')" \
	"it was asked, with the allowlist's allow"
expect_eq "403 decider_denied" "$(get 3130 http://other.test/api/nope)" "and the decider's deny refuses a request the allowlist allows"
expect_eq "200 " "$(get 3128 http://other.test/api/two)" "without decider_ask = all, an allowed request goes"
expect_eq 0 "$(asked 'q.get("path") == "/api/two"')" "unasked"

# Over HTTP.
expect_eq "403 decider_down" "$(get 3129 http://other.test/h1)" "http decider: down refuses"
decider_start "http:127.0.0.1:8901"
sleep 2.2
expect_eq "200 " "$(get 3129 http://other.test/h2)" "http decider: an allow"
expect_eq "403 decider_denied" "$(get 3129 http://other.test/nope)" "http decider: a deny"
expect_eq "403 decider_bad_answer" "$(connect 3129 garbage.test:443)" "http decider: a bad answer"
expect_eq 1 "$(asked 'q["session"] == "h" and q.get("path") == "/h2"')" "one POST, one question"

# A reload with a bad decider = is refused with FILE:LINE; the old config
# (and its decider) stays.
cp "$conf" "$WORLD_DIR/good.ini"
sed -i "s|^decider = unix:.*|decider = http://192.0.2.1:80/|" "$conf"
proxy_reload
i=0
while ! grep -q "postern.ini:[0-9]*: decider: the address must be a loopback one" "$WORLD_DIR/proxy.out" && [ $i -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
expect_match "postern.ini:[0-9]*: decider: the address must be a loopback one" "$(cat "$WORLD_DIR/proxy.out")" \
	"a reload with a non-loopback decider is refused with FILE:LINE"
expect_eq 1 "$(generation)" "and the old config stays"
expect_eq "200 " "$(get 3128 http://other.test/after-reload)" "with its decider"
cp "$WORLD_DIR/good.ini" "$conf"

# /metrics.
for r in allow deny timeout bad_answer down; do
	v=$(metrics_get postern_decider_answers_total result=$r)
	if [ "${v:-0}" -ge 1 ]; then ok "/metrics counts $r answers ($v)"; else fail "/metrics: no $r answers counted ($v)"; fi
done
v=$(metrics_get postern_decider_cache_hits_total)
if [ "${v:-0}" -ge 1 ]; then ok "/metrics counts cache hits"; else fail "/metrics: no cache hits ($v)"; fi
v=$(metrics_get postern_decider_latency_seconds_count)
if [ "${v:-0}" -ge 5 ]; then ok "/metrics has the latency histogram"; else fail "/metrics: latency count $v"; fi
expect_eq "403 denied_by_rule" "$(connect 3128 deny.test:443)" "the proxy still serves"
