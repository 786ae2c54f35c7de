#!/bin/sh
# sidecar-run.sh: postern-sidecar run -- CMD.  CMD runs in a fresh network
# namespace (only lo) behind the bridge and the proxy engine; curl reaches
# an allowed host through the whole chain and gets 403 for a denied one;
# --allow layers on the config; CMD's exit status (and 128+N for a signal)
# comes back; SIGINT and SIGTERM to the sidecar stop CMD; nothing is left
# behind (socket directory, processes, namespaces); an unprivileged user
# can use it through a user namespace.  CMD sees an empty /tmp (its jail),
# so files of the test's world reach it as inherited descriptors
# (/dev/fd/3), not by their path under /tmp.
. "$top_srcdir/tests/integration/sidecar-lib.sh"
sc_world_up
[ -x "$top_builddir/postern-bridge" ] || skip "postern-bridge is not built"

XDG="$WORLD_DIR/xdg"
# 0711: a root caller's engine runs as another uid and must pass through.
mkdir -m 0711 "$XDG"
# sleep MARK: a process CMD leaves behind, found by its argv; unique to
# this run, so that a scenario running beside it (another checkout, a
# sanitizer build) is never taken for a leftover of ours.
MARK=$((1000000 + $$))
# Named namespaces, other scenarios' (which come and go in parallel) left
# out.  run makes only anonymous ones, which die with their last process.
netns_list() {
	ip netns list | sed 's/ .*//' | grep -v '^pw-' | sort
	ip netns list | sed 's/ .*//' | grep "^$WORLD_ID-" | sort
}
NETNS_BEFORE=$(netns_list)

run() {
	in_px env XDG_RUNTIME_DIR="$XDG" "$SIDECAR" run "$@"
}

# What each run must leave behind: nothing.
left_behind() {
	local what
	what=
	[ -z "$(ls -A "$XDG")" ] || what="$what socket-dir:$(ls -A "$XDG")"
	pgrep -f "^sleep $MARK" >/dev/null && what="$what process:sleep"
	# A bridge of ours: its jail has a socket of $XDG bound in.
	for p in $(pgrep -f "^postern-bridge --connect /run/postern/engine/proxy.sock"); do
		grep -qs "${XDG#/tmp}/postern-run" /proc/$p/mountinfo && what="$what process:bridge"
	done
	[ -z "$(ip netns pids "$WORLD_NS_PX")" ] || what="$what px-processes:$(ip netns pids "$WORLD_NS_PX" | tr '\n' ' ')"
	[ "$(netns_list)" = "$NETNS_BEFORE" ] || what="$what netns"
	echo "${what# }"
}

# 1. The whole chain, with --allow on top of the built-in default.
out=$(run --allow "allowed.test private" --allow "allowed.test:80 private" -- sh -c '
	curl -sS --max-time 10 --cacert /dev/fd/3 https://allowed.test/ | grep "^sni="
	curl -sS --max-time 10 -o /dev/null -w "forward %{http_code}\n" http://allowed.test/
	curl -sS --max-time 10 -o /dev/null -w "denied %{http_code}\n" http://other.test/
	curl -sS --max-time 10 -o /dev/null -w "connect %{http_connect}\n" --cacert /dev/fd/3 https://other.test/
	python3 -c "
import socket
try:
    socket.create_connection((\"$2\", 80), timeout=3); print(\"direct OK\")
except OSError as e:
    print(\"direct\", e.errno)"
	ip -o link show | wc -l
	exit 7' sh "$WORLD_CA" "$WORLD_UP4" 2>&1 3<"$WORLD_CA")
rc=$?
expect_eq 7 $rc "CMD's exit status comes back"
expect_match "^sni=allowed.test$" "$out" "HTTPS to an allowed host through the chain"
expect_match "^forward 200$" "$out" "plain HTTP to an allowed host"
expect_match "^denied 403$" "$out" "a denied host gets 403 on the forward path"
expect_match "^connect 403$" "$out" "a denied host gets 403 for CONNECT"
expect_match "^direct 101$" "$out" "direct egress from CMD fails (ENETUNREACH: only lo)"
expect_match "^1$" "$out" "the namespace has only one interface"
expect_eq "" "$(left_behind)" "nothing left behind after a normal run"

# 2. A config file, and --allow layered on it.
cat >"$WORLD_DIR/run.ini" <<-INI
	[proxy]
	log = stderr
	[defaults]
	allow_hosts = other.test:80 private
INI
out=$(run -c "$WORLD_DIR/run.ini" -- curl -sS -o /dev/null -o /dev/null -w "%{http_code}\n" \
	http://other.test/ http://allowed.test/ 2>/dev/null)
expect_eq "200
403" "$out" "the config allows other.test and not allowed.test"
out=$(run -c "$WORLD_DIR/run.ini" --allow "allowed.test:80 private" -- curl -sS \
	-o /dev/null -o /dev/null -w "%{http_code}\n" http://other.test/ http://allowed.test/ 2>/dev/null)
expect_eq "200
200" "$out" "--allow adds to the config"
out=$(run -c "$WORLD_DIR/nonexistent.ini" -- true 2>&1)
expect_eq 2 $? "a missing config is a config error (2), CMD does not run"

# 3. Status of a CMD killed by a signal; a CMD that leaves a process behind.
run -- sh -c 'kill -TERM $$' >/dev/null 2>&1
expect_eq 143 $? "a CMD killed by SIGTERM gives 143"
run -- sh -c "sleep $MARK & exit 3" >/dev/null 2>&1
expect_eq 3 $? "exit status with a leftover background process"
sleep 0.2
expect_eq "" "$(left_behind)" "the leftover process was ended"
run -- /nonexistent/cmd >/dev/null 2>&1
expect_eq 127 $? "a missing CMD gives 127"

# 4. SIGINT and SIGTERM to the sidecar while CMD runs.
for sig in INT:2 TERM:15; do
	num=${sig#*:}
	sig=${sig%:*}
	run -- sleep $MARK >"$WORLD_DIR/sig.out" 2>&1 &
	jpid=$!
	i=0
	while ! pgrep -f "^sleep $MARK" >/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	# The sidecar itself (the oldest process with that command line; the
	# engine it forked carries the same one), not the shell job around it.
	spid=$(pgrep -o -f "postern-sidecar run -- sleep $MARK")
	kill -$sig $spid
	wait $jpid
	rc=$?
	want=$((128 + num))
	expect_eq $want $rc "SIG$sig to the sidecar: CMD stopped, status $want"
	expect_eq "" "$(left_behind)" "nothing left behind after SIG$sig"
done

# SIGKILL cannot be handled: the children must still die with the sidecar
# (the socket directory is all that may remain).
run -- sleep $MARK >"$WORLD_DIR/sig.out" 2>&1 &
jpid=$!
i=0
while ! pgrep -f "^sleep $MARK" >/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
kill -KILL "$(pgrep -o -f "postern-sidecar run -- sleep $MARK")"
wait $jpid
i=0
while pgrep -f "sleep $MARK" >/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
expect_eq "" "$(pgrep -f "sleep $MARK")" "SIGKILL to the sidecar: engine, bridge and CMD die with it"
rm -rf "$XDG"/postern-run.*

# 5. An ordinary user, through a user namespace.
if ! world_userns_ok $AGENT_UID; then
	diag "uid $AGENT_UID cannot create a user namespace here: the unprivileged part is skipped"
else
	bins=$(world_bins_for $AGENT_UID "$SIDECAR" "$top_builddir/postern-bridge") ||
		die "cannot give uid $AGENT_UID the binaries"
	chown $AGENT_UID:$AGENT_UID "$XDG"
	out=$(in_px setpriv --reuid $AGENT_UID --regid $AGENT_UID --clear-groups \
		env XDG_RUNTIME_DIR="$XDG" "$bins/postern-sidecar" run --allow "allowed.test private" \
		--allow "other.test:80 private" -- sh -c '
		id -u
		curl -sS --max-time 10 --cacert /dev/fd/3 https://allowed.test/ | grep "^sni="
		curl -sS --max-time 10 -o /dev/null -w "forward %{http_code}\n" http://other.test/
		curl -sS --max-time 10 -o /dev/null -w "denied %{http_code}\n" http://other.test:8080/
		exit 5' sh 2>&1 3<"$WORLD_CA")
	rc=$?
	expect_eq 5 $rc "unprivileged: CMD's exit status comes back"
	expect_match "^$AGENT_UID$" "$out" "unprivileged: CMD keeps the caller's uid"
	expect_match "^sni=allowed.test$" "$out" "unprivileged: HTTPS through the chain"
	expect_match "^forward 200$" "$out" "unprivileged: plain HTTP through the chain"
	expect_match "^denied 403$" "$out" "unprivileged: a denied host gets 403"
	expect_eq "" "$(left_behind)" "unprivileged: nothing left behind"
fi

# 6. Where user namespaces are not allowed: a clear error, status 125.  The
# limit is set to 0 inside a user namespace of our own (the machine's own
# setting is left alone), mapping uids 0-65535 onto themselves.
cat >"$WORLD_DIR/nouserns.py" <<-'PY'
	import ctypes, os, sys
	libc = ctypes.CDLL(None, use_errno=True)
	r, w = os.pipe()
	r2, w2 = os.pipe()
	pid = os.fork()
	if pid == 0:
	    if libc.unshare(0x10000000) != 0:  # CLONE_NEWUSER
	        os._exit(90)
	    os.write(w, b"x")
	    os.read(r2, 1)
	    os.setgid(0)
	    os.setuid(0)
	    with open("/proc/sys/user/max_user_namespaces", "w") as f:
	        f.write("0")
	    os.execvp(sys.argv[1], sys.argv[1:])
	os.close(w)
	if os.read(r, 1) != b"x":
	    _, st = os.waitpid(pid, 0)
	    sys.exit(os.waitstatus_to_exitcode(st))
	for m in ("uid_map", "gid_map"):
	    with open("/proc/%d/%s" % (pid, m), "w") as f:
	        f.write("0 0 65536\n")
	os.write(w2, b"x")
	_, st = os.waitpid(pid, 0)
	sys.exit(os.waitstatus_to_exitcode(st))
PY
chown $AGENT_UID:$AGENT_UID "$XDG"
if world_userns_ok 0; then
	bins=$(world_bins_for $AGENT_UID "$SIDECAR" "$top_builddir/postern-bridge") ||
		die "cannot give uid $AGENT_UID the binaries"
	out=$(in_px "$WORLD_PYTHON" "$WORLD_DIR/nouserns.py" setpriv --reuid $AGENT_UID \
		--regid $AGENT_UID --clear-groups env XDG_RUNTIME_DIR="$XDG" "$bins/postern-sidecar" run -- \
		sh -c 'echo CMD-RAN' 2>&1)
	rc=$?
else
	rc=90
fi
if [ $rc = 90 ]; then
	diag "cannot make a user namespace to test this in"
else
	expect_eq 125 $rc "no user namespaces: status 125"
	expect_match "unprivileged user namespaces are not allowed" "$out" "no user namespaces: a clear error"
	expect_no_match "CMD-RAN" "$out" "no user namespaces: CMD did not run"
	expect_eq "" "$(left_behind)" "no user namespaces: nothing left behind"
fi
exit 0
