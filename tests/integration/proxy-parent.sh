#!/bin/sh
# proxy-parent: upstream_proxy chains postern to a parent proxy (Debian's
# squid, in a namespace of its own between px and up).  The far side's view
# proves it: the upstream sees squid's address, not postern's.  CONNECT,
# SOCKS5, plain HTTP (absolute form to the parent) and a terminated tunnel
# with its secret injected all go through the parent; a host on
# upstream_proxy_direct goes direct; a request postern refuses never reaches
# squid; a parent's refusal (403, 407) is postern's 502 parent_refused, a
# parent that is down 502 parent_unreachable, both audited and counted; the
# credential of upstream_proxy_auth reaches squid only, never the upstream
# or the client.
. "$top_srcdir/tests/integration/lib/world.sh"
command -v squid >/dev/null 2>&1 || skip "squid is not installed"
[ -x /usr/lib/squid/basic_ncsa_auth ] || skip "squid's basic_ncsa_auth is not installed"
id proxy >/dev/null 2>&1 || skip "no proxy user for squid"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

# The parent's namespace: px 10.200.3.1 <-> 10.200.3.2 squid 10.200.4.2 <->
# 10.200.4.1 up.  px has no route to 10.200.4.0/24 nor up to 10.200.3.0/24:
# only squid joins them.
SQ_NS="$WORLD_ID-sq"
SQ4=10.200.3.2
SQ_OUT4=10.200.4.2
SQ_DIR="$WORLD_DIR/squid"
world_cleanup_hook() {
	[ -n "${SQ_NS:-}" ] || return 0
	world__kill_ns "$SQ_NS"
	ip netns del "$SQ_NS" 2>/dev/null
	return 0
}
ip netns add "$SQ_NS" || die "cannot make the parent's namespace"
ip -n "$SQ_NS" link set lo up &&
ip -n "$WORLD_NS_PX" link add veth-sq type veth peer name veth-px netns "$SQ_NS" &&
ip -n "$WORLD_NS_UP" link add veth-sq type veth peer name veth-up netns "$SQ_NS" &&
ip -n "$WORLD_NS_PX" addr add 10.200.3.1/24 dev veth-sq &&
ip -n "$SQ_NS" addr add "$SQ4/24" dev veth-px &&
ip -n "$SQ_NS" addr add "$SQ_OUT4/24" dev veth-up &&
ip -n "$WORLD_NS_UP" addr add 10.200.4.1/24 dev veth-sq &&
ip -n "$WORLD_NS_PX" link set veth-sq up &&
ip -n "$SQ_NS" link set veth-px up &&
ip -n "$SQ_NS" link set veth-up up &&
ip -n "$WORLD_NS_UP" link set veth-sq up &&
ip -n "$SQ_NS" route add 10.200.1.0/24 via 10.200.4.1 || die "the parent's network"

# Squid: port 3128 open, 3129 behind basic auth; CONNECT only to 443 and
# 80 and nothing at all to 10.200.1.3 (priv.test), which postern allows.
mkdir -p "$SQ_DIR"
PARENT_USER=agentproxy
PARENT_PASS="pw-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
printf '%s:%s\n' "$PARENT_USER" "$(openssl passwd -apr1 "$PARENT_PASS")" >"$SQ_DIR/htpasswd"
CRED_B64=$(printf '%s:%s' "$PARENT_USER" "$PARENT_PASS" | base64 | tr -d '\n')
cat >"$SQ_DIR/squid.conf" <<EOF
http_port $SQ4:3128 name=open
http_port $SQ4:3129 name=authed
visible_hostname parent.test
pid_filename $SQ_DIR/squid.pid
access_log stdio:$SQ_DIR/access.log
cache_log $SQ_DIR/cache.log
cache_store_log none
logfile_rotate 0
cache deny all
cache_mem 1 MB
coredump_dir $SQ_DIR
shutdown_lifetime 0 seconds
pinger_enable off
dns_nameservers $WORLD_DNS
auth_param basic program /usr/lib/squid/basic_ncsa_auth $SQ_DIR/htpasswd
auth_param basic realm parent
acl CONNECT method CONNECT
acl ssl_port port 443
acl web_port port 80
acl connect_port port 443 80
acl on_authed myportname authed
acl login proxy_auth REQUIRED
acl priv dst 10.200.1.3
http_access deny priv
http_access deny CONNECT !connect_port
http_access allow on_authed login
http_access deny on_authed
http_access allow ssl_port
http_access allow web_port
http_access deny all
EOF
chown -R proxy "$SQ_DIR"
# A parent that takes the connection and never answers.
ip netns exec "$SQ_NS" "$WORLD_PYTHON" -c '
import socket, sys, time
s = socket.socket()
s.bind((sys.argv[1], 3998))
s.listen(8)
held = []
while True:
    held.append(s.accept()[0])
' "$SQ4" >/dev/null 2>&1 &
ip netns exec "$SQ_NS" squid -N -f "$SQ_DIR/squid.conf" >"$SQ_DIR/out" 2>&1 &
ip netns exec "$SQ_NS" "$WORLD_PYTHON" "$WORLD_LIB/world.py" wait --timeout 10 --tcp "$SQ4:3128" --tcp "$SQ4:3129" \
	--tcp "$SQ4:3998" ||
	{ cat "$SQ_DIR/out" "$SQ_DIR/cache.log" 2>/dev/null | tail -n 20; die "squid is not listening"; }
squid_lines() { cat "$SQ_DIR/access.log" 2>/dev/null | wc -l | tr -d ' '; }

VALUE="tsk-$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')"
export PX_TEST_KEY="$VALUE" PARENT_CRED="$PARENT_USER:$PARENT_PASS"
state="$WORLD_DIR/state"
mkdir -p "$state"
chmod 700 "$state"
conf="$WORLD_DIR/postern.ini"
{
	admin_proxy_section "upstream_ca_file = $WORLD_CA" "state_dir = $state" "connect_timeout = 2s"
	cat <<-EOF
		[defaults]
		allow_hosts = allowed.test private, other.test private, priv.test private, *.wild.test private
		allow_hosts = meta.test
		upstream_proxy = http://$SQ4:3128
		upstream_proxy_direct = other.test, *.wild.test
		[session authed]
		listen = tcp:127.0.0.1:3129
		allow_hosts = allowed.test private
		secrets = k
		upstream_proxy = http://$SQ4:3129
		upstream_proxy_auth = env:PARENT_CRED
		[session noauth]
		listen = tcp:127.0.0.1:3130
		allow_hosts = allowed.test private
		upstream_proxy = http://$SQ4:3129
		[session down]
		listen = tcp:127.0.0.1:3131
		allow_hosts = allowed.test private
		upstream_proxy = http://$SQ4:3999
		[session names]
		listen = tcp:127.0.0.1:3132
		allow_hosts = allowed.test private
		upstream_proxy = http://$SQ4:3128
		upstream_proxy_names = yes
		[session namesnoauth]
		listen = tcp:127.0.0.1:3133
		allow_hosts = allowed.test private
		upstream_proxy = http://$SQ4:3129
		upstream_proxy_names = yes
		[session hole]
		listen = tcp:127.0.0.1:3134
		allow_hosts = allowed.test private
		upstream_proxy = http://$WORLD_BLACKHOLE4:3128
		[session mute]
		listen = tcp:127.0.0.1:3135
		allow_hosts = allowed.test private
		upstream_proxy = http://$SQ4:3998
		[secret k]
		from_env = PX_TEST_KEY
		inject = allowed.test header x-api-key
	EOF
} >"$conf"
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"

# connect_raw PORT HOST: postern's whole answer to CONNECT HOST:443 on PORT.
connect_raw() {
	printf 'CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n' "$2" "$2" |
		in_px "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/raw.py" 127.0.0.1 "$1" --timeout 8
}

# peer_of TARGET: the address the upstream saw the request for TARGET from.
peer_of() { upstream_get peer "target=$1" | tail -n 1 | sed 's/^\[\{0,1\}\([^]]*\)\]\{0,1\}:[0-9]*$/\1/'; }

# 1. CONNECT through the parent: the upstream sees squid, squid was asked
# for the vetted address, and the tunnel still carries the name (SNI).
out=$(curl_px -x http://127.0.0.1:3128 https://allowed.test/tun)
expect_match "^sni=allowed\.test$" "$out" "CONNECT through the parent reaches the upstream, SNI kept"
expect_eq "$SQ_OUT4" "$(peer_of /tun)" "the upstream sees the tunnel come from squid, not postern"
expect_match "CONNECT 10\.200\.1\.2:443 " "$(cat "$SQ_DIR/access.log")" \
	"postern asks the parent for the vetted address, not the name"
expect_audit "the tunnel's decision line is an allow with the vetted address and the parent" \
	event=decision method=CONNECT host=allowed.test decision=allow address=10.200.1.2 \
	parent="http://$SQ4:3128"

# 2. SOCKS5 goes the same way.
out=$(curl_px --proxy socks5h://127.0.0.1:3128 https://allowed.test/socks)
expect_match "^sni=allowed\.test$" "$out" "SOCKS5 through the parent reaches the upstream"
expect_eq "$SQ_OUT4" "$(peer_of /socks)" "the upstream sees the SOCKS5 tunnel come from squid"

# 3. Plain HTTP: through a CONNECT to the vetted address (an absolute-form
# request would have the parent replace Host with the address), twice on
# one connection.
out=$(curl_px -x http://127.0.0.1:3128 http://allowed.test/plain1 http://allowed.test/plain2)
expect_match "^GET /plain2 HTTP/1.1" "$out" "plain HTTP through the parent reaches the upstream"
expect_eq "$SQ_OUT4" "$(peer_of /plain1)" "the upstream sees plain HTTP come from squid"
expect_eq "$SQ_OUT4" "$(peer_of /plain2)" "and the second request too (kept-alive to the parent)"
expect_match "^allowed\.test$" "$(upstream_get host target=/plain1)" "the Host header keeps the name"
expect_match "CONNECT 10\.200\.1\.2:80 " "$(cat "$SQ_DIR/access.log")" \
	"the parent was asked for the vetted address"

# 4. upstream_proxy_direct: other.test goes direct, and so does a
# keep-alive mix of direct and parent on one client connection.
out=$(curl_px -x http://127.0.0.1:3128 https://other.test/direct)
expect_match "^sni=other\.test$" "$out" "a host on upstream_proxy_direct is reached"
expect_eq "$WORLD_PX4" "$(peer_of /direct)" "and directly: the upstream sees postern's address"
expect_no_audit "its decision line names no parent" event=decision host=other.test parent~.
out=$(curl_px -x http://127.0.0.1:3128 http://other.test/mix1 http://allowed.test/mix2 http://other.test/mix3)
expect_eq "$WORLD_PX4 $SQ_OUT4 $WORLD_PX4" "$(peer_of /mix1) $(peer_of /mix2) $(peer_of /mix3)" \
	"keep-alive: the direct and the parent upstreams never mix"

# 5. What postern refuses never reaches the parent.
n=$(squid_lines)
expect_eq 403 "$(curl_status -x http://127.0.0.1:3128 https://deny.test/)" "postern refuses deny.test itself"
expect_eq 403 "$(curl_status -x http://127.0.0.1:3128 https://meta.test/)" "and a never-reachable address"
expect_audit "postern vetted the address itself" event=decision host=meta.test reason=private_address
expect_eq 403 "$(curl_status -x http://127.0.0.1:3128 http://deny.test/)" "and plain HTTP to deny.test"
sleep 0.5
expect_eq "$n" "$(squid_lines)" "squid's access log has no line for them"

# 6. The parent refuses (squid denies 10.200.1.3): postern's 502 says so.
ans=$(connect_raw 3128 priv.test)
expect_match "^HTTP/1.1 502 " "$ans" "a parent's refusal is postern's 502"
expect_match "^X-Postern-Reason: parent_refused$" "$ans" "its reason is parent_refused"
expect_match "refused the CONNECT: .HTTP/1\.1 403 Forbidden" "$ans" "the body quotes the parent's status line"
expect_audit "the refusal is audited" event=decision host=priv.test decision=deny reason=parent_refused \
	detail~"parent proxy http://$SQ4:3128 refused"

# 7. Through a parent that wants a credential.  With upstream_proxy_auth:
# the credential goes to squid, a secret is injected inside the terminated
# tunnel, and neither the upstream nor the client sees the credential.
sess=$(in_px curl -sS --max-time 5 http://127.0.0.1:3129/.well-known/postern/session)
PH_K=$(printf '%s\n' "$sess" | sed -n 's/^env PX_TEST_KEY //p')
[ -n "$PH_K" ] || die "no placeholder"
CA="$state/ca/authed.pem"
[ -s "$CA" ] || die "the session CA is not in $CA"
out=$(in_px curl -sS -v --max-time 10 -x http://127.0.0.1:3129 --cacert "$CA" -H "x-api-key: $PH_K" \
	https://allowed.test/inj 2>&1)
expect_match "^sni=allowed\.test$" "$out" "a terminated tunnel goes through the authenticating parent"
expect_upstream "the upstream received the injected credential" target=/inj "head~(?mi)^x-api-key: $VALUE\r\$"
expect_eq "$SQ_OUT4" "$(peer_of /inj)" "through squid"
expect_match "CONNECT 10\.200\.1\.2:443 $PARENT_USER " "$(cat "$SQ_DIR/access.log")" \
	"squid logged the tunnel under the authenticated user"
out2=$(in_px curl -sS -v --max-time 10 -x http://127.0.0.1:3129 http://allowed.test/authplain 2>&1)
expect_eq "$SQ_OUT4" "$(peer_of /authplain)" "plain HTTP through the authenticating parent"
expect_eq 0 "$(upstream_count "head~(?i)proxy-authorization|$CRED_B64|$PARENT_PASS")" \
	"the upstream never sees the parent's credential"
expect_no_match "$CRED_B64|$PARENT_PASS|[Pp]roxy-[Aa]uthorization" "$out$out2$sess" \
	"the client never sees the parent's credential"
expect_no_match "$CRED_B64|$PARENT_PASS" "$(cat "$PROXY_LOG" "$WORLD_DIR/proxy.out")" \
	"nor does postern's log"

# Without it, squid's 407 is postern's 502 parent_refused.
ans=$(connect_raw 3130 allowed.test)
expect_match "^X-Postern-Reason: parent_refused$" "$ans" "a parent's 407 is parent_refused"
expect_match "407 Proxy Authentication Required.*upstream_proxy_auth" "$ans" \
	"the body quotes the 407 and names upstream_proxy_auth"
expect_no_match "^[Pp]roxy-[Aa]uthenticate" "$ans" "the parent's challenge does not reach the client"
ans=$(curl_px -sS -D - -x http://127.0.0.1:3133 http://allowed.test/names-407 2>&1)
expect_match "^X-Postern-Reason: parent_refused$" "$ans" \
	"upstream_proxy_names: a 407 to plain HTTP in absolute form is parent_refused too"
expect_no_match "^[Pp]roxy-[Aa]uthenticate" "$ans" "and the challenge does not reach the client"

# 8. A parent that is down: 502 parent_unreachable, audited and counted.
ans=$(connect_raw 3131 allowed.test)
expect_match "^HTTP/1.1 502 " "$ans" "a parent that is down is a 502"
expect_match "^X-Postern-Reason: parent_unreachable$" "$ans" "its reason is parent_unreachable"
expect_eq 502 "$(curl_status -x http://127.0.0.1:3131 http://allowed.test/)" "plain HTTP too"
expect_audit "it is audited" event=decision session=down decision=deny reason=parent_unreachable \
	detail~"http://$SQ4:3999"
ans=$(connect_raw 3134 allowed.test)
expect_match "^X-Postern-Reason: parent_unreachable$" "$ans" "a parent whose connect times out is parent_unreachable"
expect_match "could not connect to the parent proxy http://$WORLD_BLACKHOLE4:3128: Connection timed out" "$ans" \
	"and the body says so"
ans=$(connect_raw 3135 allowed.test)
expect_match "^X-Postern-Reason: parent_unreachable$" "$ans" "a parent that never answers the CONNECT too"
expect_match "did not answer the CONNECT in time" "$ans" "and the body says so"
expect_eq 2 "$(metrics_get postern_decisions_total session=down reason=parent_unreachable)" \
	"it is counted in /metrics"
expect_eq 1 "$(metrics_get postern_decisions_total session=default reason=parent_refused)" \
	"and so is the parent's refusal"

# 9. upstream_proxy_names = yes: the parent is asked for the name.
out=$(curl_px -x http://127.0.0.1:3132 https://allowed.test/names)
expect_match "^sni=allowed\.test$" "$out" "with upstream_proxy_names the tunnel goes through"
expect_match "CONNECT allowed\.test:443 " "$(cat "$SQ_DIR/access.log")" "and the parent is asked for the name"
expect_eq "$SQ_OUT4" "$(peer_of /names)" "through squid"
out=$(curl_px -x http://127.0.0.1:3132 http://allowed.test/names-plain1 http://allowed.test/names-plain2)
expect_match "^GET /names-plain2 HTTP/1.1" "$out" "plain HTTP for the name goes through"
expect_match "GET http://allowed\.test/names-plain1 " "$(cat "$SQ_DIR/access.log")" \
	"in absolute form, for the name"
expect_match "GET http://allowed\.test/names-plain2 " "$(cat "$SQ_DIR/access.log")" \
	"and so does the second request on the kept-alive connection"
expect_eq "$SQ_OUT4 allowed.test" "$(peer_of /names-plain1) $(upstream_get host target=/names-plain1)" \
	"through squid, with the name in Host"

# 10. --check shows each session's parent, never its credential.
out=$("$top_builddir/postern-proxy" --check -c "$conf" 2>&1)
expect_match "^  upstream_proxy http://$SQ4:3128, asked for vetted addresses, without a credential$" "$out" \
	"--check shows the parent and what it is asked for"
expect_match "^  upstream_proxy_direct \*\.wild\.test$" "$out" "and what goes direct"
expect_match "^  upstream_proxy http://$SQ4:3129, asked for vetted addresses, with a credential$" "$out" \
	"and whether it has a credential"
expect_no_match "$PARENT_PASS|$CRED_B64" "$out" "never the credential itself"

# 11. The keys are checked: FILE:LINE and why, for each bad value.
bad() {
	printf '[proxy]\nlisten = tcp:127.0.0.1:3199\n[defaults]\nallow_hosts = a.test\n%s\n' "$1" >"$WORLD_DIR/bad.ini"
	"$top_builddir/postern-proxy" --check -c "$WORLD_DIR/bad.ini" 2>&1
}
expect_match "bad\.ini:5: upstream_proxy: only http://" "$(bad 'upstream_proxy = https://p.test:3128')" \
	"an https:// parent is refused with FILE:LINE"
expect_match "bad\.ini:5: upstream_proxy: no user:password" "$(bad 'upstream_proxy = http://u:p@p.test:3128')" \
	"userinfo in the URL is refused"
expect_match "bad\.ini:5: upstream_proxy: the URL needs its port" "$(bad 'upstream_proxy = http://p.test')" \
	"a URL without its port is refused"
expect_match "bad\.ini:5: upstream_proxy_auth without upstream_proxy" "$(bad 'upstream_proxy_auth = env:X')" \
	"upstream_proxy_auth alone is refused"
expect_match "bad\.ini:5: upstream_proxy_direct: " "$(bad 'upstream_proxy_direct = a.test, x*.test')" \
	"a bad direct item is refused"
