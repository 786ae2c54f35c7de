#!/bin/sh
# secret-encoded-h2: the leak scan on HTTP/2 streams in a terminated
# tunnel.  An h2 upstream (nghttpd) on allowed.test:8443, which the session
# inspects and no secret is bound to; curl --http2 through the proxy.  A
# placeholder hex-encoded in a header is refused (403 secret_misdirected);
# one base64'd in a POST body resets the stream before its DATA goes, with
# a decision line naming the body and the encoding; a canary in a body
# does the same with an alert line and postern_canary_total; a body with
# neither goes.
. "$top_srcdir/tests/integration/lib/world.sh"
for c in nghttpd curl; do
	command -v "$c" >/dev/null 2>&1 || skip "$c is not installed (Debian: nghttp2-server, curl)"
done
curl -V | grep -q '^Features:.* HTTP2' || skip "this curl has no HTTP/2"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

export PX_TEST_KEY="tsk-$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')"
state="$WORLD_DIR/state"
mkdir -p "$state"
chmod 700 "$state"
docs="$WORLD_DIR/docs"
mkdir -p "$docs"
for f in up h body canary; do echo "h2 answer" >"$docs/$f"; done
H2LOG="$WORLD_DIR/nghttpd.log"
ip netns exec "$WORLD_NS_UP" nghttpd -v -d "$docs" \
	-a "$WORLD_UP4" 8443 "$WORLD_KEY" "$WORLD_CERT" </dev/null >"$H2LOG" 2>&1 &
conf="$WORLD_DIR/postern.ini"
{
	admin_proxy_section "upstream_ca_file = $WORLD_CA" "state_dir = $state"
	cat <<-EOF
		[defaults]
		allow_hosts = allowed.test private, allowed.test:8443 private inspect
		secrets = k
		canaries = DECOY_KEY
		[secret k]
		from_env = PX_TEST_KEY
		inject = allowed.test header x-api-key
	EOF
} >"$conf"
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
in_up "$WORLD_PYTHON" -c '
import socket, sys, time
for i in range(100):
    try:
        socket.create_connection((sys.argv[1], 8443), timeout=1).close()
        break
    except OSError:
        time.sleep(0.05)
' "$WORLD_UP4"
CA="$state/ca/default.pem"
sess=$(in_px curl -sS --max-time 5 http://127.0.0.1:3128/.well-known/postern/session)
PH=$(printf '%s\n' "$sess" | sed -n 's/^env PX_TEST_KEY //p')
CANARY=$(printf '%s\n' "$sess" | sed -n 's/^env DECOY_KEY //p')
[ -n "$PH" ] && [ -n "$CANARY" ] || die "no placeholder or canary"
h2c() { in_px curl -sS --max-time 20 --http2 -x http://127.0.0.1:3128 --cacert "$CA" "$@"; }
b64() { printf 'xy%s' "$1" | base64 -w0; }

out=$(h2c -o /dev/null -w '%{http_version} %{http_code}\n' https://allowed.test:8443/up)
expect_eq "2 200" "$out" "HTTP/2 through the inspected tunnel: 200"
out=$(h2c -o /dev/null -w '%{http_version} %{http_code}\n' --data-binary "plain=1" https://allowed.test:8443/up)
expect_match "^2 [1-5]" "$out" "a POST body with no secret goes (the upstream answers)"

hex=$(printf '%s' "$PH" | od -An -tx1 | tr -d ' \n')
out=$(h2c -o /dev/null -w '%{http_code}\n' -H "x-note: $hex" https://allowed.test:8443/h)
expect_eq 403 "$out" "a hex placeholder in a header of an h2 stream: 403"
expect_audit "audited: hex, in the header x-note" event=decision reason=secret_misdirected \
	detail~"\\(hex, in the header x-note\\)"

out=$(h2c -o /dev/null -w '%{http_code}\n' --data-binary "d=$(b64 "$PH")" https://allowed.test:8443/body 2>&1)
expect_no_match "^200$" "$out" "a base64 placeholder in an h2 body: the stream is reset"
expect_audit "audited: the placeholder, base64, in the body" event=decision reason=secret_misdirected \
	detail~"placeholder of secret k \\(base64, in the body\\)"
expect_audit "the stream's line says secret_misdirected" event=request proto=h2 path=/body \
	reason=secret_misdirected

out=$(h2c -o /dev/null -w '%{http_code}\n' --data-binary "k=$CANARY" https://allowed.test:8443/canary 2>&1)
expect_no_match "^200$" "$out" "a canary in an h2 body: the stream is reset"
expect_audit "an alert line" event=alert kind=canary name=DECOY_KEY where=body encoding=raw
expect_eq 1 "$(metrics_get postern_canary_total session=default name=DECOY_KEY)" \
	"postern_canary_total counts it"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
