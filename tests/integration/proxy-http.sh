#!/bin/sh
# proxy-http: the plain-HTTP forward path: allowed requests, Host mismatch,
# each keep-alive request judged on its own with per-host upstream reuse,
# hop-by-hop and Proxy-* headers removed, Via added, chunked bodies both
# ways, large bodies streamed intact, path-prefix rules, origin-form.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

conf=$(proxy_conf "[defaults]" \
	"allow_hosts = allowed.test private, other.test private" \
	"allow_hosts = api.example.test:8080/hooks/ private")
proxy_start "$conf" || die "no proxy"
P=http://127.0.0.1:3128

out=$(curl_px -x $P http://allowed.test/hello)
expect_match "^GET /hello HTTP/1.1" "$out" "absolute-form GET is forwarded in origin form"
expect_match "^Via: 1.1 postern" "$out" "Via is added"
expect_audit "the allow is logged with the path" method=GET host=allowed.test port=80 path=/hello decision=allow

# Hop-by-hop and Proxy-* headers never reach upstream.
out=$(curl_px -x $P -H 'Connection: X-Secret, keep-alive' -H 'X-Secret: s3cr3t' -H 'Keep-Alive: timeout=5' \
	-H 'TE: trailers' -H 'Proxy-Authorization: Basic Zm9vOmJhcg==' -H 'Proxy-Connection: keep-alive' \
	-H 'X-Kept: yes' http://allowed.test/hop)
expect_no_match "s3cr3t|^Proxy-|^Keep-Alive|^TE:" "$out" "hop-by-hop, Connection-named and Proxy-* headers are removed"
expect_match "^X-Kept: yes" "$out" "end-to-end headers are kept"

# Host must name the URI's host.
out=$(printf 'GET http://allowed.test/m HTTP/1.1\r\nHost: other.test\r\n\r\n' | raw 127.0.0.1 3128)
expect_eq 400 "$(status_of "$out")" "a Host header naming another host is a 400"
expect_eq host_mismatch "$(reason_of "$out")" "reason host_mismatch"
expect_eq 0 "$(upstream_count target=/m)" "nothing forwarded"
out=$(printf 'GET http://allowed.test/m2 HTTP/1.1\r\nHost: ALLOWED.test.:80\r\nConnection: close\r\n\r\n' | raw 127.0.0.1 3128)
expect_eq 200 "$(status_of "$out")" "a Host header equal in normal form is accepted"

# Keep-alive: each request judged on its own; per-host upstream reuse.
in_px curl -sS --max-time 10 -D "$WORLD_DIR/ka.h" -o /dev/null -o /dev/null -o /dev/null -o /dev/null -x $P \
	http://allowed.test/ka1 http://other.test/ka2 http://allowed.test/ka3 http://deny.test/ka4 2>/dev/null
conns=$(tr -d '\r' <"$WORLD_DIR/ka.h" | sed -n 's/^X-Conn: //p' | tr '\n' ' ')
set -- $conns
expect_eq 3 "$#" "three answers from upstream on one client connection ($conns)"
expect_ne "$1" "$2" "a request to another host opened its own upstream connection"
expect_eq "$1" "${3:-x}" "the next request to the first host reused its upstream connection"
expect_match "^HTTP/1.1 403" "$(tr -d '\r' <"$WORLD_DIR/ka.h")" "a denied host on the same connection gets its own 403"
expect_audit "all four requests rode one client connection" event=close requests=4
expect_audit "deny on the keep-alive connection logged" host=deny.test reason=host_not_allowed

# Chunked request body, chunked and large responses.
head -c 300000 /dev/urandom >"$WORLD_DIR/body.bin"
sum=$(sha256sum "$WORLD_DIR/body.bin" | cut -d' ' -f1)
out=$(curl_px -x $P -H 'Transfer-Encoding: chunked' --data-binary @"$WORLD_DIR/body.bin" http://allowed.test/post)
expect_match "^body-sha256=$sum$" "$out" "a chunked request body arrives intact"
out=$(curl_px -x $P --data-binary @"$WORLD_DIR/body.bin" http://allowed.test/post2)
expect_match "^body-sha256=$sum$" "$out" "a Content-Length request body arrives intact"
got=$(curl_px -x $P http://allowed.test/chunked/1000000 | sha256sum | cut -d' ' -f1)
expect_eq "$(pattern_sha256 1000000)" "$got" "a chunked response arrives intact"
got=$(curl_px -x $P http://allowed.test/bytes/20000000 | sha256sum | cut -d' ' -f1)
expect_eq "$(pattern_sha256 20000000)" "$got" "a 20 MB response arrives intact"
out=$(curl_px -x $P -I http://allowed.test/head)
expect_match "^HTTP/1.1 200" "$out" "HEAD works (no body expected)"
out=$(curl_px -x $P --http1.0 http://allowed.test/ten)
expect_match "^GET /ten HTTP/1.0" "$out" "an HTTP/1.0 client is served, as HTTP/1.0 upstream"
out=$(printf 'GET http://allowed.test/chunked HTTP/1.0\r\nHost: allowed.test\r\n\r\n' | raw 127.0.0.1 3128)
expect_no_match "^Transfer-Encoding: chunked" "$out" "an HTTP/1.0 client never gets a chunked answer"
expect_match "^three$" "$out" "but the whole body"

# Path prefixes: plain HTTP only, no escapes.
expect_eq 200 "$(curl_status -x $P http://api.example.test:8080/hooks/stop)" "/hooks/stop is under the prefix"
expect_eq 403 "$(curl_status -x $P http://api.example.test:8080/admin)" "/admin is not"
out=$(printf 'GET http://api.example.test:8080/hooks/../admin HTTP/1.1\r\nHost: api.example.test:8080\r\n\r\n' | raw 127.0.0.1 3128)
expect_eq "400 bad_request" "$(status_of "$out") $(reason_of "$out")" "a dot segment is refused outright: it cannot climb out of the prefix"
out=$(printf 'GET http://api.example.test:8080/hooks/%%2e%%2e/admin HTTP/1.1\r\nHost: api.example.test:8080\r\n\r\n' | raw 127.0.0.1 3128)
expect_eq "400 bad_request" "$(status_of "$out") $(reason_of "$out")" "nor an encoded one"
out=$(printf 'CONNECT api.example.test:8080 HTTP/1.1\r\nHost: api.example.test:8080\r\n\r\n' | raw 127.0.0.1 3128)
expect_eq 403 "$(status_of "$out")" "a path rule does not allow CONNECT"
expect_eq 0 "$(upstream_count target=/admin)" "/admin never reached upstream"

# Origin form to the proxy itself.
out=$(printf 'GET / HTTP/1.1\r\nHost: 127.0.0.1:3128\r\n\r\n' | raw 127.0.0.1 3128)
expect_eq 400 "$(status_of "$out")" "origin-form to the proxy is a 400"
expect_match "HTTP proxy" "$out" "which explains that this is a proxy"
proxy_alive && ok "the proxy still serves" || fail "the proxy died"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
