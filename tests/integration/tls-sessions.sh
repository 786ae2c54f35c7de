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

# Each session's placeholder, from its own listener's session request.
ph() { in_px curl -sS --max-time 5 "http://127.0.0.1:$1/.well-known/postern/session" | sed -n "s/^env $2 //p"; }
PH_A=$(ph 3128 PX_KEY_A)
PH_B=$(ph 3129 PX_KEY_B)
[ -n "$PH_A" ] && [ -n "$PH_B" ] || die "no placeholders"
get() { # PORT CA PATH PLACEHOLDER
	in_px curl -sS --max-time 10 -x "http://127.0.0.1:$1" --cacert "$2" -H "x-api-key: $4" \
		"https://allowed.test$3" 2>&1
}
# What the upstream received, from its own log.
out=$(get 3128 "$state/ca/a.pem" /a "$PH_A")
expect_upstream "session a, with a's CA: a's secret is put on" target=/a "head~(?m)^x-api-key: $PX_KEY_A\r$"
out=$(get 3129 "$state/ca/b.pem" /b "$PH_B")
expect_upstream "session b, with b's CA: b's secret is put on" target=/b "head~(?m)^x-api-key: $PX_KEY_B\r$"
out=$(get 3129 "$state/ca/a.pem" /cross "$PH_B")
expect_no_match "^x-api-key:" "$out" "a client trusting a's CA refuses session b's leaf"
expect_match "SSL certificate problem|unable to get local issuer" "$out" "(curl says the certificate is not trusted)"
expect_eq 0 "$(upstream_count target=/cross)" "nothing reached upstream over the refused handshake"
expect_audit "the failed handshake is in the close line" session=b why="client TLS handshake failed"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
