#!/bin/sh
# world-selftest: proves the integration-test world itself works, before any
# postern scenario relies on it: the namespaces and addresses (and nothing
# in the root namespace), dnsmasq's answers for every test name, TLS with
# the test CA for every name, the HTTP/HTTPS/echo servers and their logs,
# the assertion and proxy helpers, and that a world which fails or is
# killed leaves no namespace, process or file behind.

. "$top_srcdir/tests/integration/lib/world.sh"

WORLD_DNS_EXTRA="extra.test=10.200.1.3 extra-dual.test=10.200.1.2,fd00:200:1::2"
t0=$(date +%s%N)
world_up
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
diag "world_up took ${ms} ms"
# The budget is 3 s (about 0.3 s on an idle machine); 10 s leaves room for
# a machine loaded by make -j and fuzzers, so that this never flakes.
[ "$ms" -lt 10000 ] && ok "world_up is fast (${ms} ms)" || fail "world_up took ${ms} ms"

# ---- topology: the addresses live only inside our namespaces
expect_eq "" "$(ip -o addr show | grep -E '10\.200\.|fd00:200:')" \
	"no 10.200/16 or fd00:200::/32 address in the root namespace"
expect_eq "" "$(ip -o link show | grep -E 'veth-(up|px)')" "no veth end in the root namespace"
expect_match "inet 10\.200\.1\.1/24" "$(ip -n "$WORLD_NS_PX" -o addr show dev veth-up)" "px has 10.200.1.1"
expect_match "inet6 fd00:200:1::1/64" "$(ip -n "$WORLD_NS_PX" -o addr show dev veth-up)" "px has fd00:200:1::1"
up_addrs=$(ip -n "$WORLD_NS_UP" -o addr show dev veth-px)
for a in 10.200.1.2/24 10.200.1.3/24 10.200.1.4/24 10.200.1.53/24 fd00:200:1::2/64; do
	expect_match "inet6? $a" "$up_addrs" "up has $a"
done
expect_match "state UP|LOOPBACK,UP" "$(ip -n "$WORLD_NS_PX" link show lo)" "lo is up in px"
expect_match "LOOPBACK,UP" "$(ip -n "$WORLD_NS_UP" link show lo)" "lo is up in up"
expect_eq "" "$(ip -n "$WORLD_NS_PX" route show default)" "px has no default route"
expect_match "^$WORLD_ID-px" "$(ip netns list)" "namespace names carry the scenario's id"

# ---- DNS: every test name, both families, from px
# name  A-answer  AAAA-answer  ("-" = none), all asked in one batch
table='allowed.test 10.200.1.2 -
other.test 10.200.1.2 -
deny.test 10.200.1.2 -
api.example.test 10.200.1.2 -
wild.test 10.200.1.2 -
a.wild.test 10.200.1.2 -
b.c.wild.test 10.200.1.2 -
v6only.test - fd00:200:1::2
dual.test 10.200.1.2 fd00:200:1::2
loop.test 127.0.0.1 -
meta.test 169.254.169.254 -
priv.test 10.200.1.3 -
mapped.test - ::ffff:127.0.0.1
zero-ttl.test 10.200.1.2 -
dead.test 10.200.1.4 -
blackhole.test 10.200.2.1 -
he.test 10.200.1.2 fd00:200:2::1
extra.test 10.200.1.3 -
extra-dual.test 10.200.1.2 fd00:200:1::2'
answers=$(printf '%s\n' "$table" | while read -r name _ _; do
	printf '%s A\n%s AAAA\n' "$name" "$name"
done | dns_query -)
while read -r name a4 a6; do
	expect_eq "$name A NOERROR $a4" "$(printf '%s\n' "$answers" | grep "^$name A ")" "DNS A $name"
	expect_eq "$name AAAA NOERROR $a6" "$(printf '%s\n' "$answers" | grep "^$name AAAA ")" "DNS AAAA $name"
done <<EOF
$table
EOF
expect_eq "10.200.1.2 0" "$(dns_query zero-ttl.test A --ttl)" "zero-ttl.test has TTL 0"
expect_eq "10.200.1.2 60" "$(dns_query allowed.test A --ttl)" "allowed.test has TTL 60"
expect_eq "10.200.1.3" "$(dns_query --server fd00:200:1::53 priv.test A)" "dnsmasq answers over IPv6 too"
expect_eq "NXDOMAIN" "$(dns_query nosuch.test A --rcode)" "an unknown .test name is NXDOMAIN"
expect_eq "NXDOMAIN" "$(dns_query x.allowed.test A --rcode)" "names are exact, not suffixes"
expect_match "^10\.200\.1\.3 .*priv\.test" "$(in_px getent ahostsv4 priv.test)" \
	"px's resolver (glibc, /etc/netns resolv.conf) asks the world's dnsmasq"

dns_log_reset
expect_eq 0 "$(dns_query_count)" "dns_log_reset empties the query log"
dns_query other.test A >/dev/null
dns_query other.test AAAA >/dev/null
expect_eq 2 "$(dns_query_count other.test)" "dnsmasq logs each query (after a reset, too)"
expect_eq 0 "$(dns_query_count allowed.test)" "dns_query_count counts per name"
expect_eq "A other.test
AAAA other.test" "$(dns_queries)" "dns_queries lists TYPE NAME"

world_dns_set rebind.test 10.200.1.2
expect_eq "10.200.1.2 0" "$(dns_query rebind.test A --ttl)" "world_dns_set adds a name with TTL 0"
world_dns_set rebind.test 10.200.1.3 fd00:200:1::2
expect_eq "10.200.1.3" "$(dns_query rebind.test A)" "world_dns_set rebinds a name"
expect_eq "fd00:200:1::2" "$(dns_query rebind.test AAAA)" "world_dns_set sets AAAA too"
world_dns_set rebind.test
expect_eq "NXDOMAIN" "$(dns_query rebind.test A --rcode)" "world_dns_set with no address removes it"

# ---- HTTPS with the test CA, for every name the certificate carries.
# One curl, one connection per name; --resolve pins the address, so names
# that resolve to loopback or metadata addresses still reach a server.
set --
for n in allowed.test other.test deny.test api.example.test wild.test a.wild.test \
	 b.c.wild.test v6only.test dual.test loop.test meta.test priv.test mapped.test \
	 zero-ttl.test dead.test blackhole.test he.test extra.test extra-dual.test; do
	set -- "$@" --resolve "$n:443:10.200.1.3" "https://$n/tls?n=1"
done
out=$(curl_px "$@" 2>&1)
while [ $# -gt 0 ]; do
	n=${2%%:*}
	expect_match "^sni=$n$" "$out" "TLS with the test CA for $n, SNI seen"
	shift 3
done
expect_match "^GET /tls\?n=1 HTTP/1\.1$" "$out" "the HTTPS body names the request line"
expect_eq 19 "$(upstream_count kind=https target=/tls?n=1)" "the upstream log has one HTTPS request per name"
expect_eq "mapped.test" "$(upstream_get sni kind=https target=/tls?n=1 host=mapped.test)" \
	"the upstream log records the SNI"
out=$(curl_px -sS -D - "https://10.200.1.2/ip" 2>&1)
expect_match "^X-Sni: -$" "$out" "a TLS client without SNI is served and logged as such (IP SAN)"
expect_eq "null" "$(upstream_get sni kind=https target=/ip)" "no SNI is logged as null"
out=$(in_px curl -sS --max-time 5 https://allowed.test/ 2>&1)
expect_match "certificate" "$out" "without --cacert the certificate is not trusted"
expect_eq 1 "$(upstream_events event=tls ok=false | wc -l | tr -d ' ')" \
	"a failed handshake is logged (event tls, ok false)"

# ---- IPv6
out=$(curl_px "https://v6only.test/v6" 2>&1)
expect_match "^sni=v6only\.test$" "$out" "HTTPS over IPv6 by name (AAAA only)"
expect_eq "[fd00:200:1::2]:443" "$(upstream_get listen target=/v6)" "served on [fd00:200:1::2]:443"
out=$(curl_px -D - "http://[fd00:200:1::2]:8080/v6plain" 2>&1)
expect_match "^X-Listener: \[fd00:200:1::2\]:8080$" "$out" "plain HTTP on [fd00:200:1::2]:8080"
expect_match "^\[fd00:200:1::1\]:" "$(upstream_get peer target=/v6plain)" "the peer is px's v6 address"

# ---- plain HTTP echo on 80 and 8080, raw head as received
for port in 80 8080; do
	out=$(curl_px -D - -H 'X-Odd:   spaced  value' -H 'x-lower: 1' \
		"http://allowed.test:$port/echo/$port?q=1" 2>&1)
	expect_match "^GET /echo/$port\?q=1 HTTP/1\.1$" "$out" "port $port echoes the request line"
	expect_match "^X-Odd:   spaced  value$" "$out" "port $port echoes headers raw"
	expect_match "^x-lower: 1$" "$out" "port $port keeps header case"
	expect_match "^X-Listener: 10\.200\.1\.2:$port$" "$out" "port $port names its listener"
done
expect_eq "GET /echo/80?q=1 HTTP/1.1" "$(upstream_get request_line target=/echo/80?q=1)" \
	"the upstream log has the request line"
expect_eq "allowed.test:8080" "$(upstream_get host target=/echo/8080?q=1)" "the upstream log has the Host"
expect_match '"X-Odd", "spaced  value"' "$(upstream_requests target=/echo/8080?q=1)" \
	"the upstream log has the headers"

# keep-alive: two URLs in one curl share a connection; two curls do not
out=$(curl_px -D - "http://allowed.test/ka1" "http://allowed.test/ka2" 2>&1)
c=$(printf '%s\n' "$out" | tr -d '\r' | sed -n 's/^X-Conn: //p' | sort -u | wc -l | tr -d ' ')
expect_eq 1 "$c" "keep-alive: both requests on one connection (one X-Conn)"
expect_match "^X-Request: 2$" "$out" "keep-alive: the second request is request 2"
c1=$(curl_px -D - -o /dev/null "http://allowed.test/k" | tr -d '\r' | sed -n 's/^X-Conn: //p')
c2=$(curl_px -D - -o /dev/null "http://allowed.test/k" | tr -d '\r' | sed -n 's/^X-Conn: //p')
expect_ne "$c1" "$c2" "separate connections get different X-Conn ($c1, $c2)"
out=$(curl_px -D - "http://allowed.test/close" "http://allowed.test/after" 2>&1)
expect_eq 2 "$(printf '%s\n' "$out" | tr -d '\r' | sed -n 's/^X-Conn: //p' | sort -u | wc -l | tr -d ' ')" \
	"/close closes the connection"

# request bodies: Content-Length and chunked
head -c 100000 /dev/urandom >"$WORLD_DIR/body.bin"
sum=$(sha256sum "$WORLD_DIR/body.bin" | cut -d' ' -f1)
out=$(curl_px --data-binary @"$WORLD_DIR/body.bin" "http://allowed.test/cl" 2>&1)
expect_match "^body-length=100000$" "$out" "a Content-Length body is read and counted"
expect_match "^body-sha256=$sum$" "$out" "a Content-Length body's sha256 is echoed"
out=$(curl_px -H 'Transfer-Encoding: chunked' --data-binary @"$WORLD_DIR/body.bin" \
	"http://allowed.test/te" 2>&1)
expect_match "^body-sha256=$sum$" "$out" "a chunked body is decoded (sha256 echoed)"
expect_eq "chunked 100000" "$(upstream_get body_mode target=/te) $(upstream_get body_length target=/te)" \
	"the upstream log has the body mode and length"

t0=$(date +%s%N)
out=$(curl_px -H 'Expect: 100-continue' --data-binary @"$WORLD_DIR/body.bin" \
	"http://allowed.test/expect" 2>&1)
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
expect_match "^body-sha256=$sum$" "$out" "a body sent after 100 Continue arrives whole"
expect_eq true "$(upstream_get continued target=/expect)" \
	"Expect: 100-continue is answered (${ms} ms; curl waits 1 s without it)"

# responses: chunked, large, status, HEAD
out=$(curl_px -D - "http://allowed.test/chunked" 2>&1)
expect_match "^Transfer-Encoding: chunked$" "$out" "/chunked answers chunked"
expect_eq "one two three" "$(printf '%s\n' "$out" | tr -d '\r' | sed -n '/^$/,$p' | sed '/^$/d' | tr '\n' ' ' | sed 's/ $//')" \
	"/chunked's body"
n=5000000
expect_eq "$(pattern_sha256 $n)" "$(curl_px "http://allowed.test/bytes/$n" | sha256sum | cut -d' ' -f1)" \
	"/bytes/$n over HTTP"
expect_eq "$(pattern_sha256 $n)" "$(curl_px "https://allowed.test/bytes/$n" | sha256sum | cut -d' ' -f1)" \
	"/bytes/$n over HTTPS"
expect_eq "$(pattern_sha256 300001)" "$(curl_px "http://allowed.test/chunked/300001" | sha256sum | cut -d' ' -f1)" \
	"/chunked/300001"
expect_eq "418" "$(curl_px -o /dev/null -w '%{http_code}' "http://allowed.test/status/418")" "/status/418"
expect_eq "1234" "$(curl_px -I "http://allowed.test/bytes/1234" | tr -d '\r' | sed -n 's/^Content-Length: //p')" \
	"HEAD gets the length and no body"

# the private host and the host where nothing listens
out=$(curl_px -D - "http://priv.test/p" 2>&1)
expect_match "^X-Listener: 10\.200\.1\.3:80$" "$out" "10.200.1.3 serves HTTP on 80"
out=$(curl_px -D - "http://10.200.1.3:8080/p" 2>&1)
expect_match "^X-Listener: 10\.200\.1\.3:8080$" "$out" "10.200.1.3 serves HTTP on 8080"
curl_px -o /dev/null "http://10.200.1.4/" 2>/dev/null
expect_eq 7 "$?" "10.200.1.4 refuses connections (curl exit 7)"
for a in 10.200.2.1 '[fd00:200:2::1]'; do
	curl_px -o /dev/null --connect-timeout 1 "http://$a/" 2>/dev/null
	expect_eq 28 "$?" "$a is a black hole: the connect times out (curl exit 28)"
done
expect_eq TIMEOUT "$(dns_query --server 10.200.2.1 --timeout 0.5 allowed.test A --rcode 2>/dev/null)" \
	"a DNS server in the black hole never answers"
out=$(curl_px -D - --connect-timeout 1 "https://he.test/he" 2>&1)
expect_match "^X-Listener: 10\.200\.1\.2:443$" "$out" "he.test: the v6 address is a black hole, v4 answers"

# ---- TCP echo on 7, with half-close
for a in 10.200.1.2 '[fd00:200:1::2]' 10.200.1.3; do
	out=$(printf 'hello echo\n' | in_px socat -t 2 - "TCP:$a:7" 2>&1)
	expect_eq "hello echo" "$out" "TCP echo on $a:7 (half-close answered)"
done
expect_eq 3 "$(upstream_events event=close kind=echo bytes_in=11 bytes_out=11 | wc -l | tr -d ' ')" \
	"echo connections are logged with their byte counts"

# ---- the upgrade path: 101, then a raw echo
out=$(printf 'GET /upgrade HTTP/1.1\r\nHost: allowed.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nraw bytes\n' |
	in_px socat -t 2 - TCP:10.200.1.2:80 2>&1)
expect_match "^HTTP/1\.1 101 " "$out" "/upgrade switches protocols"
expect_match "^raw bytes$" "$out" "and then echoes raw bytes"

upstream_log_reset
expect_eq 0 "$(upstream_count)" "upstream_log_reset empties the upstream log"
curl_px -o /dev/null "http://allowed.test/after-reset"
expect_eq 1 "$(upstream_count)" "and the servers go on logging into it"

# ---- audit-log helpers, on a made-up log
cat >"$PROXY_LOG" <<'EOF'
{"time":"t","session":"default","method":"CONNECT","host":"allowed.test","port":443,"decision":"allow","peer":{"uid":0}}
{"time":"t","session":"default","method":"CONNECT","host":"deny.test","port":443,"decision":"deny","reason":"denied_by_rule"}
not json at all
{"time":"t","session":"s1","method":"GET","host":"other.test","port":80,"decision":"deny","reason":"host_not_allowed"}
EOF
expect_eq 2 "$(audit_count decision=deny)" "audit_count"
expect_eq "deny.test" "$(audit_get host reason=denied_by_rule)" "audit_get by string field"
expect_eq "other.test" "$(audit_get host port=80)" "audit_get by number field"
expect_eq "allowed.test" "$(audit_get host peer.uid=0)" "dotted keys reach nested objects"
expect_eq 1 "$(audit_count 'reason~^host_' session!=default)" "regex and != conditions"
expect_audit "expect_audit finds a line" host=deny.test decision=deny
expect_no_audit "expect_no_audit" host=allowed.test decision=deny
expect_upstream "expect_upstream finds a request" target=/after-reset kind=http

# ---- proxy_start / proxy_stop, with a stand-in proxy
cat >"$WORLD_DIR/fake-proxy" <<'EOF'
#!/bin/sh
# Stands in for postern-proxy: "-c CONF", listens where CONF says, exits
# 0 on SIGTERM.
trap 'kill $p 2>/dev/null; exit 0' TERM
sleep 0.3
socat UNIX-LISTEN:"$WORLD_DIR/proxy.sock",fork SYSTEM:"echo unix >>$WORLD_DIR/fake.conns; cat" &
p="$!"
socat TCP-LISTEN:3128,bind=127.0.0.1,reuseaddr,fork SYSTEM:"echo tcp >>$WORLD_DIR/fake.conns; cat" &
p="$p $!"
sleep 0.2
socat UNIX-LISTEN:"$WORLD_DIR/admin.sock",fork SYSTEM:"echo admin >>$WORLD_DIR/fake.conns; cat" &
p="$p $!"
wait
EOF
chmod +x "$WORLD_DIR/fake-proxy"
printf '[proxy]\nlisten = tcp:127.0.0.1:3128 ; comment\nlisten = unix:%s\n; listen = tcp:127.0.0.1:9\nadmin = unix:%s\n' \
	"$WORLD_DIR/proxy.sock" "$WORLD_DIR/admin.sock" >"$WORLD_DIR/proxy.conf"
if POSTERN_PROXY="$WORLD_DIR/fake-proxy" proxy_start "$WORLD_DIR/proxy.conf"; then
	ok "proxy_start returns once the listeners listen"
	[ -S "$WORLD_DIR/admin.sock" ] && ok "proxy_start waits for the admin socket too (it comes last)" ||
		fail "proxy_start returned before the admin socket existed"
	expect_eq "" "$(cat "$WORLD_DIR/fake.conns" 2>/dev/null)" \
		"proxy_start waits without connecting (nothing extra in the audit log)"
	px_relay "$WORLD_DIR/proxy.sock" 4128
	expect_eq "pong" "$(printf pong | in_px socat -t 1 - TCP:127.0.0.1:4128)" \
		"px_relay carries TCP to the UNIX listener"
	expect_eq "ping" "$(printf ping | in_px socat -t 1 - TCP:127.0.0.1:3128)" "the TCP listener answers in px"
	expect_ne "" "$WORLD_PROXY_PID" "proxy_start records the pid"
	proxy_stop
	expect_eq 0 "$?" "proxy_stop returns the exit status"
fi
printf '#!/bin/sh\necho "bad config" >&2\nexit 3\n' >"$WORLD_DIR/dead-proxy"
chmod +x "$WORLD_DIR/dead-proxy"
t0=$(date +%s%N)
# A subshell, so that the expected "not ok" it prints is not counted here.
(POSTERN_PROXY="$WORLD_DIR/dead-proxy" proxy_start "$WORLD_DIR/proxy.conf" >/dev/null)
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
expect_eq 1 "$rc" "proxy_start fails when the proxy exits"
[ "$ms" -lt 4000 ] && ok "and says so at once (${ms} ms)" || fail "proxy_start took ${ms} ms to see the exit"
expect_match "bad config" "$(cat "$WORLD_DIR/proxy.out")" "the proxy's stderr is kept in proxy.out"

# ---- curl_status: the CONNECT refusal, else the response's status
printf '#!/bin/sh\nprintf "HTTP/1.1 403 Forbidden\\r\\nContent-Length: 0\\r\\n\\r\\n"\nsleep 1\n' \
	>"$WORLD_DIR/refuse.sh"
chmod +x "$WORLD_DIR/refuse.sh"
ip netns exec "$WORLD_NS_PX" socat TCP-LISTEN:3999,bind=127.0.0.1,reuseaddr,fork \
	EXEC:"$WORLD_DIR/refuse.sh" 2>/dev/null &
in_px "$WORLD_PYTHON" "$WORLD_LIB/world.py" wait --tcp 127.0.0.1:3999 --pid $!
expect_eq 403 "$(curl_status -x http://127.0.0.1:3999 https://allowed.test/)" \
	"curl_status reports a refused CONNECT"
expect_eq 404 "$(curl_status http://allowed.test/status/404)" "curl_status reports a response status"
expect_eq 000 "$(curl_status http://10.200.1.4/)" "curl_status reports no answer as 000"

# ---- cleanup: a failing world and a killed world leave nothing behind
cat >"$WORLD_DIR/nested.sh" <<'EOF'
. "$top_srcdir/tests/integration/lib/world.sh"
world_up --agent
# The world's own processes are not the scenario's jobs: a bare wait
# returns at once here, rather than waiting for dnsmasq forever (the
# watchdog would end it after WORLD_TIMEOUT, and the check would fail).
wait
{
	echo "$WORLD_ID $WORLD_DIR"
	ip netns pids "$WORLD_NS_UP"
	ip netns pids "$WORLD_NS_PX"
} >"$NESTED_OUT"
in_agent ip -o link show | grep -q LOOPBACK,UP || fail "agent lo is not up"
[ "$(in_agent ip -o link show | wc -l)" = 1 ] || fail "agent has more than lo"
in_px sleep 300 &
in_up sleep 300 &
# A background job outside the namespaces, which world_down must end too.
sleep 300 &
echo "$!" >>"$NESTED_OUT"
echo started >>"$NESTED_OUT.ready"
case $1 in
fail) fail "a deliberate failure" ;;
die) die "a deliberate fatal error" ;;
term) wait $! ;;
hang) sleep 300 ;;
# A hang the shell cannot be woken from by SIGTERM alone: a grandchild
# that ignores it, behind a command substitution the shell waits for.
deephang) x=$(sh -c 'trap "" TERM; sleep 300; echo late') ;;
esac
EOF
# What a run killed with SIGKILL leaves (it cannot clean up), under the pid
# of a shell that is gone: the next world_up sweeps it away.
true &
dead=$!
wait "$dead"
stale_ns="pw-stale-$dead-px"
stale_dir="${TMPDIR:-/tmp}/postern-world.$dead.stale"
ip netns add "$stale_ns"
mkdir "$stale_dir"
for mode in fail:/bin/sh die:/bin/bash term:/bin/bash term:/bin/sh deephang:/bin/sh hang:/bin/sh; do
	sh_=${mode#*:}
	mode=${mode%%:*}
	[ -x "$sh_" ] || continue
	nested_out="$WORLD_DIR/nested-$mode.out"
	rm -f "$nested_out" "$nested_out.ready"
	t0=$(date +%s%N)
	# Only the hang world should meet its watchdog, even on a busy machine.
	wt=60
	case $mode in *hang) wt=3 ;; esac
	WORLD_TIMEOUT=$wt NESTED_OUT=$nested_out "$sh_" "$WORLD_DIR/nested.sh" "$mode" \
		>"$WORLD_DIR/nested-$mode.log" 2>&1 &
	np=$!
	if [ "$mode" = term ]; then
		i=0
		while [ ! -e "$nested_out.ready" ] && [ $i -lt 250 ]; do sleep 0.02; i=$((i + 1)); done
		kill -TERM "$np"
	fi
	wait "$np"
	rc=$?
	set -- $(head -n 1 "$nested_out" 2>/dev/null)
	nid=${1:-none} ndir=${2:-none}
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	case $mode in term | *hang) want=143 ;; *) want=1 ;; esac
	expect_eq "$want" "$rc" "a $mode world under $sh_ exits $want (after $ms ms)"
	if [ "$mode" = deephang ]; then
		# The watchdog's SIGTERM, 5 s of grace, then SIGKILL.
		[ "$ms" -lt 20000 ] && ok "a deep hang ends soon after WORLD_TIMEOUT too (${ms} ms)" ||
			fail "the deep hang took ${ms} ms"
	fi
	expect_eq "" "$(ip netns list | grep -F "$nid-")" "a $mode world leaves no namespace ($nid)"
	# A process that has exited but waits for init to reap it (the world's
	# servers are detached from the scenario shell) is gone for our
	# purposes: it holds no socket, file or namespace any more.
	left=
	for p in $(tail -n +2 "$nested_out" 2>/dev/null); do
		st=$(sed 's/^.*) \([A-Z]\).*$/\1/' "/proc/$p/stat" 2>/dev/null)
		[ -n "$st" ] && [ "$st" != Z ] && left="$left $p($st)"
	done
	expect_eq "" "$left" "a $mode world leaves no process"
	[ -e "$ndir" ] && fail "a $mode world leaves $ndir" || ok "a $mode world removes its temp dir"
	[ -e "/etc/netns/$nid-px" ] && fail "a $mode world leaves /etc/netns/$nid-px" ||
		ok "a $mode world removes /etc/netns/$nid-px"
done
expect_eq "" "$(ip netns list | grep -F "$stale_ns")" "world_up sweeps a dead run's namespace"
[ -e "$stale_dir" ] && fail "world_up leaves a dead run's $stale_dir" ||
	ok "world_up sweeps a dead run's temp dir"
ip netns del "$stale_ns" 2>/dev/null
rm -rf "$stale_dir"
expect_match "the world.s logs, from" "$(cat "$WORLD_DIR/nested-fail.log")" \
	"a failing world prints its logs"
expect_match "longer than 3s \(WORLD_TIMEOUT\)" "$(cat "$WORLD_DIR/nested-hang.log")" \
	"a hung world is stopped by the watchdog, saying why"
[ "$ms" -lt 8000 ] && ok "and soon after WORLD_TIMEOUT (${ms} ms)" || fail "the hung world took ${ms} ms"
