#!/bin/sh
# tls-sessions: each session terminates with its own CA.  Two sessions bind
# the same host: a client of one session trusts only its own session's CA,
# so the other session's leaf is refused by the client, and each session's
# requests carry its own placeholder's secret.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up

export PX_KEY_A="tska-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
export PX_KEY_B="tskb-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
state="$WORLD_DIR/state"
mkdir -p "$state"
chmod 700 "$state"
conf="$WORLD_DIR/postern.ini"
cat >"$conf" <<EOF
[proxy]
log = $PROXY_LOG
dns_servers = $WORLD_DNS
upstream_ca_file = $WORLD_CA
state_dir = $state
[session a]
listen = tcp:127.0.0.1:3128
allow_hosts = allowed.test private
secrets = ka
[session b]
listen = tcp:127.0.0.1:3129
allow_hosts = allowed.test private
secrets = kb
[secret ka]
from_env = PX_KEY_A
inject = allowed.test header x-api-key
[secret kb]
from_env = PX_KEY_B
inject = allowed.test header x-api-key
EOF
proxy_start "$conf" || die "no proxy"
[ -s "$state/ca/a.pem" ] && [ -s "$state/ca/b.pem" ] || die "no session CAs in $state/ca"
expect_ne "$(cat "$state/ca/a.pem")" "$(cat "$state/ca/b.pem")" "the two sessions have two CAs"

get() { # PORT CA PATH
	in_px curl -sS --max-time 10 -x "http://127.0.0.1:$1" --cacert "$2" "https://allowed.test$3" 2>&1
}
out=$(get 3128 "$state/ca/a.pem" /a)
expect_match "^x-api-key: $PX_KEY_A$" "$out" "session a, with a's CA: a's secret is put on"
out=$(get 3129 "$state/ca/b.pem" /b)
expect_match "^x-api-key: $PX_KEY_B$" "$out" "session b, with b's CA: b's secret is put on"
out=$(get 3129 "$state/ca/a.pem" /cross)
expect_no_match "^x-api-key:" "$out" "a client trusting a's CA refuses session b's leaf"
expect_match "SSL certificate problem|unable to get local issuer" "$out" "(curl says the certificate is not trusted)"
expect_eq 0 "$(upstream_count target=/cross)" "nothing reached upstream over the refused handshake"
expect_audit "the failed handshake is in the close line" session=b why="client TLS handshake failed"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
