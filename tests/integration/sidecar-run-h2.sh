#!/bin/sh
# sidecar-run-h2.sh: inside `postern-sidecar run`, a request refused on an
# HTTP/2 stream of a terminated tunnel is told on the terminal like any
# other refusal (one "postern: refused ..." line, then the summary), and
# the streams that are allowed still go.  An h2 upstream (nghttpd, the
# world's certificate) behind a host a [secret] of -c FILE is bound to;
# curl --http2 in CMD, trusting the bundle the bridge exports.
. "$top_srcdir/tests/integration/sidecar-lib.sh"
for c in nghttpd curl; do
	command -v "$c" >/dev/null 2>&1 || skip "$c is not installed (Debian: nghttp2-server, curl)"
done
curl -V | grep -q '^Features:.* HTTP2' || skip "this curl has no HTTP/2"
sc_world_up
[ -x "$top_builddir/postern-bridge" ] || skip "postern-bridge is not built"
# Outside /tmp (run gives CMD fresh ones): the world's CA, for the engine.
CADIR=$(mktemp -d /var/lib/postern-run-h2.XXXXXX) || die "mktemp"
cp "$WORLD_CA" "$CADIR/ca.pem" && chmod 0644 "$CADIR/ca.pem" && chmod 0755 "$CADIR" ||
	die "cannot copy the CA"
world_cleanup_hook() { rm -rf "$CADIR"; }

docs="$WORLD_DIR/docs"
mkdir -p "$docs/v1" "$docs/v2"
echo "v1 ok" >"$docs/v1/ok"
echo "v2" >"$docs/v2/x"
ip netns exec "$WORLD_NS_UP" nghttpd -d "$docs" \
	-a "$WORLD_UP4" 8443 "$WORLD_KEY" "$WORLD_CERT" </dev/null >"$WORLD_DIR/nghttpd.log" 2>&1 &
in_up "$WORLD_PYTHON" -c '
import socket, sys, time
for i in range(100):
    try:
        socket.create_connection((sys.argv[1], 8443), timeout=1).close()
        break
    except OSError:
        time.sleep(0.05)
' "$WORLD_UP4"

cat >"$WORLD_DIR/run.ini" <<-INI
	[proxy]
	listen = unix:/run/pw-run-h2-$WORLD_ID.sock
	upstream_ca_file = $CADIR/ca.pem
	[defaults]
	allow_hosts = allowed.test:8443/v1/ private
	secrets = k
	[secret k]
	from_env = PX_TEST_KEY
	inject = allowed.test:8443 header x-api-key
INI

out=$(in_px env PX_TEST_KEY="tsk-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')" \
	"$SIDECAR" run -c "$WORLD_DIR/run.ini" -- sh -c '
	curl -sS --max-time 10 --http2 -o /dev/null -w "%{http_version} %{http_code}\n" \
		https://allowed.test:8443/v1/ok -o /dev/null https://allowed.test:8443/v2/x
	curl -sS --max-time 10 --http2 -o /dev/null -w "%{http_version} %{http_code}\n" \
		-H "Host: other.test:8443" https://allowed.test:8443/v1/front' 2>"$WORLD_DIR/err")
rc=$?
diag "stdout: $out"
diag "stderr: $(cat "$WORLD_DIR/err")"
expect_eq 0 $rc "the run exits 0"
expect_eq "2 200
2 403
2 421" "$out" "over HTTP/2: /v1/ok 200, /v2/x 403 (path rule), a fronted :authority 421"
expect_eq 1 "$(grep -c "^postern: refused GET allowed.test:8443 path /v2/x: path_not_allowed" "$WORLD_DIR/err")" \
	"the refused stream is told on the terminal"
expect_eq 1 "$(grep -c "^postern: refused GET allowed.test:8443 path /v1/front: misdirected_request" "$WORLD_DIR/err")" \
	"and so is the fronted one"
expect_match "^postern: refused 2 requests in this run:$" "$(cat "$WORLD_DIR/err")" \
	"and both are in the summary when CMD exits"
exit 0
