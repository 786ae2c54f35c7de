#!/bin/sh
# secret-heap: secrets and the tunnels a sandbox holds open do not starve
# TLS of its keys.  The values, and the leak scan's table of their
# encodings, are kept in the secure heap, where OpenSSL also makes the
# private key of every handshake and session CA.  Here the session has
# eight long secrets besides the one injected, whose table alone would
# fill the heap, and the sandbox holds 200 terminated tunnels open, each
# after one request.  The values take at most half of the secure heap
# (the rest go on the plain heap), and the tunnels share one table: 20 new
# tunnels still make their handshake and get the value injected; a
# reload that makes a new session's CA is taken; each held tunnel still
# answers; once they close, the secure heap is given back.
. "$top_srcdir/tests/integration/lib/world.sh"
WORLD_TIMEOUT=120
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

N=200
VALUE="tsk-$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')"
export PX_TEST_KEY="$VALUE"
# Eight values of 3000 characters, bound to a host no request here names.
long=""
for i in 1 2 3 4 5 6 7 8; do
	v=$(head -c 2250 /dev/urandom | base64 -w0 | tr '+/' '-_')
	export "PX_LONG$i=$v"
	long="$long
[secret l$i]
from_env = PX_LONG$i
placeholder_env = PX_L$i
inject = other.test header x-long-$i"
done
state="$WORLD_DIR/state"
mkdir -p "$state"
chmod 700 "$state"
conf="$WORLD_DIR/postern.ini"
# write_conf [MORE]: the config; MORE adds lines at its end.
write_conf() {
	{
		admin_proxy_section "upstream_ca_file = $WORLD_CA" "state_dir = $state"
		cat <<-EOF
			[defaults]
			allow_hosts = allowed.test private, other.test private
			secrets = k, l1, l2, l3, l4, l5, l6, l7, l8
			[secret k]
			from_env = PX_TEST_KEY
			inject = allowed.test header x-api-key
		EOF
		printf '%s\n' "$long"
		[ -z "${1:-}" ] || printf '%s\n' "$1"
	} >"$conf.tmp"
	mv "$conf.tmp" "$conf"
}
write_conf
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
CA="$state/ca/default.pem"
[ -s "$CA" ] || die "the session CA is not in $CA"
PH=$(in_px curl -sS --max-time 5 http://127.0.0.1:3128/.well-known/postern/session |
	sed -n 's/^env PX_TEST_KEY //p')
[ -n "$PH" ] || die "no placeholder"
base=$(status_get 's["memory"]["secure_heap_bytes"]')

in_px "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-tls/heldterm.py" 3128 allowed.test:443 \
	"$CA" "$PH" "$N" "$WORLD_DIR/ready" "$WORLD_DIR/go" >"$WORLD_DIR/held.out" 2>&1 &
hp=$!
i=0
while [ ! -e "$WORLD_DIR/ready" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
[ -e "$WORLD_DIR/ready" ] || fail "the $N tunnels were not all tried in 60 s"
expect_match "^held $N$" "$(cat "$WORLD_DIR/held.out")" "$N terminated tunnels held open, each answered 200"
sec=$(status_get 's["memory"]["secure_heap_bytes"]')
diag "secure heap: $base bytes before, $sec with $N tunnels held"
# Values stop at half of it; the rest of what it holds is OpenSSL's.
[ "$sec" -le 393216 ] && ok "the secure heap keeps room for OpenSSL's keys ($sec of 524288 bytes used)" ||
	fail "the secure heap holds $sec of 524288 bytes with $N tunnels held"
# The tunnels share their session's table: one a tunnel, with these long
# secrets, was some 0.7 MB each.  (No figure under the sanitizers: 0.)
heap=$(status_get 's["memory"]["heap_bytes"]')
[ "$heap" -le 104857600 ] && ok "the tunnels share one table of the secrets' encodings ($heap bytes of heap)" ||
	fail "$heap bytes of heap with $N tunnels held: more than 100 MB"

gen0=$(generation)
# A new session: its CA is made now, while the tunnels are held.
write_conf "[session extra]
listen = tcp:127.0.0.1:3129
allow_hosts = other.test private
secrets = k"
out=$(admin_curl -X POST http://postern/reload)
expect_match '"taken":true' "$out" "a reload that makes a new session's CA is taken"
[ -s "$state/ca/extra.pem" ] && ok "the new session's CA is made" || fail "no CA for the new session"
# The watch on the file may have taken it too, before or after the POST.
[ "$(generation)" -gt "$gen0" ] && ok "a new generation is in force" || fail "the generation stays $gen0"
expect_match '"extra"' "$(status_get '[x["name"] for x in s["sessions"]]')" "with the new session"

touch "$WORLD_DIR/go"
wait "$hp"
out=$(cat "$WORLD_DIR/held.out")
diag "$out"
expect_match "^more 20$" "$out" "20 new tunnels make their handshake and get 200 while $N are held"
expect_match "^again $N$" "$out" "each held tunnel answers a second request"
expect_eq "$N" "$(upstream_count "target=/held" "head~(?mi)^x-api-key: $VALUE\r\$")" \
	"the upstream got the value on each held tunnel's first request"
expect_eq 20 "$(upstream_count "target=/more" "head~(?mi)^x-api-key: $VALUE\r\$")" \
	"and on each new tunnel's"
expect_eq "$N" "$(upstream_count "target=/again" "head~(?mi)^x-api-key: $VALUE\r\$")" \
	"and on each held tunnel's second request"
expect_eq 0 "$(grep -c "malloc failure" "$WORLD_DIR/proxy.out")" "the proxy logged no OpenSSL allocation failure"

# held_gone: the secure heap is back to what it held before the tunnels,
# and the new session's CA.
held_gone() { [ "$(status_get 's["memory"]["secure_heap_bytes"]')" -le $((base + 4096)) ] && echo 1; }
world__poll held_gone && ok "once the tunnels close, the secure heap is given back" ||
	fail "the secure heap holds $(status_get 's["memory"]["secure_heap_bytes"]') bytes, $base before"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
