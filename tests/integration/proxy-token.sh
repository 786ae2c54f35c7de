#!/bin/sh
# proxy-token: one auth=token TCP listener serves two sessions, each chosen
# by its token (Proxy-Authorization: Basic NAME:TOKEN, Bearer, or the
# bridge's POSTERN-TOKEN preface), each with its own allow list.  No
# credential and a wrong one are 407 with Proxy-Authenticate, audited
# without the token; ten wrong ones from one address block it (429, the
# right token too); the origin never sees Proxy-Authorization; a reload
# rotates a token; a keep-alive connection stays its first session's.
# Then postern-bridge --connect tcp:... --token-file in a namespace whose
# only way out is that listener.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up --agent
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"
. "$top_srcdir/tests/integration/lib-admin/admin.sh"
command -v curl >/dev/null || skip "curl is not installed"

TA=alice-0123456789abcdefghijklmnopqrstuvwxyz
TB=bob-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-xyz
TA2=alice-rotated-0123456789abcdefghijklmnopqrstu
umask 077
printf '%s\n' "$TA" >"$WORLD_DIR/alice.token"
printf '%s\n' "$TB" >"$WORLD_DIR/bob.token"

# The agent namespace reaches px over its own veth, and nothing else: px
# does not forward, as a pod whose NetworkPolicy lets it reach the proxy
# only.
in_px ip link add pw-tok type veth peer name pw-tok netns "$WORLD_NS_AGENT" || die "veth"
in_px ip addr add 10.200.3.1/24 dev pw-tok && in_px ip link set pw-tok up || die "veth px"
in_agent ip addr add 10.200.3.2/24 dev pw-tok && in_agent ip link set pw-tok up || die "veth agent"
in_px sh -c 'echo 0 > /proc/sys/net/ipv4/ip_forward'

conf="$WORLD_DIR/postern.ini"
cat >"$conf" <<EOF
[proxy]
listen = tcp:127.0.0.1:3128 auth=token
listen = tcp:10.200.3.1:3129 auth=token
admin = unix:$ADMIN_SOCK
log = $PROXY_LOG
dns_servers = $WORLD_DNS
[session alice]
token_file = $WORLD_DIR/alice.token
allow_hosts = allowed.test private
[session bob]
token_file = $WORLD_DIR/bob.token
allow_hosts = other.test private
EOF
proxy_start "$conf" || die "no proxy"

st() { curl_status -x "http://$1@127.0.0.1:3128" "$2"; }

expect_eq 200 "$(st "alice:$TA" http://allowed.test/hello.txt)" "alice's token reaches alice's host"
expect_eq 403 "$(st "alice:$TA" http://other.test/hello.txt)" "alice's token: bob's host is 403"
expect_eq 200 "$(st "bob:$TB" http://other.test/hello.txt)" "bob's token reaches bob's host"
expect_eq 403 "$(st "bob:$TB" http://allowed.test/hello.txt)" "bob's token: alice's host is 403"
expect_eq 200 "$(st "alice:$TA" https://allowed.test/hello.txt)" "alice's CONNECT, authenticated once"
expect_eq 403 "$(st "bob:$TB" https://allowed.test/hello.txt)" "bob's CONNECT to alice's host is 403"
expect_audit "alice's allow is audited as alice's" event=decision decision=allow session=alice host=allowed.test
expect_audit "bob's refusal is audited as bob's" event=decision decision=deny session=bob host=allowed.test
expect_eq 200 "$(curl_status -x http://127.0.0.1:3128 --proxy-header "Proxy-Authorization: Bearer $TB" \
	http://other.test/hello.txt)" "Bearer TOKEN alone chooses bob"

# The origin never sees the credential.
expect_eq 0 "$(grep -ci 'proxy-authorization' "$WORLD_UPSTREAM_LOG")" "no Proxy-Authorization reached the origin"
expect_eq 0 "$(grep -c "$TA\|$TB" "$WORLD_UPSTREAM_LOG")" "no token reached the origin"

# No credential, a wrong one.
out=$(printf 'GET http://allowed.test/hello.txt HTTP/1.1\r\nHost: allowed.test\r\n\r\n' | raw 127.0.0.1 3128 --timeout 5)
expect_eq 407 "$(status_of "$out")" "no credential: 407"
expect_eq proxy_auth_required "$(reason_of "$out")" "no credential: proxy_auth_required"
expect_match 'Proxy-Authenticate: Basic realm="postern"' "$out" "the 407 names the Basic scheme"
expect_audit "no credential is audited" event=decision decision=deny reason=proxy_auth_required \
	session="(unauthenticated)" peer~^127.0.0.1:
bad=$(printf 'alice:wrong-token-0123456789abcdefghijklmnopq' | base64 -w0)
out=$(printf 'GET http://allowed.test/hello.txt HTTP/1.1\r\nHost: allowed.test\r\nProxy-Authorization: Basic %s\r\n\r\n' "$bad" |
	raw 127.0.0.1 3128 --timeout 5)
expect_eq 407 "$(status_of "$out")" "a wrong token: 407"
expect_eq proxy_auth_failed "$(reason_of "$out")" "a wrong token: proxy_auth_failed"
expect_audit "a wrong token is audited with the name tried" event=decision reason=proxy_auth_failed \
	detail~'"alice"'
expect_eq 0 "$(grep -c 'wrong-token' "$PROXY_LOG" "$WORLD_DIR/proxy.out" | awk -F: '{s+=$2} END {print s}')" \
	"the wrong token is in no log"
expect_eq 0 "$(grep -c "$TA\|$TB" "$PROXY_LOG" "$WORLD_DIR/proxy.out" | awk -F: '{s+=$2} END {print s}')" \
	"no right token is in any log"
expect_eq 407 "$(st "carol:$TA" http://allowed.test/hello.txt)" "alice's token under another name: 407"
expect_eq 407 "$(st "default:$TA" http://allowed.test/hello.txt)" "the default session has no token"
admin_get /metrics >"$WORLD_DIR/metrics"
expect_match 'postern_decisions_total\{session="\(unauthenticated\)",reason="proxy_auth_failed"\} [1-9]' \
	"$(cat "$WORLD_DIR/metrics")" "/metrics counts the failures"

# Keep-alive: each request carries the credential; the connection stays
# alice's.
ba=$(printf 'alice:%s' "$TA" | base64 -w0)
bb=$(printf 'bob:%s' "$TB" | base64 -w0)
out=$({
	printf 'GET http://allowed.test/hello.txt HTTP/1.1\r\nHost: allowed.test\r\nProxy-Authorization: Basic %s\r\n\r\n' "$ba"
	printf 'GET http://other.test/hello.txt HTTP/1.1\r\nHost: other.test\r\nProxy-Authorization: Basic %s\r\n\r\n' "$bb"
} | raw 127.0.0.1 3128 --timeout 5 | tr -d '\r')
expect_eq "200 407" "$(printf '%s\n' "$out" | sed -n 's/^HTTP\/1\.1 \([0-9]*\) .*/\1/p' | tr '\n' ' ' | sed 's/ $//')" \
	"keep-alive: a second request naming bob on alice's connection is refused"
out=$({
	printf 'GET http://allowed.test/hello.txt HTTP/1.1\r\nHost: allowed.test\r\nProxy-Authorization: Basic %s\r\n\r\n' "$ba"
	printf 'GET http://allowed.test/hello.txt HTTP/1.1\r\nHost: allowed.test\r\n\r\n'
} | raw 127.0.0.1 3128 --timeout 5 | tr -d '\r')
expect_eq "200 407" "$(printf '%s\n' "$out" | sed -n 's/^HTTP\/1\.1 \([0-9]*\) .*/\1/p' | tr '\n' ' ' | sed 's/ $//')" \
	"keep-alive: a second request without the credential is refused"

# The preface, as the bridge sends it: then no header is needed, and SOCKS5
# works after it; SOCKS5 without it is refused.
out=$(printf 'POSTERN-TOKEN %s\r\nGET http://other.test/hello.txt HTTP/1.1\r\nHost: other.test\r\nConnection: close\r\n\r\n' "$TB" |
	raw 127.0.0.1 3128 --timeout 5)
expect_eq 200 "$(status_of "$out")" "the POSTERN-TOKEN preface chooses bob"
out=$(printf 'POSTERN-TOKEN bob:%s\nGET http://allowed.test/hello.txt HTTP/1.1\r\nHost: allowed.test\r\n\r\n' "$TB" |
	raw 127.0.0.1 3128 --timeout 5)
expect_eq 403 "$(status_of "$out")" "the preface NAME:TOKEN is bob's: alice's host is 403"
out=$(printf '\005\001\000' | raw 127.0.0.1 3128 --timeout 5 | od -An -tx1 | tr -d ' \n')
expect_eq 05ff "$out" "SOCKS5 without the preface: no acceptable method"
expect_audit "SOCKS5 without the preface is audited" event=decision reason=proxy_auth_required method=SOCKS5

# Rotation: the file rewritten, a reload; the old token is refused.
printf '%s\n' "$TA2" >"$WORLD_DIR/alice.token"
proxy_reload
i=0
while [ "$(st "alice:$TA2" http://allowed.test/hello.txt)" != 200 ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
expect_eq 200 "$(st "alice:$TA2" http://allowed.test/hello.txt)" "after a reload, alice's new token works"
expect_eq 407 "$(st "alice:$TA" http://allowed.test/hello.txt)" "after a reload, alice's old token is 407"

# Too many failures from one address: 127.0.0.2 fails ten times, then
# even the right token is refused from it, while 127.0.0.1 is not.
n=0
while [ $n -lt 12 ]; do
	curl_px -o /dev/null --interface 127.0.0.2 -x "http://alice:guess-$n-0123456789abcdefghijklmnopqrstuvw@127.0.0.1:3128" \
		http://allowed.test/hello.txt
	n=$((n + 1))
done
out=$(curl_px -sS -o /dev/null -w '%{http_code}' --interface 127.0.0.2 -x "http://alice:$TA2@127.0.0.1:3128" \
	http://allowed.test/hello.txt)
expect_eq 429 "$out" "after ten wrong tokens, the right one from that address is 429"
expect_audit "the block is audited" event=decision reason=proxy_auth_blocked peer~^127.0.0.2:
expect_eq 10 "$(audit_count event=decision reason=proxy_auth_failed peer~^127.0.0.2:)" \
	"ten failures were compared, the rest refused unread"
expect_eq 200 "$(st "alice:$TA2" http://allowed.test/hello.txt)" "another address is not blocked"
expect_match "wrong credentials within 60 s" "$(cat "$WORLD_DIR/proxy.out")" "the block is logged"

proxy_alive_tok() { [ "$(st "bob:$TB" http://other.test/hello.txt)" = 200 ]; }
proxy_alive_tok && ok "the proxy still answers" || fail "the proxy does not answer"

# postern-bridge in the agent namespace, its only way out the proxy's
# auth=token listener on 10.200.3.1:3129: with bob's token file it reaches
# bob's host, and the token is nowhere in what CMD sees.
BRIDGE="$top_builddir/postern-bridge"
printf '%s\n' "$TB" >"$WORLD_DIR/bob-bridge.token"
expect_ne 0 "$(in_agent curl -sS -o /dev/null --max-time 3 http://10.200.1.2/hello.txt 2>/dev/null; echo $?)" \
	"the agent namespace reaches no upstream directly"
out=$(in_agent env -i PATH="$PATH" HOME=/root "$BRIDGE" --connect tcp:10.200.3.1:3129 \
	--token-file "$WORLD_DIR/bob-bridge.token" --allow-root -- \
	sh -c 'curl -sS -o /dev/null -w "%{http_code}\n" --max-time 10 http://other.test/hello.txt;
		curl -sS -o /dev/null -w "%{http_code}\n" --max-time 10 http://allowed.test/hello.txt;
		curl -sS -o /dev/null -w "%{http_code}\n" --max-time 10 --cacert "$1" https://other.test/hello.txt;
		env; cat /proc/1/environ 2>/dev/null | tr "\0" "\n"' sh "$WORLD_CA" 2>"$WORLD_DIR/bridge.err")
expect_eq 200 "$(printf '%s\n' "$out" | sed -n 1p)" "the bridge with bob's token reaches bob's host"
expect_eq 403 "$(printf '%s\n' "$out" | sed -n 2p)" "the bridge with bob's token: alice's host is 403"
expect_eq 200 "$(printf '%s\n' "$out" | sed -n 3p)" "a CONNECT through the bridge, token in its preface"
expect_no_match "$TB" "$out" "the token is not in CMD's environment"
expect_audit "the bridge's requests are bob's" event=decision decision=allow session=bob peer~^10.200.3.2:
out=$(in_agent env -i PATH="$PATH" HOME=/root "$BRIDGE" --connect tcp:10.200.3.1:3129 --allow-root -- \
	curl -sS -o /dev/null -w '%{http_code}' --max-time 10 http://other.test/hello.txt 2>"$WORLD_DIR/bridge.err")
expect_eq 407 "$out" "the bridge without a token file: 407"
out=$(in_agent "$BRIDGE" --connect "$WORLD_DIR/x.sock" --token-file "$WORLD_DIR/bob-bridge.token" -- true 2>&1)
expect_match "token-file is for a tcp: proxy" "$out" "--token-file with a UNIX socket is refused"
printf 'short\n' >"$WORLD_DIR/short.token"
out=$(in_agent "$BRIDGE" --connect tcp:10.200.3.1:3129 --token-file "$WORLD_DIR/short.token" -- true 2>&1)
expect_match "token-file .*short.token: the first line is 5 bytes" "$out" "a short token file is refused at start"
