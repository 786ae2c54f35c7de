#!/bin/sh
# sidecar-pod-capture.sh: transparent capture in the pod (container mode
# with --capture).  The sidecar locks the world's px namespace
# (the "pod"), proves it, and serves the DNS stub on 127.0.0.1:53 of the
# pod.  An agent of another uid, with no proxy variables and the pod's
# resolv.conf naming 127.0.0.1 (dnsConfig), resolves an allowed name into
# 198.18.0.0/15 and reaches the upstream by name, HTTP and HTTPS, through
# the engine; a refused name gets NXDOMAIN and never reaches the world's
# DNS server; the agent still cannot reach anything directly (TCP, UDP
# DNS); the capture process runs as the proxy uid with CAP_NET_BIND_SERVICE
# alone and the pod's low ports stay closed to the agent; the
# lock-down check still passes with capture up; SIGTERM stops it all.
. "$top_srcdir/tests/integration/sidecar-lib.sh"
sc_world_up
command -v unshare >/dev/null 2>&1 || skip "unshare is not installed"
command -v ss >/dev/null 2>&1 || skip "ss is not installed"

SOCK="$WORLD_DIR/run-postern/proxy.sock"
CONF="$WORLD_DIR/pod.ini"
cat >"$CONF" <<INI
[proxy]
log = stderr
dns_servers = $WORLD_DNS
[defaults]
allow_hosts = allowed.test private, allowed.test:80 private
INI
chmod 644 "$CONF"
printf 'nameserver 127.0.0.1\n' >"$WORLD_DIR/resolv.conf"
chmod 644 "$WORLD_DIR/resolv.conf"
cp "$WORLD_CA" "$WORLD_DIR/ca.pem"
chmod 644 "$WORLD_DIR/ca.pem"

SC_PID=
world_cleanup_hook() {
	[ -n "$SC_PID" ] && kill -KILL "$SC_PID" 2>/dev/null
	in_px "$SIDECAR" unlock >/dev/null 2>&1
	in_px ip route del local 198.18.0.0/15 dev lo table local 2>/dev/null
	return 0
}

cat >"$WORLD_DIR/probe.py" <<'PY'
# probe.py UP4 DNS CA: what a program without proxy support sees in the pod.
import http.client, os, socket, ssl, struct, sys

def resolve(name):
    try:
        return socket.getaddrinfo(name, 80, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
    except socket.gaierror as e:
        return "gaierror %d" % e.errno

def query(server, name):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(3)
    q = struct.pack(">HHHHHH", 0x4242, 0x0100, 1, 0, 0, 0)
    for l in name.encode().split(b"."):
        q += bytes([len(l)]) + l
    q += b"\0" + struct.pack(">HH", 1, 1)
    try:
        s.sendto(q, (server, 53))
        a = s.recv(512)
    except OSError as e:
        return "errno %d" % e.errno
    return "rcode %d answers %d" % (a[3] & 15, struct.unpack(">H", a[6:8])[0])

def connect(host, port):
    try:
        socket.create_connection((host, port), timeout=3).close()
        return "OK"
    except OSError as e:
        return "errno %d" % e.errno

print("proxy vars", sorted(k for k in os.environ if k.lower().endswith("_proxy")))
print("uid", os.getuid())
print("resolve allowed", resolve("allowed.test"))
print("resolve denied", resolve("denied.test"))
print("stub denied", query("127.0.0.1", "denied.test"))
print("stub allowed", query("127.0.0.1", "allowed.test"))
c = http.client.HTTPConnection("allowed.test", 80, timeout=5)
c.request("GET", "/pod-http")
print("http status", c.getresponse().status)
ctx = ssl.create_default_context(cafile=sys.argv[3])
c = http.client.HTTPSConnection("allowed.test", 443, timeout=5, context=ctx)
c.request("GET", "/pod-https")
r = c.getresponse()
print("https status", r.status, r.read().decode().strip())
print("direct tcp", connect(sys.argv[1], 80))
print("direct dns", query(sys.argv[2], "allowed.test"))
PY
chmod 644 "$WORLD_DIR/probe.py"

# agent CMD...: CMD in the pod as the agent (uid 1000, no groups, no
# capabilities, no proxy variables), with the pod's resolv.conf: what
# dnsConfig "nameservers: [127.0.0.1]" gives the agent's container.
agent() {
	in_px unshare -m --propagation private sh -c '
		mount --bind "$1" /etc/resolv.conf || exit 125
		shift
		exec env -u http_proxy -u https_proxy -u HTTP_PROXY -u HTTPS_PROXY \
			-u ALL_PROXY -u all_proxy -u NO_PROXY -u no_proxy \
			setpriv --reuid '"$AGENT_UID"' --regid '"$AGENT_UID"' --clear-groups \
			--inh-caps=-all --bounding-set=-all --no-new-privs "$@"' \
		sh "$WORLD_DIR/resolv.conf" "$@"
}

OUT="$WORLD_DIR/sidecar.out"
in_px "$SIDECAR" -c "$CONF" --user $PROXY_UID --capture \
	--probe-addr 10.200.1.77 --probe-addr fd00:200:1::77 \
	--listen tcp:127.0.0.1:3128 --listen "unix:$SOCK" >"$OUT" 2>&1 &
SC_JOB=$!
i=0
while ! grep -q "serving as uid" "$OUT" && [ $i -lt 200 ]; do
	kill -0 $SC_JOB 2>/dev/null || break
	sleep 0.05
	i=$((i + 1))
done
SC_PID=$(pgrep -o -f "^$SIDECAR -c $CONF")
grep -q "serving as uid $PROXY_UID" "$OUT" || { cat "$OUT"; die "the sidecar did not start with --capture"; }
ok "the sidecar serves with --capture"
expect_match "lock-down proven: only uid $PROXY_UID" "$(cat "$OUT")" "it proved the lock-down first"

dns_log_reset
out=$(agent "$WORLD_PYTHON" "$WORLD_DIR/probe.py" "$WORLD_UP4" "$WORLD_DNS" "$WORLD_DIR/ca.pem" 2>&1)
expect_match "^proxy vars \[\]$" "$out" "the agent has no proxy variables"
expect_match "^uid $AGENT_UID$" "$out" "the agent runs as uid $AGENT_UID"
expect_match "^resolve allowed 198\.1[89]\." "$out" "an allowed name resolves into 198.18.0.0/15 through 127.0.0.1:53"
expect_match "^resolve denied gaierror -2$" "$out" "a refused name: EAI_NONAME"
expect_match "^stub denied rcode 3 answers 0$" "$out" "a refused name gets NXDOMAIN from the stub"
expect_match "^stub allowed rcode 0 answers 1$" "$out" "an allowed name gets one A record"
expect_match "^http status 200$" "$out" "the agent reaches the upstream over HTTP by name, through capture"
expect_match "^https status 200 " "$out" "and over HTTPS, the certificate checked"
expect_match "^direct tcp errno 101$" "$out" "direct TCP from the agent is still ENETUNREACH"
expect_match "^direct dns errno 101$" "$out" "direct DNS from the agent is still ENETUNREACH"
expect_eq 2 "$(upstream_count target~'^/pod-https?$')" "the upstream saw both requests"
expect_eq "" "$(dns_queries | grep -Ev '^(A|AAAA) allowed.test$')" \
	"the refused name never reached the world's DNS server"
expect_match '"host":"denied.test".*"decision":"deny"' "$(cat "$OUT")" \
	"the engine audited the refused name"

# The lock-down is as tight as without capture.
expect_eq ENETUNREACH "$(conn $AGENT_UID tcp "$WORLD_UP4" 443)" "agent: direct TCP v4 is ENETUNREACH"
expect_eq ENETUNREACH "$(conn $AGENT_UID tcp "$WORLD_UP6" 443)" "agent: direct TCP v6 is ENETUNREACH"
expect_eq ENETUNREACH "$(conn $AGENT_UID udp "$WORLD_DNS" 53)" "agent: UDP DNS is ENETUNREACH"
out=$(in_px "$SIDECAR" lockdown-check --user $PROXY_UID \
	--probe-addr 10.200.1.77 --probe-addr fd00:200:1::77 2>&1)
expect_eq 0 $? "lockdown-check passes with capture up"

# The capture process: the proxy uid, CAP_NET_BIND_SERVICE alone.
status_of() { grep "^$2:" "/proc/$1/status" | tr -s ' \t' ' ' | cut -d' ' -f2-; }
CPID=$(in_px ss -Hlunp 'sport = :53' | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -n 1)
[ -n "$CPID" ] || die "no process listens on 127.0.0.1:53"
expect_eq "$PROXY_UID $PROXY_UID $PROXY_UID $PROXY_UID" "$(status_of "$CPID" Uid)" \
	"the capture process runs as the proxy uid"
expect_eq 0000000000000400 "$(status_of "$CPID" CapEff)" "its only effective capability is CAP_NET_BIND_SERVICE"
expect_eq 0000000000000400 "$(status_of "$CPID" CapPrm)" "and its only permitted one"
expect_eq 0000000000000000 "$(status_of "$CPID" CapInh)" "nothing inheritable"
expect_eq 0000000000000000 "$(status_of "$CPID" CapAmb)" "nothing ambient"
expect_eq 0000000000000000 "$(status_of "$CPID" CapBnd)" "an empty bounding set"
expect_eq 1 "$(status_of "$CPID" NoNewPrivs)" "it has no_new_privs"
expect_eq 1024 "$(in_px cat /proc/sys/net/ipv4/ip_unprivileged_port_start)" \
	"the pod's low ports stay closed to other uids"
expect_eq EACCES "$(in_px setpriv --reuid $AGENT_UID --regid $AGENT_UID --clear-groups \
	--inh-caps=-all --bounding-set=-all "$WORLD_PYTHON" -c '
import errno, socket
s = socket.socket()
try:
    s.bind(("198.18.0.9", 443)); print("BOUND")
except OSError as e:
    print(errno.errorcode[e.errno])')" "the agent cannot bind a low port of the synthetic range"

kill -TERM "$SC_PID"
wait $SC_JOB
expect_eq 0 $? "SIGTERM: the sidecar exits 0"
SC_PID=
expect_eq "" "$(pgrep -f "^$SIDECAR -c $CONF")" "no sidecar, engine or capture process is left"

# Told to capture, it does not serve without: 127.0.0.1:53 taken first.
in_px "$WORLD_PYTHON" -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 53))
open(sys.argv[1], "w").close()
time.sleep(30)' "$WORLD_DIR/squat.ready" &
squat=$!
i=0
while [ ! -e "$WORLD_DIR/squat.ready" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
out=$(in_px timeout 30 "$SIDECAR" -c "$CONF" --user $PROXY_UID --capture \
	--probe-addr 10.200.1.77 --listen "unix:$SOCK" 2>&1)
expect_eq 1 $? "port 53 taken: the sidecar exits 1"
expect_match "capture: cannot serve the DNS stub on 127.0.0.1:53" "$out" "it says why"
expect_no_match "serving as uid" "$out" "and never serves"
kill $squat 2>/dev/null
wait $squat 2>/dev/null
exit 0
