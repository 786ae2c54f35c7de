#!/bin/sh
# tls-reflect: a bound host that gives the request back never gives the
# client the value.  An upstream (lib-tls/reflect-upstream.js) reflects
# each request the ways real ones do: an echo body (with Content-Length,
# in chunks of one byte to twenty, closed-delimited), a redirect that keeps
# the query, response fields, a reason phrase, server-sent events, and
# WebSocket frames cut inside the value.  Over HTTP/1.1 and HTTP/2, for a
# header, a Basic and a query binding (the value, its base64 and its
# percent-encoding), the client sees '*' where the value was, never the
# value; each is audited (event reflect, reason secret_reflected) and
# counted in /metrics; a gzip answer is refused; events are not held.
. "$top_srcdir/tests/integration/lib/world.sh"
command -v node >/dev/null 2>&1 || skip "node is not installed"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

HEX=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
VALUE="rsk-$HEX"
QVALUE="q+$HEX/=&z"
export PX_TEST_KEY="$VALUE" PX_TEST_Q="$QVALUE"
B64=$(printf 'x-access-token:%s' "$VALUE" | base64 -w0)
PCT=$("$WORLD_PYTHON" -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe="-._~"))' "$QVALUE")
state="$WORLD_DIR/state"
mkdir -p "$state"
chmod 700 "$state"

ip netns exec "$WORLD_NS_UP" node "$top_srcdir/tests/integration/lib-tls/reflect-upstream.js" \
	"$WORLD_CERT" "$WORLD_KEY" "$WORLD_UP4" >"$WORLD_DIR/reflect.out" 2>&1 &
i=0
until grep -q ready "$WORLD_DIR/reflect.out" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 100 ] || die "the reflecting upstream did not start: $(cat "$WORLD_DIR/reflect.out")"
	sleep 0.1
done

conf="$WORLD_DIR/postern.ini"
{
	admin_proxy_section "upstream_ca_file = $WORLD_CA" "state_dir = $state"
	cat <<-EOF
		[defaults]
		allow_hosts = allowed.test:9443 private, allowed.test:9444 private
		allow_hosts = other.test:9443 private, wild.test:9443 private
		secrets = k, g, q
		[secret k]
		from_env = PX_TEST_KEY
		inject = allowed.test:9443 header x-api-key
		inject = allowed.test:9444 header x-api-key
		[secret g]
		from_env = PX_TEST_KEY
		placeholder_env = PX_G
		inject = other.test:9443 basic x-access-token
		[secret q]
		from_env = PX_TEST_Q
		inject = wild.test:9443 query key
	EOF
} >"$conf"
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
CA="$state/ca/default.pem"
sess=$(in_px curl -sS --max-time 5 http://127.0.0.1:3128/.well-known/postern/session)
PH_K=$(printf '%s\n' "$sess" | sed -n 's/^env PX_TEST_KEY //p')
PH_G=$(printf '%s\n' "$sess" | sed -n 's/^env PX_G //p')
PH_Q=$(printf '%s\n' "$sess" | sed -n 's/^env PX_TEST_Q //p')
[ -n "$PH_K" ] && [ -n "$PH_G" ] && [ -n "$PH_Q" ] || die "no placeholders"

# tc PROTO ARGS: curl through the proxy, the response's head and body.
tc() {
	p=$1
	shift
	in_px curl -sS -i --max-time 10 -x http://127.0.0.1:3128 --cacert "$CA" "--$p" "$@" 2>&1
}
# clean WHAT OUT: none of the forms the proxy produced is in OUT.
clean() {
	expect_no_match "$VALUE" "$2" "$1: not the value"
	expect_no_match "$HEX" "$2" "$1: no part of the value that holds its random bytes"
	expect_no_match "$B64" "$2" "$1: not the Basic credential"
	expect_no_match "$PCT" "$2" "$1: not the query's form"
}

for p in http1.1 http2; do
	out=$(tc $p -H "x-api-key: $PH_K" https://allowed.test:9443/echo)
	expect_match '^HTTP/[12.]* 200' "$out" "$p echo: answered"
	expect_match '^x-api-key: \*{20,}$' "$out" "$p echo: the value is overwritten in the body"
	clean "$p echo" "$out"
	for n in 1 7 20; do
		out=$(tc $p -H "x-api-key: $PH_K" "https://allowed.test:9443/split?n=$n")
		expect_match '^x-api-key: \*{20,}$' "$out" "$p in pieces of $n: overwritten across pieces"
		clean "$p in pieces of $n" "$out"
	done
	out=$(tc $p -H "x-api-key: $PH_K" https://allowed.test:9443/header)
	expect_match '^x-echo-key: \*{20,}' "$out" "$p: a response field is overwritten"
	clean "$p response field" "$out"
	out=$(tc $p -u "x-access-token:$PH_G" https://other.test:9443/echo)
	expect_match '^authorization: Basic \*{20,}' "$out" "$p Basic: the base64 credential is overwritten"
	clean "$p Basic" "$out"
	out=$(tc $p "https://wild.test:9443/redirect?key=$PH_Q")
	expect_match '^[Ll]ocation: https://wild.test:9443/landing\?.*\*\*\*\*' "$out" \
		"$p query: the Location keeps its query, the encoded value overwritten"
	clean "$p redirect" "$out"
	out=$(tc $p "https://wild.test:9443/echo?key=$PH_Q")
	clean "$p query echo" "$out"
	st=$(in_px curl -sS -o /dev/null -w '%{http_code}' --max-time 10 -x http://127.0.0.1:3128 \
		--cacert "$CA" "--$p" -H "x-api-key: $PH_K" https://allowed.test:9443/gzip)
	expect_eq 502 "$st" "$p: a gzip answer from a bound host is refused"
done

out=$(tc http1.1 -H "x-api-key: $PH_K" https://allowed.test:9443/close)
expect_match '^x-api-key: \*{20,}$' "$out" "close-delimited: overwritten"
clean "close-delimited" "$out"
out=$(tc http1.1 -H "x-api-key: $PH_K" https://allowed.test:9443/reason)
expect_match '^HTTP/1.1 400 Bad key \*{20,}' "$out" "the status line's reason phrase is overwritten"
clean "reason phrase" "$out"

# WebSocket: the value cut between two frames with a ping between them.
out=$(in_px "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-tls/reflect-client.py" 3128 "$CA" \
	allowed.test 9444 /ws ws "x-api-key: $PH_K" 2>&1)
expect_match '^HTTP/1.1 101' "$out" "websocket: switched"
expect_match '^frame 9 ping$' "$out" "websocket: frames pass as framed"
joined=$(printf '%s\n' "$out" | sed -n 's/^frame [01] //p' | tr -d '\n')
expect_match 'x-api-key: \*{20,}' "$joined" "websocket: the value cut between frames is overwritten"
clean "websocket" "$joined"

# Server-sent events stream: the first event reaches the client before
# the last one is sent (600 ms later), not held for the whole answer.
out=$(in_px "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-tls/reflect-client.py" 3128 "$CA" \
	allowed.test 9443 /sse sse "x-api-key: $PH_K" 2>&1)
first=$(printf '%s\n' "$out" | sed -n 's/^\([0-9]*\) data: event 0$/\1/p')
last=$(printf '%s\n' "$out" | sed -n 's/^\([0-9]*\) data: GET.*/\1/p')
[ -n "$first" ] && [ -n "$last" ] && [ $((last - first)) -ge 400 ] &&
	ok "events stream: the first at ${first} ms, the echo at ${last} ms" ||
	fail "events were held: first ${first:-none}, last ${last:-none}"
expect_match 'x-api-key: \*{20,}' "$out" "events: the value in the last event is overwritten"
clean "events" "$out"

# The audit and /metrics.
expect_audit "a reflection is audited with its own reason" event=reflect reason=secret_reflected \
	secret=k host=allowed.test where=body path=/echo count~^[1-9]
expect_audit "in a field" event=reflect reason=secret_reflected where=header path=/header
expect_audit "over HTTP/2" event=reflect reason=secret_reflected proto=h2 secret=k
expect_audit "in a WebSocket" event=reflect reason=secret_reflected where=websocket
expect_audit "Basic" event=reflect reason=secret_reflected secret=g
expect_audit "query" event=reflect reason=secret_reflected secret=q
expect_match "^[1-9]" "$(metrics_get postern_secret_reflected_total session=default secret=k)" \
	"/metrics counts reflections of k"
for f in "$PROXY_LOG" "$WORLD_DIR/proxy.out"; do
	[ -f "$f" ] || continue
	if grep -q "$HEX" "$f"; then fail "$f holds the value"; else ok "$f holds no value"; fi
done
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
