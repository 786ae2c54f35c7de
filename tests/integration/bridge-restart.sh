#!/bin/sh
# bridge-restart.sh: a proxy restart does not strand a running sandbox.
#
# The bwrap and unshare recipes of README.md, read from the document and
# run as printed by uid 1000 (only "agent ..." becomes a small loop that
# fetches a URL each time it is told to), stay alive while the real
# postern-proxy behind the session's socket is stopped with SIGTERM and
# started again (systemctl restart), then killed with SIGKILL and started
# again (a crash and Restart=on-failure): the first request of the same,
# never restarted sandbox after each restart gets its 200.  /run/postern
# stands for the unit's RuntimeDirectory, kept across restarts as the
# shipped unit keeps it (RuntimeDirectoryPreserve=yes, checked here too;
# systemd itself is not run).
#
# Under "postern-sidecar run" the proxy is run's own child: an engine that
# dies under the command is started again by run, from the config it read
# once before the command started (never the file as it is now, which the
# command's uid may own), on the same socket; the command's next request
# gets its 200.  Past 5 restarts in 60 s the command is stopped and run
# says so and fails.
. "$top_srcdir/tests/integration/lib/world.sh"
command -v bwrap >/dev/null || skip "bubblewrap is not installed"
command -v curl >/dev/null || skip "curl is not installed"
if [ "${BR_IN_MNTNS:-}" != 1 ]; then
	[ "$(id -u)" = 0 ] || skip "runs the recipes as uid 1000: needs root"
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
	setpriv --reuid=1000 --regid=1000 --clear-groups \
		bwrap --unshare-user --unshare-net --ro-bind / / true 2>/dev/null ||
		skip "uid 1000 cannot create namespaces with bwrap here"
	unshare -m --propagation private true 2>/dev/null ||
		skip "cannot make a private mount namespace"
	# The test's own /run and /usr/local/bin, in a private mount namespace.
	BR_IN_MNTNS=1 exec unshare -m --propagation private sh "$0" "$@"
fi
. "$top_srcdir/tests/integration/lib-bridge.sh"
mount -t tmpfs -o mode=755 postern-test /run || die "tmpfs on /run"
mount -t tmpfs -o mode=755 postern-test /usr/local/bin || die "tmpfs on /usr/local/bin"
world_up
[ -x "$top_builddir/postern-bridge" ] || die "postern-bridge is not built"
cp "$top_builddir/postern-bridge" /usr/local/bin/postern-bridge || die "install the bridge"
# "agent ...": one GET per line read, its status printed.
cat >/usr/local/bin/postern-ask <<'EOF'
#!/bin/sh
while read -r n; do
	code=$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' "http://allowed.test/ask/$n")
	echo "$n $code"
done
EOF
chmod 755 /usr/local/bin/postern-bridge /usr/local/bin/postern-ask

unit="$top_srcdir/contrib/systemd/postern-proxy.service"
grep -q '^RuntimeDirectory=postern$' "$unit" && grep -q '^RuntimeDirectoryPreserve=yes$' "$unit" &&
	ok "the shipped unit keeps /run/postern across restarts" ||
	fail "the shipped unit lets systemd remove /run/postern on a restart"

# As systemd's RuntimeDirectory= would have it; the proxy makes s1/.
mkdir -p /run/postern && chmod 755 /run/postern
cat >"$WORLD_DIR/p.ini" <<EOF
[proxy]
log = $PROXY_LOG
dns_servers = $WORLD_DNS
[session s1]
listen = unix:/run/postern/s1/proxy.sock owner=1000 group=1000 mode=0600
allow_hosts = allowed.test:80 private
EOF
proxy_start "$WORLD_DIR/p.ini" || die "no proxy"

# sandbox NAME RECIPE: start RECIPE as uid 1000, fed by a FIFO on fd
# (3 for bwrap, 4 for unshare), its answers in $WORLD_DIR/NAME.out.
sandbox() {
	local line
	line=$(printf '%s\n' "$2" | sed 's|agent \.\.\.|postern-ask|')
	diag "$1: $line"
	mkfifo "$WORLD_DIR/$1.in"
	(cd / && setpriv --reuid=1000 --regid=1000 --clear-groups \
		env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/ sh -c "$line") \
		<"$WORLD_DIR/$1.in" >"$WORLD_DIR/$1.out" 2>&1 3>&- 4>&- &
	eval "${1}_pid=\$!"
}
# alive PID: running, not a zombie that only waits for us.
alive() { [ -e "/proc/$1" ] && [ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" != Z ]; }
# (Every process started while the FIFOs are open is started without
# them, so that closing them ends the sandboxes' input.)
# ask NAME FD N: have the sandbox fetch once; prints the status it got.
ask() {
	local i=0
	echo "$3" >&"$2"
	while ! grep -q "^$3 " "$WORLD_DIR/$1.out" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 150 ] && { echo "no answer"; return; }
		sleep 0.1
	done
	sed -n "s/^$3 //p" "$WORLD_DIR/$1.out"
}

bw=$(br_doc_recipe "$top_srcdir/README.md" bwrap)
us=$(br_doc_recipe "$top_srcdir/README.md" unshare)
[ -n "$bw" ] && [ -n "$us" ] || die "README.md prints no bwrap or no unshare recipe"
sandbox bwrap "$bw"
exec 3>"$WORLD_DIR/bwrap.in"
sandbox unshare "$us"
exec 4>"$WORLD_DIR/unshare.in"

expect_eq 200 "$(ask bwrap 3 1)" "bwrap recipe: the sandbox's request goes through"
expect_eq 200 "$(ask unshare 4 1)" "unshare recipe: the sandbox's request goes through"

proxy_stop
expect_eq 0 $? "the proxy stops cleanly on SIGTERM"
proxy_start "$WORLD_DIR/p.ini" 3>&- 4>&- || die "the proxy does not start again"
expect_eq 200 "$(ask bwrap 3 2)" "bwrap recipe: the same sandbox works after a SIGTERM and a restart"
expect_eq 200 "$(ask unshare 4 2)" "unshare recipe: the same sandbox works after a SIGTERM and a restart"

kill -KILL "$WORLD_PROXY_PID"
wait "$WORLD_PROXY_PID" 2>/dev/null
WORLD_PROXY_PID=
[ -S /run/postern/s1/proxy.sock ] && ok "the killed proxy left its socket file" ||
	fail "no stale socket file after SIGKILL"
proxy_start "$WORLD_DIR/p.ini" 3>&- 4>&- || die "the proxy does not start over its stale socket"
expect_eq 200 "$(ask bwrap 3 3)" "bwrap recipe: the same sandbox works after a crash and a restart"
expect_eq 200 "$(ask unshare 4 3)" "unshare recipe: the same sandbox works after a crash and a restart"

# A second proxy started over the live one's socket refuses, and the
# live one goes on serving.
out=$(timeout 10 ip netns exec "$WORLD_NS_PX" "$top_builddir/postern-proxy" -c "$WORLD_DIR/p.ini" 2>&1 3>&- 4>&-)
expect_ne 0 $? "a second proxy on the same socket refuses to start"
expect_match "another process is serving" "$out" "and says why"
expect_eq 200 "$(ask bwrap 3 4)" "the live proxy still serves the sandbox"

alive "$bwrap_pid" && alive "$unshare_pid" &&
	ok "neither sandbox was restarted" || fail "a sandbox died"
# End of input: each sandbox's loop ends, and the sandbox with it.
exec 3>&- 4>&-
i=0
while { alive "$bwrap_pid" || alive "$unshare_pid"; } && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
if alive "$bwrap_pid" || alive "$unshare_pid"; then
	fail "a sandbox did not end at the end of its input"
	diag "$(ps -eo pid,ppid,stat,args | grep -E "postern-(ask|bridge)|bwrap" | grep -v grep)"
else
	wait "$bwrap_pid" "$unshare_pid"
fi
proxy_stop >/dev/null

# postern-sidecar run: the engine dies under a live command (SIGKILL, a
# crash) and run starts another from the config it read before the command
# started: the command's next request goes through, and a host added to
# the file meanwhile (by the command's own uid, who owns the file) is still
# refused.  Past 5 restarts in 60 s run gives up: the command is stopped and
# run fails, at once.
SIDECAR="${POSTERN_SIDECAR:-$top_builddir/postern-sidecar}"
[ -x "$SIDECAR" ] || { diag "postern-sidecar is not built: run not checked"; exit 0; }
BINS=$(world_bins_for 1000 "$SIDECAR" "$top_builddir/postern-bridge") ||
	die "cannot give uid 1000 the binaries"
# One GET per line read ("N HOST"), its status printed.
cat >/usr/local/bin/postern-ask-host <<'EOF'
#!/bin/sh
while read -r n host; do
	code=$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' "http://$host/ask/$n")
	echo "$n $code"
done
EOF
chmod 755 /usr/local/bin/postern-ask-host
cat >"$WORLD_DIR/run.ini" <<EOF
[proxy]
log = stderr
dns_servers = $WORLD_DNS
[defaults]
allow_hosts = allowed.test:80 private
EOF
chown 1000:1000 "$WORLD_DIR/run.ini"
chmod 644 "$WORLD_DIR/run.ini"
# run_start NAME [WHO...]: start "postern-sidecar run" (as WHO, a command
# prefix; as root without one), its command a postern-ask-host fed by a FIFO
# on fd 5, its output in $WORLD_DIR/NAME.out; $RUN is NAME from then on.
run_start() {
	RUN=$1
	shift
	mkfifo "$WORLD_DIR/$RUN.in"
	(cd / && exec ip netns exec "$WORLD_NS_PX" "$@" \
		env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/ "$BINS/postern-sidecar" run \
		-c "$WORLD_DIR/$RUN.ini" $RUN_ARGS -- postern-ask-host) \
		<"$WORLD_DIR/$RUN.in" >"$WORLD_DIR/$RUN.out" 2>&1 5>&- &
	run_pid=$!
	exec 5>"$WORLD_DIR/$RUN.in"
}
# run_ask N HOST: have the command fetch http://HOST/ once; its status.
run_ask() {
	local i=0
	echo "$1 $2" >&5
	while ! grep -q "^$1 " "$WORLD_DIR/$RUN.out" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 150 ] && { echo "no answer"; return; }
		sleep 0.1
	done
	sed -n "s/^$1 //p" "$WORLD_DIR/$RUN.out"
}
# run_engine: the pid of run's engine (its child that is still
# postern-sidecar; the command's became postern-bridge).
run_engine() {
	local s
	s=$(pgrep -o -f "postern-sidecar run -c $WORLD_DIR/$RUN\.ini") || return 1
	pgrep -P "$s" -f "postern-sidecar run" | head -n 1
}
# run_kill_engine K: kill -9 the engine and wait until run tells of it
# (its Kth restart, or that it gives up).
run_kill_engine() {
	local e i=0
	e=$(run_engine)
	[ -n "$e" ] || { diag "no engine to kill"; return 1; }
	kill -KILL "$e"
	while ! grep -Eq "engine died \(signal 9\)(; restarted it \($1 of 5\)|.*stopping the command)" \
	    "$WORLD_DIR/$RUN.out" && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

RUN_ARGS=
run_start run setpriv --reuid=1000 --regid=1000 --clear-groups

expect_eq 200 "$(run_ask 1 allowed.test)" "run: the command's request goes through"
expect_eq 403 "$(run_ask 2 other.test)" "run: a host the config lacks is refused"
setpriv --reuid=1000 --regid=1000 --clear-groups \
	sh -c 'echo "allow_hosts = other.test:80 private" >>"$1"' sh "$WORLD_DIR/run.ini" ||
	die "uid 1000 cannot edit its config"
run_kill_engine 1
expect_match "the proxy engine died \(signal 9\); restarted it \(1 of 5\)$" \
	"$(cat "$WORLD_DIR/run.out")" "run: the engine's death and its restart are told"
expect_eq 200 "$(run_ask 3 allowed.test)" "run: a request after the engine was killed goes through"
expect_eq 403 "$(run_ask 4 other.test)" \
	"run: the restarted engine serves the config read at start, not the edited file"
for k in 2 3 4 5; do
	run_kill_engine $k
done
expect_eq 200 "$(run_ask 5 allowed.test)" "run: still served after 5 restarts"
alive "$run_pid" && ok "run: the command outlived its engines" || fail "run: the command died"
start=$(date +%s)
run_kill_engine 6
i=0
while alive "$run_pid" && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
took=$(($(date +%s) - start))
exec 5>&-
wait "$run_pid"
rc=$?
out=$(cat "$WORLD_DIR/run.out")
diag "$out"
expect_match "restarted 5 times in the last 60 s already; stopping the command" "$out" \
	"run: a 6th death in 60 s is told"
expect_ne 0 "$rc" "run fails when it gave up on its engine"
[ "$took" -lt 10 ] && ok "run ended at once (${took}s) when it gave up" ||
	fail "run took ${took}s to give up"

# Started by root, the engine runs as its own uid and the command as uid
# 1000: the socket of the engine started after the crash is the command's
# to reach too (DIR/engine is set-group-ID, the command's group's).
cp "$WORLD_DIR/run.ini" "$WORLD_DIR/rootrun.ini"
chown root:root "$WORLD_DIR/rootrun.ini"
RUN_ARGS="--uid 1000"
run_start rootrun
expect_eq 200 "$(run_ask 1 allowed.test)" "run as root: the command's request goes through"
run_kill_engine 1
expect_eq 200 "$(run_ask 2 allowed.test)" \
	"run as root: the command reaches the restarted engine's socket"
exec 5>&-
wait "$run_pid"
expect_eq 0 $? "run as root: the command's status once its input ends"
diag "$(cat "$WORLD_DIR/rootrun.out")"
exit 0
