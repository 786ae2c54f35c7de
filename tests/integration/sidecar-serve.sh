#!/bin/sh
# sidecar-serve.sh: postern-sidecar in container mode, in the world's px
# namespace (the "pod").  It locks the namespace, proves it, and serves the
# proxy on 127.0.0.1:3128 and on a UNIX socket.  An agent of another uid
# with no capabilities cannot get out directly (TCP, UDP DNS, v4, v6) but
# reaches an allowed name through the proxy and gets 403 for a denied one;
# the bridge variant reaches it through the socket; both processes run as
# the proxy uid with no capabilities; SIGHUP reloads; SIGTERM stops cleanly
# and removes the socket; a restart does not stack rules; as PID 1 of a PID
# namespace it reaps orphans and still stops on SIGTERM.
. "$top_srcdir/tests/integration/sidecar-lib.sh"
sc_world_up --agent
BRIDGE="$top_builddir/postern-bridge"
[ -x "$BRIDGE" ] || skip "postern-bridge is not built"
command -v nsenter >/dev/null 2>&1 || skip "nsenter is not installed"

SOCKDIR="$WORLD_DIR/run-postern"      # created by the sidecar
SOCK="$SOCKDIR/proxy.sock"
CONF="$WORLD_DIR/serve.ini"
SC_N=0                                 # one output file per start
OUT=
write_conf() {
	cat >"$CONF.new" <<-INI
		[proxy]
		log = stderr
		dns_servers = $WORLD_DNS
		[defaults]
		allow_hosts = allowed.test private, allowed.test:80 private
		$1
	INI
	chmod 644 "$CONF.new"
	mv "$CONF.new" "$CONF"
}
write_conf ""

SC_PID=
world_cleanup_hook() {
	[ -n "$SC_PID" ] && kill -KILL "$SC_PID" 2>/dev/null
	in_px "$SIDECAR" unlock >/dev/null 2>&1
	return 0
}

# start_sidecar [WRAPPER...]: start it in px (under WRAPPER, e.g. unshare),
# wait until it says it serves; sets SC_PID (the supervisor) and SC_JOB.
start_sidecar() {
	SC_N=$((SC_N + 1))
	OUT="$WORLD_DIR/sidecar.$SC_N.out"
	: >"$OUT"
	in_px "$@" "$SIDECAR" -c "$CONF" --user $PROXY_UID \
		--probe-addr 10.200.1.77 --probe-addr fd00:200:1::77 \
		--listen tcp:127.0.0.1:3128 --listen "unix:$SOCK" >>"$OUT" 2>&1 &
	SC_JOB=$!
	i=0
	while ! grep -q "serving as uid" "$OUT" && [ $i -lt 200 ]; do
		kill -0 $SC_JOB 2>/dev/null || break
		sleep 0.05
		i=$((i + 1))
	done
	SC_PID=$(pgrep -o -f "^$SIDECAR -c $CONF")
	grep -q "serving as uid $PROXY_UID" "$OUT" && [ -n "$SC_PID" ]
}

# stop_sidecar: SIGTERM, and the exit status of the job.
stop_sidecar() {
	kill -TERM "$SC_PID"
	wait $SC_JOB
	rc=$?
	SC_PID=
	return $rc
}

status_of() { grep "^$2:" "/proc/$1/status" | tr -s ' \t' ' ' | cut -d' ' -f2-; }

start_sidecar || { cat "$OUT"; die "the sidecar did not start"; }
ok "the sidecar serves"
expect_match "lock-down proven: only uid $PROXY_UID" "$(cat "$OUT")" "it proved the lock-down first"

# Direct egress from the agent: refused by routing, DNS included.
expect_eq ENETUNREACH "$(conn $AGENT_UID tcp "$WORLD_UP4" 443)" "agent: direct TCP v4 is ENETUNREACH"
expect_eq ENETUNREACH "$(conn $AGENT_UID tcp "$WORLD_UP6" 443)" "agent: direct TCP v6 is ENETUNREACH"
expect_eq ENETUNREACH "$(conn $AGENT_UID udp "$WORLD_DNS" 53)" "agent: UDP DNS is ENETUNREACH"
expect_eq ENETUNREACH "$(conn $AGENT_UID udp "$WORLD_UP6" 53)" "agent: UDP v6 is ENETUNREACH"
out=$(as_uid $AGENT_UID curl -sS --max-time 5 --noproxy '*' http://allowed.test/ 2>&1)
expect_match "Could not resolve host" "$out" "agent: curl without the proxy cannot even resolve"

# Through 127.0.0.1:3128.
P="-x http://127.0.0.1:3128"
out=$(as_uid $AGENT_UID curl -sS --max-time 10 $P --cacert "$WORLD_CA" https://allowed.test/ 2>&1)
expect_match "^sni=allowed.test$" "$out" "agent: HTTPS to an allowed name through 127.0.0.1:3128"
out=$(as_uid $AGENT_UID curl -sS --max-time 10 $P -o /dev/null -w "%{http_code}" http://allowed.test/ 2>&1)
expect_eq 200 "$out" "agent: plain HTTP to an allowed name"
out=$(as_uid $AGENT_UID curl -sS --max-time 10 $P -o /dev/null -w "%{http_code}" http://other.test/ 2>&1)
expect_eq 403 "$out" "agent: a denied name gets 403"
out=$(as_uid $AGENT_UID curl -s --max-time 10 $P -o /dev/null -w "%{http_connect}" --cacert "$WORLD_CA" https://other.test/ 2>&1)
expect_eq 403 "$out" "agent: CONNECT to a denied name gets 403"
expect_match '"event":"decision".*"method":"CONNECT","host":"other.test","port":443.*"decision":"deny","reason":"host_not_allowed"' \
	"$(cat "$OUT")" "the engine's audit log has the refusal"

# The bridge variant: an agent with no network at all, the socket carried
# in; the socket belongs to the proxy's group, 0660.
expect_eq "$PROXY_UID:$PROXY_UID" "$(stat -c %u:%g "$SOCK")" "the socket belongs to the proxy uid and gid"
out=$(in_agent setpriv --reuid $AGENT_UID --regid $AGENT_UID --groups $PROXY_UID \
	--inh-caps=-all --bounding-set=-all "$BRIDGE" --connect "$SOCK" -- \
	curl -sS --max-time 10 --cacert "$WORLD_CA" https://allowed.test/ 2>&1)
expect_match "^sni=allowed.test$" "$out" "bridge variant: HTTPS through the UNIX socket"
out=$(in_agent setpriv --reuid 4321 --regid 4321 --clear-groups \
	--inh-caps=-all --bounding-set=-all "$BRIDGE" --connect "$SOCK" -- \
	curl -s --max-time 10 -o /dev/null -w "%{http_code}" http://allowed.test/ 2>/dev/null)
expect_eq 503 "$out" "bridge variant: a uid outside the proxy's group cannot use the socket"

# No privilege left in either process.
EPID=$(pgrep -P "$SC_PID" | head -n 1)
for p in "$SC_PID" "$EPID"; do
	expect_eq "$PROXY_UID $PROXY_UID $PROXY_UID $PROXY_UID" "$(status_of "$p" Uid)" "pid $p runs as the proxy uid"
	expect_eq 0000000000000000 "$(status_of "$p" CapEff)" "pid $p has no effective capability"
	expect_eq 0000000000000000 "$(status_of "$p" CapPrm)" "pid $p has no permitted capability"
	expect_eq 1 "$(status_of "$p" NoNewPrivs)" "pid $p has no_new_privs"
done

# Reload: SIGHUP to the sidecar reaches the engine.
write_conf "allow_hosts = other.test:80 private"
kill -HUP "$SC_PID"
i=0
while :; do
	out=$(as_uid $AGENT_UID curl -sS --max-time 10 $P -o /dev/null -w "%{http_code}" http://other.test/ 2>&1)
	[ "$out" = 200 ] || [ $i -ge 30 ] && break
	sleep 0.1
	i=$((i + 1))
done
expect_eq 200 "$out" "after a reload the new rule allows other.test"

# SIGTERM: clean exit, socket removed, listener closed.
stop_sidecar
expect_eq 0 $? "SIGTERM: the sidecar exits 0"
expect_eq no "$([ -e "$SOCK" ] && echo yes || echo no)" "the socket file is removed"
expect_eq ECONNREFUSED "$(conn $AGENT_UID tcp 127.0.0.1 3128)" "the TCP listener is closed"
expect_eq "" "$(pgrep -f "^$SIDECAR -c $CONF")" "no sidecar or engine process is left"

# SIGKILL to the supervisor (not PID 1 here): the engine goes with it.
start_sidecar || { cat "$OUT"; die "the sidecar did not start again"; }
kill -KILL "$SC_PID"
wait $SC_JOB
SC_PID=
i=0
while [ -n "$(pgrep -f "^$SIDECAR -c $CONF")" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
expect_eq "" "$(pgrep -f "^$SIDECAR -c $CONF")" "SIGKILL: the engine stops with the sidecar"
expect_eq no "$([ -e "$SOCK" ] && echo yes || echo no)" "SIGKILL: the engine still removed its socket"

# Restart: the rules are not stacked.
start_sidecar || { cat "$OUT"; die "the sidecar did not restart"; }
for fam in "" -6; do
	expect_eq 1 "$(rule_count 100 $fam)" "restart: one allow rule ($fam)"
	expect_eq 1 "$(rule_count 101 $fam)" "restart: one unreachable rule ($fam)"
done
stop_sidecar
expect_eq 0 $? "the restarted sidecar stops cleanly"

# As PID 1 of a PID namespace.
start_sidecar unshare --pid --fork --kill-child || { cat "$OUT"; die "the sidecar did not start as PID 1"; }
expect_match "	1$" "$(grep '^NSpid:' "/proc/$SC_PID/status")" "the sidecar is PID 1 in its namespace"
# An orphan handed to it: sh starts sleep and exits at once.
nsenter -t "$SC_PID" -p -- sh -c 'sleep 1 & exit 0'
sleep 0.3
expect_match "^sleep$" "$(ps -o comm= --ppid "$SC_PID")" "the orphan was re-parented to the sidecar"
sleep 1.5
expect_eq "" "$(ps -o stat=,comm= --ppid "$SC_PID" | grep -v postern)" "the orphan was reaped: no zombie"
kill -TERM "$SC_PID"
i=0
while [ -n "$(pgrep -f "^$SIDECAR -c $CONF")" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
expect_eq "" "$(pgrep -f "^$SIDECAR -c $CONF")" "SIGTERM stops PID 1 and its engine"
wait $SC_JOB
SC_PID=
expect_eq no "$([ -e "$SOCK" ] && echo yes || echo no)" "PID 1: the socket file is removed"
exit 0
