#!/bin/sh
# proxy-audit-once: every request gets one decision line, and each cause of
# a refusal its own reason: an allowed request that then fails upstream is
# told in the close line (why=), not by a second, contradicting decision;
# an upstream that answers with a malformed head, or closes without
# answering, is bad_upstream_response (not connect_failure, which is a
# connection that could not be made); a tunnel cut by the SNI check is one
# deny line, not an allow followed by a deny.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

# Two upstreams of our own on the upstream host: one answers garbage, one
# reads the request and closes without a byte.
in_up "$WORLD_PYTHON" -c '
import socket, sys, threading
def serve(port, answer):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("'"$WORLD_UP4"'", port))
    s.listen(8)
    while True:
        c, _ = s.accept()
        try:
            c.recv(65536)
            if answer:
                c.sendall(answer)
        finally:
            c.close()
threading.Thread(target=serve, args=(8097, b"NOT HTTP AT ALL\r\n\r\n"), daemon=True).start()
serve(8098, b"")
' &
sleep 0.3

conf=$(proxy_conf "[defaults]" "allow_hosts = allowed.test private" \
	"allow_hosts = allowed.test:8097 private, allowed.test:8098 private")
proxy_start "$conf" || die "no proxy"

expect_eq 200 "$(curl_status -x http://127.0.0.1:3128 http://allowed.test/once)" "an allowed request is answered"
expect_audit "its close is logged" event=close path=/once
expect_eq 1 "$(audit_count event=decision path=/once)" "an allowed request has one decision line"

out=$(printf 'GET http://allowed.test:8097/garbage HTTP/1.1\r\nHost: allowed.test:8097\r\n\r\n' | raw 127.0.0.1 3128 --timeout 5)
expect_eq "502 bad_upstream_response" "$(status_of "$out") $(reason_of "$out")" \
	"an upstream that answers garbage: 502 bad_upstream_response"
expect_audit "the failure is in the close line" event=close path=/garbage why=bad_upstream_response
expect_eq 1 "$(audit_count event=decision path=/garbage)" "one decision line for it"
expect_eq 1 "$(audit_count event=decision path=/garbage decision=allow)" "and that line is the allow"

out=$(printf 'GET http://allowed.test:8098/silent HTTP/1.1\r\nHost: allowed.test:8098\r\n\r\n' | raw 127.0.0.1 3128 --timeout 5)
expect_eq "502 bad_upstream_response" "$(status_of "$out") $(reason_of "$out")" \
	"an upstream that closes without answering: 502 bad_upstream_response"
expect_eq 1 "$(audit_count event=decision path=/silent)" "one decision line for it"

out=$(tls allowed.test:443 other.test --path /sni)
expect_match "^CLOSED" "$out" "a tunnel whose SNI names another host is cut"
expect_audit "the cut is logged" event=decision reason=sni_mismatch sni=other.test
expect_eq 1 "$(audit_count event=decision host=allowed.test port=443)" \
	"the cut tunnel has one decision line: the deny"
out=$(tls allowed.test:443 allowed.test --path /sniok)
expect_match "^sni=allowed\.test$" "$out" "a matching SNI passes"
expect_audit "its allow names the server_name" event=decision host=allowed.test port=443 \
	decision=allow sni=allowed.test
expect_eq 2 "$(audit_count event=decision host=allowed.test port=443)" "one decision line per tunnel"

proxy_alive && ok "the proxy still serves" || fail "the proxy died"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
