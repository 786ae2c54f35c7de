#!/bin/sh
# proxy-sessions: sessions made and ended at run time over the admin
# socket (PUT and DELETE /sessions/NAME, GET /sessions, ctl session), each
# decided exactly like a [session NAME] of the file.
#   - a bad field is 400 naming session:NAME:LINE and the key, and changes
#     nothing; a file session's name is refused (409), and a file reload
#     that adds a runtime session's name is refused naming FILE:LINE;
#   - 50 runtime sessions, each with its own socket and allow list: through
#     postern-bridge in a namespace with only lo, each reaches its own host
#     and is refused (403) another session's; a file reload in the middle
#     keeps them all;
#   - ending a session with a tunnel open closes the tunnel, audited with
#     reason session_removed; a file session cannot be ended (409);
#   - once all are ended nothing is left: no socket file, no kept file, the
#     proxy's descriptors, open connections and memory back, GET /sessions
#     lists the file's sessions only;
#   - with state_dir, a restart makes the kept sessions again, and a kept
#     file that no longer validates is skipped with its reason.
# The proxy runs as uid 65532, as in production: each task's socket is made
# after the drop by the socket maker, owned by the task's uid (3000 + i),
# 0600, in a directory that did not exist; only that uid may connect.
. "$top_srcdir/tests/integration/lib/world.sh"
BRIDGE="$top_builddir/postern-bridge"
[ -x "$BRIDGE" ] || skip "postern-bridge is not built"
command -v curl >/dev/null 2>&1 || skip "curl is not installed"
N=50
WORLD_DNS_EXTRA=$(i=1; while [ $i -le $N ]; do printf 'h%d.test=10.200.1.2 ' $i; i=$((i + 1)); done)
WORLD_TIMEOUT=280
world_up --agent
. "$top_srcdir/tests/integration/lib-admin/admin.sh"
CTL="$top_builddir/postern-proxy ctl --admin $ADMIN_SOCK"
STATE="$WORLD_DIR/state"
mkdir -m 700 "$STATE"
chown 65532:65532 "$STATE"
chmod 755 "$WORLD_DIR"
RUN="$WORLD_DIR/run"        # socket_dir; the tasks' sockets are in $RUN/tasks
T="$RUN/tasks"

conf="$WORLD_DIR/postern.ini"
write_conf() {
	cat >"$conf" <<EOF
[proxy]
listen = unix:$WORLD_DIR/main.sock
admin = unix:$ADMIN_SOCK
log = $PROXY_LOG
dns_servers = $WORLD_DNS
state_dir = $STATE
user = 65532
socket_dir = $RUN
${POSTERN_TEST_WORKERS:+workers = $POSTERN_TEST_WORKERS}
[session filed]
listen = unix:$WORLD_DIR/filed.sock
allow_hosts = allowed.test private
EOF
	for l in "$@"; do echo "$l" >>"$conf"; done
}
write_conf
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"

# put NAME BODY: "CODE BODY" of PUT /sessions/NAME.
put() {
	printf '%s' "$2" | admin_curl -X PUT --data-binary @- -o "$WORLD_DIR/put.body" \
		-w '%{http_code}' "http://postern/sessions/$1" >"$WORLD_DIR/put.code"
	echo "$(cat "$WORLD_DIR/put.code") $(cat "$WORLD_DIR/put.body")"
}
# del NAME: the status of DELETE /sessions/NAME.
del() {
	admin_curl -X DELETE -o /dev/null -w '%{http_code}' "http://postern/sessions/$1"
}
# runtime_names: the runtime sessions GET /sessions lists, one a line.
runtime_names() {
	admin_get /sessions | "$WORLD_PYTHON" -c '
import json, sys
for s in json.load(sys.stdin)["sessions"]:
    if s["from"] == "runtime":
        print(s["name"])'
}
# bridge SOCK CMD...: CMD under postern-bridge in the agent namespace (lo
# only), its proxy SOCK.
bridge() {
	local sock
	sock=$1
	shift
	in_agent env -i PATH="$PATH" HOME=/root "$BRIDGE" --connect "$sock" --allow-root -- "$@"
}
# bridge_as UID SOCK CMD...: the same as a task's uid would run it: the
# bridge as UID in the agent namespace (lo only), with the two
# capabilities it needs to bring lo up and serve DNS there, which it drops
# before CMD runs (no user namespace: a chroot cannot make one).
# It runs a copy in the world's directory: the build tree may be where
# the task's uid cannot reach (/root on a fresh machine).
bridge_as() {
	local uid sock
	uid=$1 sock=$2
	shift 2
	[ -x "$WORLD_DIR/postern-bridge" ] || install -m 0755 "$BRIDGE" "$WORLD_DIR/postern-bridge"
	in_agent setpriv --reuid="$uid" --regid="$uid" --clear-groups \
		--inh-caps=+net_admin,+net_bind_service --ambient-caps=+net_admin,+net_bind_service \
		env -i PATH="$PATH" HOME=/ "$WORLD_DIR/postern-bridge" --connect "$sock" -- "$@"
}
# wait_for WANT CMD...: poll CMD's output for WANT, 5 s at most; prints the last.
wait_for() {
	local want got i
	want=$1
	shift
	i=0
	while :; do
		got=$("$@")
		[ "$got" = "$want" ] || [ $i -ge 100 ] && break
		sleep 0.05
		i=$((i + 1))
	done
	echo "$got"
}
# The proxy's descriptors but pipes: a worker keeps a splice pipe pair for
# reuse once it has spliced, and which worker takes a tunnel is chance.
fds() { ls -l "/proc/$WORLD_PROXY_PID/fd" | grep -c -- '-> [^p]'; }
pipes() { ls -l "/proc/$WORLD_PROXY_PID/fd" | grep -c -- '-> pipe:'; }
sock_files() { ls "$T" 2>/dev/null | grep -c '^s[0-9]*\.sock$'; }
# as_uid UID SOCK HOST: the status of a HEAD through SOCK as UID, or "refused".
as_uid() {
	setpriv --reuid="$1" --regid="$1" --clear-groups "$WORLD_PYTHON" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
except PermissionError:
    print("refused"); sys.exit(0)
s.sendall(b"HEAD http://" + sys.argv[2].encode() + b"/ HTTP/1.1\r\nHost: " + sys.argv[2].encode() + b"\r\nConnection: close\r\n\r\n")
print(s.recv(64).split()[1].decode())' "$2" "$3"
}
kept_files() { ls "$STATE/sessions" 2>/dev/null | wc -l; }

# Warm up what a first request allocates: the admin thread's, a request's
# (the resolver's sockets), a tunnel (the splice pipes kept for reuse),
# then the baseline.
r=$(bridge "$WORLD_DIR/filed.sock" sh -c "curl -s -o /dev/null --max-time 10 -w '%{http_code} ' \
	http://allowed.test/; curl -s -o /dev/null --max-time 10 --cacert $WORLD_CA -w '%{http_code}' \
	https://allowed.test/bytes/100000")
expect_eq "200 200" "$r" "the file's session serves"
admin_get /sessions >/dev/null
admin_get /status >/dev/null
base_fds=$(fds)
base_rss=$(proxy_rss_kb)
heap() { status_get 's["memory"]["heap_bytes"]'; }
base_heap=$(heap)
gen=$(status_get 's["config"]["generation"]')

diag "$(date +%T) baseline: $base_fds descriptors, $base_rss kB"
# 1. A bad field: 400, the field and its line named, nothing changed.
out=$(put bad "listen = unix:$WORLD_DIR/bad.sock
allow_hosts = h1.test private
max_connections = lots
")
expect_match '^400 ' "$out" "a bad field is 400"
expect_match 'session:bad:3: max_connections must be' "$out" "it names session:NAME:LINE and the key"
expect_eq "$gen" "$(status_get 's["config"]["generation"]')" "the generation stays"
expect_eq "" "$(runtime_names)" "no session was made"
[ -e "$WORLD_DIR/bad.sock" ] && fail "a refused session left its socket"
expect_eq 0 "$(kept_files)" "nor a kept file"
out=$(put bad "allow_hosts = h1.test private
[session other]
listen = unix:$WORLD_DIR/other.sock
")
expect_match '^400 .*session:bad:2: a runtime session holds key = value lines only' "$out" \
	"a section header in the body is refused"
out=$($CTL session add bad "listen=unix:$WORLD_DIR/bad.sock" "allow_hosts=h1..test" 2>&1)
expect_eq 1 "$?" "ctl session add exits 1 on a refusal"
expect_match '^postern-proxy ctl: session:bad:2: .*h1\.\.test' "$out" "with the proxy's reason on stderr"

diag "$(date +%T) Names"
# 2. Names: a file session's name is refused; so is removing a file session.
out=$(put filed "listen = unix:$WORLD_DIR/x.sock
")
expect_match '^409 .*session filed is a session of the config file' "$out" \
	"a runtime session cannot take a file session's name"
expect_eq 409 "$(del filed)" "a file session cannot be removed over the socket"
expect_eq 404 "$(del nosuch)" "nor one that does not exist"

diag "$(date +%T) Fifty"
# 3. Fifty sessions, a file reload half way.
i=1
while [ $i -le $N ]; do
	if [ $i -eq 26 ]; then
		write_conf "allow_hosts = other.test private"
		proxy_reload
		# SIGHUP and the file's watch may both reload it: once or twice.
		expect_eq yes "$(wait_for yes status_get \
			'"yes" if s["config"]["generation"] > '$((gen + 25))' and s["last_reload"]["ok"] else "no"')" \
			"the file reload was taken"
		expect_eq 25 "$(runtime_names | wc -l)" "the runtime sessions survive the reload"
	fi
	if [ $((i % 2)) -eq 0 ]; then
		$CTL session add "s$i" "listen=unix:$T/s$i.sock owner=$((3000 + i)) mode=0600" "allow_hosts=h$i.test private" \
			>/dev/null || fail "ctl session add s$i"
	else
		out=$(put "s$i" "listen = unix:$T/s$i.sock owner=$((3000 + i)) mode=0600
allow_hosts = h$i.test private
")
		expect_match '^200 ' "$out" "PUT /sessions/s$i" >/dev/null
	fi
	i=$((i + 1))
done
expect_eq $N "$(runtime_names | wc -l)" "$N runtime sessions listed"
expect_eq $N "$(sock_files)" "each has its socket"
expect_eq $N "$(kept_files)" "each is kept in state_dir"
expect_eq 600 "$(stat -c %a "$STATE/sessions/s1.ini")" "a kept file is 0600"
expect_eq "3001 600" "$(stat -c '%u %a' "$T/s1.sock")" \
	"the proxy runs as 65532, and s1's socket is uid 3001's, 0600"
expect_eq "3050 600" "$(stat -c '%u %a' "$T/s50.sock")" "s50's is uid 3050's"
expect_eq 200 "$(as_uid 3001 "$T/s1.sock" h1.test)" "uid 3001 reaches its own host through s1"
expect_eq refused "$(as_uid 3002 "$T/s1.sock" h1.test)" "uid 3002 cannot connect to s1's socket"
expect_eq 403 "$(as_uid 3002 "$T/s2.sock" h1.test)" "and through its own, s1's host is refused"

diag "$(date +%T) The other"
# 4. The other collision: the file takes a runtime session's name.
write_conf "allow_hosts = other.test private" "[session s7]" "listen = unix:$WORLD_DIR/f7.sock"
g=$(status_get 's["config"]["generation"]')
out=$(admin_curl -X POST -w '%{http_code}' http://postern/reload)
expect_match '^\{"taken":false' "$out" "a file section with a runtime session's name is refused"
expect_match "postern\\.ini:14: session s7 exists at run time \\(remove it first\\)" "$out" \
	"naming FILE:LINE"
expect_eq "$g" "$(status_get 's["config"]["generation"]')" "the old config stays"
write_conf "allow_hosts = other.test private"

diag "$(date +%T) Through"
# 5. Through the bridge, each session sees its own rules only.
i=1
: >"$WORLD_DIR/codes"
while [ $i -le $N ]; do
	j=$((i % N + 1))
	r=$(bridge_as $((3000 + i)) "$T/s$i.sock" sh -c "
		curl -s -o /dev/null --max-time 10 -w '%{http_code} ' http://h$i.test/own$i
		curl -s -o /dev/null --max-time 10 -w '%{http_code}' http://h$j.test/other$i" 2>/dev/null)
	echo "s$i $r" >>"$WORLD_DIR/codes"
	i=$((i + 1))
done
expect_eq $N "$(grep -c '^s[0-9]* 200 403$' "$WORLD_DIR/codes")" \
	"every session reaches its own host (200) and not another's (403)"
expect_no_match '^s[0-9]* (.*[^0-9 ]|[0-9]+ ?$|[0-9]+ (20[0-9]|000))' "$(cat "$WORLD_DIR/codes")" \
	"no session reaches another's host"
expect_eq $N "$(audit_count event=decision decision=allow reason=allowed method=GET 'session~^s[0-9]+$')" \
	"one allow per session audited"
expect_eq $N "$(audit_count event=decision decision=deny reason=host_not_allowed method=GET 'session~^s[0-9]+$')" \
	"one refusal per session audited"
expect_audit "s7 is decided by its own rule" session=s7 host=h7.test decision=allow \
	'rule_at=session:s7:2'

diag "$(date +%T) Ending"
# 6. Ending a session closes its open tunnel, audited.
bridge_as 3001 "$T/s1.sock" curl -s --max-time 30 --cacert "$WORLD_CA" \
	-o /dev/null -w '%{http_code}' https://h1.test/delay/25 >"$WORLD_DIR/tunnel.out" 2>&1 &
tpid=$!
s1_open() { $CTL session list | awk '$1 == "s1" {print $3}'; }
expect_eq 1 "$(wait_for 1 s1_open)" "s1 has its tunnel open"
t0=$(date +%s)
$CTL session rm s1 >/dev/null
expect_eq 0 "$?" "ctl session rm s1"
wait $tpid
expect_eq 1 $(( $(date +%s) - t0 < 10 )) "the tunnel ended at once, not after its 25 s"
expect_audit "the tunnel's end is audited with its reason" event=revoke session=s1 \
	reason=session_removed host=h1.test
expect_audit "and its close says why" event=close session=s1 why=session_removed
[ -e "$T/s1.sock" ] && fail "s1's socket file was left"
expect_eq "" "$(runtime_names | grep -x s1)" "s1 is no longer listed"

diag "$(date +%T) End the"
# 7. End the rest; nothing is left.
i=2
while [ $i -le $N ]; do
	if [ $((i % 2)) -eq 0 ]; then
		$CTL session rm "s$i" >/dev/null || fail "ctl session rm s$i"
	else
		c=$(del "s$i")
		[ "$c" = 200 ] || fail "DELETE /sessions/s$i: $c"
	fi
	i=$((i + 1))
done
expect_eq "" "$(runtime_names)" "GET /sessions lists no runtime session"
expect_eq 0 "$(sock_files)" "no socket file is left"
expect_eq 0 "$(kept_files)" "no kept file is left"
expect_eq 0 "$(status_get 's["connections_open"]')" "no connection is open"
expect_eq "$base_fds" "$(wait_for "$base_fds" fds)" "the proxy's descriptors are back to the baseline" ||
	diag "$(ls -l "/proc/$WORLD_PROXY_PID/fd")"
rss1=$(proxy_rss_kb)
heap1=$(heap)
diag "heap in use (/status): baseline $base_heap, after ending all $heap1"
if [ "$base_heap" -gt 0 ]; then
	# What stays: the DNS cache's 50 names, and with workers = 2 what the
	# second worker's loop kept from its first requests.
	expect_eq 1 $((heap1 <= base_heap + 2097152)) "/status: the heap in use is back within 2 MiB"
fi
pipes1=$(pipes)
# A second round, made, used and ended: the heap does not grow with it.
i=1
while [ $i -le 20 ]; do
	put "s$i" "listen = unix:$T/s$i.sock owner=$((3000 + i)) mode=0600
allow_hosts = h$i.test private
" >/dev/null
	i=$((i + 1))
done
i=1
: >"$WORLD_DIR/codes2"
while [ $i -le 20 ]; do
	bridge_as $((3000 + i)) "$T/s$i.sock" curl -s -o /dev/null --max-time 10 \
		-w '%{http_code}\n' http://h$i.test/again >>"$WORLD_DIR/codes2" 2>/dev/null
	i=$((i + 1))
done
expect_eq 20 "$(grep -c '^200$' "$WORLD_DIR/codes2")" "the second round's sessions serve"
i=1
while [ $i -le 20 ]; do
	del "s$i" >/dev/null
	i=$((i + 1))
done
rss2=$(proxy_rss_kb)
heap2=$(heap)
diag "heap in use (/status) after a second round: $heap2"
if [ "$base_heap" -gt 0 ]; then
	expect_eq 1 $((heap2 <= heap1 + 262144)) "/status: a second round leaves no more heap in use"
fi
diag "rss: baseline $base_rss kB, after the first round $rss1 kB, after the second $rss2 kB"
if grep -q __asan_init "${POSTERN_PROXY:-$top_builddir/postern-proxy}" 2>/dev/null; then
	diag "AddressSanitizer build: RSS is not compared (quarantine), nor the heap (not glibc's)"
else
	expect_eq 1 $((rss2 <= rss1 + 2048)) "memory is back: a second round does not grow it"
fi
expect_eq "$base_fds" "$(wait_for "$base_fds" fds)" "nor the descriptors"
expect_eq "$pipes1" "$(pipes)" "nor the pipes"
expect_eq 0 "$(sock_files)" "nor the socket files"

diag "$(date +%T) state_dir"
# 8. state_dir: a restart makes the kept sessions again; a kept file that
# no longer validates is skipped, with its reason, and the proxy serves.
out=$(put k1 "listen = unix:$T/k1.sock owner=3101
allow_hosts = h1.test private
")
expect_match '^200 ' "$out" "k1 made"
$CTL session add k2 "listen=unix:$T/k2.sock owner=3102" "allow_hosts=h2.test private" >/dev/null
printf 'listen = unix:%s/k3.sock\nallow_hosts = h3..test\n' "$WORLD_DIR" >"$STATE/sessions/k3.ini"
chmod 600 "$STATE/sessions/k3.ini"
proxy_stop >/dev/null
expect_eq 0 $? "the proxy exits cleanly"
proxy_start "$conf" || die "no proxy after the restart"
admin_wait
expect_eq "k1 k2" "$(runtime_names | tr '\n' ' ' | sed 's/ $//')" "the kept sessions are made again"
expect_match 'kept session k3 skipped: session:k3:2: ' "$(cat "$WORLD_DIR/proxy.out")" \
	"the one that no longer validates is skipped with its reason"
r=$(bridge_as 3102 "$T/k2.sock" curl -s -o /dev/null --max-time 10 -w '%{http_code}' http://h2.test/)
expect_eq 200 "$r" "a kept session serves after the restart"
proxy_stop >/dev/null
expect_eq 0 $? "the proxy exits cleanly"
