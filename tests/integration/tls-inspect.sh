#!/bin/sh
# tls-inspect: allow rules that ask for inspection and rules narrowed by
# method: TLS is terminated only for hosts a secret is bound to or a rule
# asks to inspect, and rules may narrow those by method and path.  No secret at all: a host whose rule
# says "inspect" is terminated with a leaf of the session's CA (a client
# trusting only the world's CA fails, one trusting the session CA gets
# through) and nothing is put on its requests; each request inside is
# judged: a fronted Host is 421, a path outside the rule 403
# path_not_allowed, a method outside methods= 403 method_not_allowed, over
# HTTP/1.1 and HTTP/2 (nghttpd), each with its audit line; a host without
# the flag stays opaque (the world's own certificate reaches the client);
# a methods= rule never admits an opaque CONNECT and narrows plain HTTP;
# --check says which hosts are terminated and why; a reload that adds an
# inspected host adds a CA for it.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

state="$WORLD_DIR/state"
mkdir -p "$state"
chmod 700 "$state"

# An h2 upstream on allowed.test:8443 when nghttpd is there.
HAVE_H2=
if command -v nghttpd >/dev/null 2>&1 && curl -V | grep -q '^Features:.* HTTP2'; then
	HAVE_H2=1
	docs="$WORLD_DIR/docs"
	mkdir -p "$docs"
	echo "h2 get" >"$docs/get"
	H2LOG="$WORLD_DIR/nghttpd.log"
	ip netns exec "$WORLD_NS_UP" nghttpd -v -d "$docs" \
		-a "$WORLD_UP4" 8443 "$WORLD_KEY" "$WORLD_CERT" </dev/null >"$H2LOG" 2>&1 &
else
	diag "nghttpd or curl's HTTP/2 is missing: the HTTP/2 part is not tried"
fi

conf="$WORLD_DIR/postern.ini"
# write_conf [EXTRA-RULE]: the config, with one more allow_hosts line.
write_conf() {
	{
		admin_proxy_section "upstream_ca_file = $WORLD_CA" "state_dir = $state"
		cat <<-EOF
			[defaults]
			allow_hosts = allowed.test inspect private
			allow_hosts = https://api.example.test/v1/ inspect private
			allow_hosts = wild.test methods=GET,HEAD inspect private
			allow_hosts = allowed.test:8443 inspect methods=GET,HEAD private
			allow_hosts = other.test private
			allow_hosts = b.c.wild.test methods=GET private
			allow_hosts = http://a.wild.test methods=GET,HEAD private
			${1:-}
		EOF
	} >"$conf.tmp"
	mv "$conf.tmp" "$conf"
}
write_conf

# --check: which hosts are terminated, and why.
out=$("${POSTERN_PROXY:-$top_builddir/postern-proxy}" --check -c "$conf" 2>&1)
# line_of ERE: the config's line number of the first line matching ERE.
line_of() { grep -En "$1" "$conf" | head -n 1 | cut -d: -f1; }
expect_match "^  terminates TLS allowed\.test:443 \(inspect, $conf:$(line_of "^allow_hosts = allowed.test inspect")\)$" "$out" \
	"--check: allowed.test:443 terminated, by the inspect rule at its line"
expect_match "^  terminates TLS api\.example\.test:443 \(inspect, $conf:$(line_of "^allow_hosts = https://api")\)$" "$out" \
	"--check: api.example.test:443 (an https:// URL with a path and inspect)"
expect_match "^  terminates TLS allowed\.test:8443 \(inspect, $conf:$(line_of "^allow_hosts = allowed.test:8443")\)$" "$out" \
	"--check: allowed.test:8443, the rule's own port"
expect_no_match "terminates TLS (other|b\.c\.wild|a\.wild)\.test" "$out" \
	"--check: hosts without inspect are not terminated"

proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
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
fi

CA="$state/ca/default.pem"
[ -s "$CA" ] || die "no session CA in $CA, though only inspect rules ask for termination"
sess=$(in_px curl -sS --max-time 5 http://127.0.0.1:3128/.well-known/postern/session)
expect_no_match "^env " "$sess" "no secret, so no placeholder for the sandbox"

tc() { in_px curl -sS --max-time 10 -x http://127.0.0.1:3128 --cacert "$CA" "$@"; }
# tstatus ARGS...: the status of a request through the proxy, trusting the
# session CA.
tstatus() { in_px curl -sS -o /dev/null -w '%{http_code}' --max-time 10 -x http://127.0.0.1:3128 \
	--cacert "$CA" "$@"; }

# 1. An inspected host is terminated: the client sees the session CA's
# leaf, and the request reaches upstream as the client sent it.
out=$(tc -H "x-api-key: client-own-value" https://allowed.test/insp?q=1)
expect_match "^GET /insp\?q=1 HTTP/1.1$" "$out" "inspect: the request reaches upstream through the session CA"
expect_match "^x-api-key: client-own-value$" "$out" "upstream sees the client's own header: nothing injected"
expect_match "^sni=allowed\.test$" "$out" "the proxy's upstream TLS carries SNI allowed.test"
in_px curl -sS -o /dev/null --max-time 10 -x http://127.0.0.1:3128 --cacert "$WORLD_CA" \
	https://allowed.test/insp2 2>"$WORLD_DIR/wrongca.err"
rc=$?
expect_eq 60 "$rc" "a client trusting only the world's CA does not accept the leaf (curl 60)"
leaf=$(in_px "$WORLD_PYTHON" -c '
import socket, ssl, sys
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(b"CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n")
buf = b""
while b"\r\n\r\n" not in buf:
    buf += s.recv(4096)
ctx = ssl.create_default_context(cafile=sys.argv[1])
t = ctx.wrap_socket(s, server_hostname="allowed.test")
c = t.getpeercert()
print("issuer " + dict(x[0] for x in c["issuer"])["commonName"])
' "$CA" 2>&1)
expect_match "^issuer postern default$" "$leaf" "the leaf's issuer is the session CA (postern default)"
expect_audit "the CONNECT is allowed and terminated" event=decision method=CONNECT host=allowed.test \
	decision=allow detail="TLS terminated"
expect_audit "the request inside has its own line, with its decision" event=request method=GET \
	host=allowed.test path=/insp tls=terminated status=200 decision=allow
out=$(tc https://allowed.test/a https://allowed.test/b)
expect_eq 1 "$(audit_count event=request host=allowed.test path=/a status=200)" \
	"keep-alive: one request line for the first request"
expect_audit "and one for the second" event=request host=allowed.test path=/b status=200

# A fronted Host on the inspected host: 421.
out=$(tc -i -H "Host: other.test" https://allowed.test/front)
expect_match "^HTTP/1.1 421 " "$out" "a Host naming another host in an inspected tunnel: 421"
expect_eq 0 "$(upstream_count target=/front)" "the fronted request reached no upstream"

# 2. A path rule inside TLS: https://api.example.test/v1/ inspect.
expect_eq 200 "$(tstatus https://api.example.test/v1/ok)" "a path under the rule's prefix: 200"
out=$(tc -i https://api.example.test/v2/x)
expect_match "^HTTP/1.1 403 " "$out" "a path outside the prefix, inside TLS: 403"
expect_match "^X-Postern-Reason: path_not_allowed" "$out" "reason path_not_allowed"
expect_audit "path_not_allowed audited inside TLS" path=/v2/x reason=path_not_allowed tls=terminated
expect_match "^40[03]$" "$(tstatus --path-as-is https://api.example.test/v1/%2e%2e/v2/y)" \
	"an encoded dot segment does not pass the prefix"
expect_eq 0 "$(upstream_count target~^/v2)" "no refused path reached upstream"

# 3. A method rule inside TLS (HTTP/1.1): GET and HEAD pass, POST does not.
expect_eq 200 "$(tstatus https://wild.test/m)" "methods=GET,HEAD: GET inside TLS, 200"
expect_eq 200 "$(tstatus -I https://wild.test/m)" "HEAD inside TLS, 200"
out=$(tc -i -X POST -d 'x=1' https://wild.test/post)
expect_match "^HTTP/1.1 403 " "$out" "POST inside TLS: 403"
expect_match "^X-Postern-Reason: method_not_allowed" "$out" "reason method_not_allowed"
expect_match "admits only GET,HEAD" "$out" "the body names the methods the rule admits"
expect_match "^To allow it, an admin can add the method to methods= of allow_hosts = wild\.test" "$out" \
	"and which rule's methods= to extend"
expect_audit "method_not_allowed audited with the method" event=decision method=POST host=wild.test \
	path=/post reason=method_not_allowed tls=terminated
expect_eq 0 "$(upstream_count target=/post)" "the refused POST reached no upstream"
out=$(tc -i -H "X-HTTP-Method-Override: DELETE" https://wild.test/ovr)
expect_match "^X-Postern-Reason: method_not_allowed" "$out" \
	"a GET carrying X-HTTP-Method-Override is refused under methods="
expect_match "can override the method" "$out" "and the body says why"
expect_eq 0 "$(upstream_count target=/ovr)" "it reached no upstream"
expect_eq 200 "$(tstatus -H "X-HTTP-Method-Override: DELETE" https://allowed.test/ovr2)" \
	"on a host whose rule has no methods= the header passes"
# Each request is judged by its own method (a refusal closes the
# HTTP/1.1 connection; the next one opens another tunnel).
out=$(in_px curl -sS --max-time 10 -x http://127.0.0.1:3128 --cacert "$CA" \
	-w '%{http_code}\n' -o /dev/null -X DELETE https://wild.test/del1 --next \
	-x http://127.0.0.1:3128 --cacert "$CA" -w '%{http_code}\n' -o /dev/null \
	https://wild.test/get2)
expect_eq "403
200" "$out" "DELETE 403, then GET 200"

# 4. HTTP/2 inside an inspected tunnel: methods per stream.
if [ -n "$HAVE_H2" ]; then
	h2c() { in_px curl -sS --max-time 20 --http2 -x http://127.0.0.1:3128 --cacert "$CA" "$@"; }
	out=$(h2c -o /dev/null -w '%{http_version} %{http_code}\n' https://allowed.test:8443/get)
	expect_eq "2 200" "$out" "HTTP/2 GET on an inspected host: h2, 200"
	out=$(h2c -i -X POST -d 'x=1' https://allowed.test:8443/get)
	expect_match "^HTTP/2 403" "$out" "HTTP/2 POST: 403"
	expect_match "^x-postern-reason: method_not_allowed" "$out" "reason method_not_allowed over h2"
	expect_audit "the stream's refusal audited" event=decision method=POST port=8443 \
		reason=method_not_allowed tls=terminated
	expect_no_match "recv \(stream_id=[0-9]+(, sensitive)?\) :method: POST" "$(cat "$H2LOG")" \
		"the refused POST reached no h2 upstream"
	out=$(h2c -i -H "x-http-method: DELETE" https://allowed.test:8443/get)
	expect_match "^x-postern-reason: method_not_allowed" "$out" \
		"HTTP/2: a method-override header is refused under methods="
fi

# 5. A host without "inspect" stays opaque: the world's own certificate.
out=$(in_px curl -sS --max-time 10 -x http://127.0.0.1:3128 --cacert "$WORLD_CA" https://other.test/opaque)
expect_match "^sni=other\.test$" "$out" "other.test is tunnelled with the world's certificate"
in_px curl -sS -o /dev/null --max-time 10 -x http://127.0.0.1:3128 --cacert "$CA" \
	https://other.test/opaque2 2>/dev/null
expect_eq 60 "$?" "and a client trusting only the session CA refuses it (curl 60)"
expect_no_audit "no request line for an opaque tunnel" event=request host=other.test

# 6. A methods= rule never admits an opaque CONNECT...
expect_eq 403 "$(curl_status -x http://127.0.0.1:3128 https://b.c.wild.test/)" \
	"a methods= rule without inspect: its CONNECT is refused (opaque)"
expect_audit "refused as host_not_allowed, the detail pointing to inspect" event=decision \
	method=CONNECT host=b.c.wild.test reason=host_not_allowed detail~inspect
# ... and narrows plain HTTP.
expect_eq 200 "$(curl_status -x http://127.0.0.1:3128 http://a.wild.test/pg)" \
	"plain HTTP under methods=GET,HEAD: GET 200"
out=$(curl_px -i -x http://127.0.0.1:3128 -X PUT -d 'x' http://a.wild.test/pp)
expect_match "^HTTP/1.1 403 " "$out" "plain HTTP PUT: 403"
expect_match "^X-Postern-Reason: method_not_allowed" "$out" "plain HTTP: reason method_not_allowed"
expect_eq 0 "$(upstream_count target=/pp)" "the refused PUT reached no upstream"
out=$(curl_px -i -x http://127.0.0.1:3128 -H "X-Method-Override: PUT" http://a.wild.test/po)
expect_match "^X-Postern-Reason: method_not_allowed" "$out" \
	"plain HTTP: a method-override header is refused under methods="

expect_no_audit "no request line names a secret: nothing was injected" event=request secret~.

# 7. A reload that makes other.test inspected adds a CA for it.
write_conf "allow_hosts = other.test inspect private"
proxy_reload
wait_generation 2 3 >/dev/null || fail "the reload was not taken"
CA2="$state/ca/default+2.pem"
[ -s "$CA2" ] || fail "no second CA in $CA2 after the reload"
out=$(in_px curl -sS --max-time 10 -x http://127.0.0.1:3128 --cacert "$CA2" https://other.test/after)
expect_match "^GET /after HTTP/1.1$" "$out" "after the reload other.test is terminated with the new CA"
expect_audit "and its request has a line" event=request host=other.test path=/after status=200

proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
