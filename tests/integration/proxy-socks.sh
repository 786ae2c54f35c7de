#!/bin/sh
# proxy-socks: SOCKS5 (RFC 1928) on the HTTP listeners, TCP and UNIX:
# curl's socks5h:// (names) and socks5:// (literals), netcat's -X 5 and a
# raw client are judged exactly as an HTTP CONNECT and audited with the
# same reasons; a refusal is reply code 2; BIND and UDP ASSOCIATE get 7;
# a greeting in one-byte pieces works; bad greetings and requests are
# answered, audited and closed, and the proxy keeps serving.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

conf=$(proxy_conf "listen = unix:$WORLD_DIR/proxy.sock" "header_timeout = 1s" \
	"[defaults]" \
	"allow_hosts = allowed.test private, allowed.test:7 private" \
	"allow_hosts = dead.test:80 private, nope.test:80" \
	"allow_hosts = 10.200.1.2:80")
proxy_start "$conf" || die "no proxy"

socks5() { in_px "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/socks5.py" 127.0.0.1 3128 "$@"; }

# curl, names resolved by the proxy (socks5h): allowed, then refused.
out=$(curl_px --proxy socks5h://127.0.0.1:3128 https://allowed.test/x)
expect_match "^sni=allowed\.test$" "$out" "curl socks5h:// reaches the upstream over TLS"
expect_audit "the allow is audited as a SOCKS5 CONNECT" event=decision "method=SOCKS5 CONNECT" \
	host=allowed.test port=443 decision=allow reason=allowed address=10.200.1.2
expect_audit "and its close" event=close "method=SOCKS5 CONNECT" host=allowed.test bytes_down~'^[1-9]'
err=$(curl_px --proxy socks5h://127.0.0.1:3128 https://deny.test/ 2>&1 >/dev/null)
expect_match "SOCKS5.*\(2\)" "$err" "curl sees reply code 2 (not allowed by ruleset) for deny.test"
expect_audit "the refusal is audited with its reason" event=decision "method=SOCKS5 CONNECT" \
	host=deny.test port=443 decision=deny reason=host_not_allowed
expect_eq 0 "$(upstream_count sni=deny.test)" "nothing reached upstream for deny.test"
expect_eq 0 "$(dns_query_count deny.test)" "and no DNS query was made for it"

# curl, names resolved by curl (socks5): the proxy sees a literal, judged
# by the literal rules exactly as an HTTP CONNECT to it.
out=$(curl_px --proxy socks5://127.0.0.1:3128 http://allowed.test/lit)
expect_match "^GET /lit HTTP/1.1" "$out" "curl socks5:// to a literal a rule names goes through"
expect_audit "the literal is audited" event=decision "method=SOCKS5 CONNECT" host=10.200.1.2 \
	port=80 decision=allow
err=$(curl_px --proxy socks5://127.0.0.1:3128 https://allowed.test/ 2>&1 >/dev/null)
expect_match "\(2\)" "$err" "a literal no rule names is refused with code 2"
expect_audit "as port_not_allowed" event=decision "method=SOCKS5 CONNECT" \
	host=10.200.1.2 port=443 decision=deny reason=port_not_allowed
hc=$(printf 'CONNECT 10.200.1.2:443 HTTP/1.1\r\nHost: 10.200.1.2:443\r\n\r\n' | raw 127.0.0.1 3128 --timeout 3)
expect_eq "403 port_not_allowed" "$(status_of "$hc") $(reason_of "$hc")" \
	"exactly as the same literal over HTTP CONNECT"

# The UNIX session socket speaks SOCKS5 as well.
px_relay "$WORLD_DIR/proxy.sock" 4128
out=$(curl_px --proxy socks5h://127.0.0.1:4128 https://allowed.test/unix)
expect_match "^GET /unix HTTP/1.1" "$out" "SOCKS5 over the UNIX listener"
expect_audit "audited with the peer's credentials" event=decision "method=SOCKS5 CONNECT" \
	host=allowed.test decision=allow pid~'^[0-9]'

# netcat-openbsd's -X 5, to the echo port.
if in_px nc -h 2>&1 | grep -q -- '-X proxy_protocol'; then
	out=$(printf 'hello\n' | in_px nc -N -w 3 -X 5 -x 127.0.0.1:3128 allowed.test 7)
	expect_eq hello "$out" "nc -X 5 relays both ways"
	expect_audit "nc's CONNECT is audited" event=decision "method=SOCKS5 CONNECT" \
		host=allowed.test port=7 decision=allow
	in_px nc -N -w 3 -X 5 -x 127.0.0.1:3128 deny.test 7 </dev/null >/dev/null 2>"$WORLD_DIR/nc.err"
	expect_ne 0 $? "nc -X 5 to a refused host fails"
	expect_audit "and is audited" event=decision "method=SOCKS5 CONNECT" host=deny.test port=7 \
		reason=host_not_allowed
else
	diag "netcat-openbsd is not installed: nc -X 5 not tried (contrib/install-deps.sh installs it)"
fi

# A raw client: every byte alone, greeting and request.
out=$(socks5 --split --send ping)
expect_eq "method=00 rep=00 data=ping" "$(echo $out)" "a greeting and request in one-byte pieces"
out=$(socks5 --atyp v6 --target fd00:200:1::2 --tport 7)
expect_eq "method=00 rep=02" "$(echo $out)" "an IPv6 literal no rule names: code 2"
expect_audit "audited as the bracketed literal" event=decision "method=SOCKS5 CONNECT" \
	host="[fd00:200:1::2]" port=7 reason=host_not_allowed

# Commands postern does not serve: 7, audited.
out=$(socks5 --cmd 2 --atyp v4 --target 0.0.0.0 --tport 0)
expect_eq "method=00 rep=07" "$(echo $out)" "BIND is refused with code 7"
expect_audit "BIND is audited" event=decision "method=SOCKS5 BIND" decision=deny reason=bad_request
out=$(socks5 --cmd 3 --atyp v4 --target 0.0.0.0 --tport 0)
expect_eq "method=00 rep=07" "$(echo $out)" "UDP ASSOCIATE is refused with code 7"
expect_audit "UDP ASSOCIATE is audited" event=decision "method=SOCKS5 UDP ASSOCIATE" decision=deny \
	reason=bad_request

# Upstream failures, mapped to their reply codes.
out=$(socks5 --target dead.test --tport 80)
expect_eq "method=00 rep=05" "$(echo $out)" "connection refused upstream: code 5"
expect_audit "audited as connect_failure" event=decision "method=SOCKS5 CONNECT" host=dead.test \
	reason=connect_failure
out=$(socks5 --target nope.test --tport 80)
expect_eq "method=00 rep=04" "$(echo $out)" "a name that does not resolve: code 4"
expect_audit "audited as dns_failure" event=decision host=nope.test reason=dns_failure

# Malformed: answered, audited, closed; the proxy keeps serving.
out=$(socks5 --methods 02)
expect_eq "method=ff" "$(echo $out)" "a greeting without method 00 is answered FF"
expect_audit "and audited" event=decision method=SOCKS5 decision=deny reason=bad_request \
	detail~"no method"
out=$(socks5 --ver 4)
expect_eq "method=00 rep=01" "$(echo $out)" "a request of another version: code 1"
expect_audit "audited" event=decision method=SOCKS5 reason=bad_request detail~"not version 5"
out=$(socks5 --atyp 7 --target abcdef)
expect_eq "method=00 rep=08" "$(echo $out)" "an unknown address type: code 8"
out=$(socks5 --target 'a..b' --tport 80)
expect_eq "method=00 rep=01" "$(echo $out)" "a malformed name: code 1"
expect_audit "audited" event=decision method=SOCKS5 reason=bad_request detail~"host name is malformed"
expect_eq 0 "$(dns_query_count 'a..b')" "no DNS query for it"
out=$(printf '\005\002' | raw 127.0.0.1 3128 --timeout 4 | od -An -tx1 | tr -d ' \n')
expect_eq "05ff" "$out" "a greeting cut short gets FF at header_timeout"
expect_audit "and is audited as a timeout" event=decision method=SOCKS5 reason=timeout
proxy_alive && ok "the proxy still serves HTTP" || fail "the proxy died"
out=$(socks5 --send again)
expect_eq "method=00 rep=00 data=again" "$(echo $out)" "and SOCKS5"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
