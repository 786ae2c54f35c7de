#!/bin/sh
# sidecar-run-jail.sh: what CMD can reach from `postern-sidecar run`,
# started by root and by an ordinary user, tried as a hostile CMD would:
#   - no capability at all (CapEff, CapPrm, CapBnd, CapAmb are 0) and never
#     kernel uid 0 (a file CMD creates is owned, seen from outside, by its
#     uid: nobody, or SUDO_UID, or --uid for root; the caller's for a user);
#   - no process outside its PID namespace: the launcher's pid is not in
#     its /proc, so nsenter --net=/proc/<launcher>/ns/net fails;
#   - no environment of anyone else: a secret variable of the launcher is in
#     no /proc/*/environ CMD can read, nor in its own;
#   - no System V IPC of the host: a 0666 shared memory segment made
#     outside is not there;
#   - no host UNIX socket: listening stand-ins in /run, /tmp, /var/tmp, a
#     home-like directory (one bound in the launcher's network namespace,
#     one in the root one) and an abstract one are all refused, while the
#     two passed with --socket (one under /tmp, one outside) are reached.
. "$top_srcdir/tests/integration/sidecar-lib.sh"
sc_world_up
BRIDGE="$(dirname "$SIDECAR")/postern-bridge"
[ -x "$BRIDGE" ] || skip "postern-bridge is not built"

SECRET="postern-secret-$$-$WORLD_ID"
export POSTERN_TEST_SECRET="$SECRET"
# A home-like directory outside /tmp, /var/tmp, /run and /dev/shm.
HOMELIKE=$(mktemp -d /var/lib/postern-jail.XXXXXX) || die "mktemp"
chmod 1777 "$HOMELIKE"
RUNSOCK="/run/pw-jail-$WORLD_ID.sock"
VARTMPSOCK="/var/tmp/pw-jail-$WORLD_ID.sock"
ABSTRACT="@pw-jail-$WORLD_ID"
SERVER_PIDS=
SHMID=$(ipcmk -M 4096 -p 0666 2>/dev/null | awk '{print $NF}')
[ -n "$SHMID" ] || die "ipcmk could not make a shared memory segment"
ipcs -m | awk '{ print $2 }' | grep -qx "$SHMID" || die "ipcs does not list segment $SHMID"
world_cleanup_hook() {
	ipcrm -m "$SHMID" 2>/dev/null
	for p in $SERVER_PIDS; do kill "$p" 2>/dev/null; done
	rm -rf "$HOMELIKE"
	rm -f "$RUNSOCK" "$VARTMPSOCK"
}

# The stand-ins: each answers "hello NAME" to whoever connects.  0666, so
# that only the sandbox, not file permissions, can keep CMD out.
cat >"$WORLD_DIR/server.py" <<-'PY'
	import os, socket, sys, threading
	def serve(s, name):
	    while True:
	        c, _ = s.accept()
	        c.sendall(b"hello " + name.encode() + b"\n")
	        c.close()
	for p in sys.argv[1:]:
	    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
	    if p.startswith("@"):
	        s.bind("\0" + p[1:])
	    else:
	        s.bind(p)
	        os.chmod(p, 0o666)
	    s.listen(16)
	    threading.Thread(target=serve, args=(s, os.path.basename(p)), daemon=True).start()
	print("ready", flush=True)
	threading.Event().wait()
PY
# The probe CMD runs (read from descriptor 4: CMD sees no /tmp of ours).
cat >"$WORLD_DIR/probe.py" <<-'PY'
	import errno, socket, sys
	for p in sys.argv[1:]:
	    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
	    s.settimeout(3)
	    try:
	        s.connect("\0" + p[1:] if p.startswith("@") else p)
	        print("sock", p, "REACHED", s.recv(64).decode().strip())
	    except OSError as e:
	        print("sock", p, "refused", errno.errorcode.get(e.errno, e.errno))
PY
start_server() {
	"$@" "$WORLD_PYTHON" "$WORLD_DIR/server.py" $SOCKS >>"$WORLD_DIR/server.out" 2>&1 &
	SERVER_PIDS="$SERVER_PIDS $!"
}
# Bound where the sidecar runs (px), and one in the root network namespace.
SOCKS="$RUNSOCK $WORLD_DIR/tmp.sock $VARTMPSOCK $HOMELIKE/agent.sock $ABSTRACT \
$WORLD_DIR/keep.sock $HOMELIKE/keep.sock"
start_server in_px
SOCKS="$HOMELIKE/rootns.sock"
start_server env
i=0
until [ -S "$HOMELIKE/keep.sock" ] && [ -S "$HOMELIKE/rootns.sock" ] || [ $i -gt 100 ]; do
	sleep 0.05; i=$((i + 1))
done
HIDDEN="$RUNSOCK $WORLD_DIR/tmp.sock $VARTMPSOCK $HOMELIKE/agent.sock $HOMELIKE/rootns.sock $ABSTRACT"
KEPT="$WORLD_DIR/keep.sock $HOMELIKE/keep.sock"
out=$(in_px "$WORLD_PYTHON" "$WORLD_DIR/probe.py" $HIDDEN $KEPT 2>&1)
expect_eq 8 "$(echo "$out" | grep -c REACHED)" "outside the sandbox every stand-in answers"

# What CMD reports about itself: $1 is the launcher's pid, $2 the file it
# creates, $3 the secret, $4 the host's segment, the rest are sockets to try.
CMD='echo "uid $(id -u)"
grep -E "^Cap(Eff|Prm|Bnd|Amb):" /proc/self/status
[ -e /proc/$1 ] && echo "launcher visible" || echo "launcher hidden"
nsenter --net=/proc/$1/ns/net true 2>/dev/null && echo "nsenter joined" || echo "nsenter failed"
echo "pid1 $(tr "\0" "\n" </proc/1/cmdline | head -n 1)"
n=0
for f in /proc/[0-9]*/environ; do
	tr "\0" "\n" <"$f" 2>/dev/null | grep -q "$3" && { echo "secret in $f"; n=$((n + 1)); }
done
env | grep -q "$3" && echo "secret in own env"
ipcs -m | awk "{ print \$2 }" | grep -qx "$4" && echo "host shm visible" || echo "host shm hidden"
touch "$2" && echo "created"
shift 4
python3 /dev/fd/4 "$@"'

# check WHO WANT_UID OUTPUT: the assertions shared by every run.
check() {
	local who want out
	who=$1 want=$2 out=$3
	expect_match "^uid $want$" "$out" "$who: CMD runs as uid $want"
	for c in CapEff CapPrm CapBnd CapAmb; do
		expect_match "^$c:[[:space:]]+0+$" "$out" "$who: CMD's $c is empty"
	done
	expect_match "^launcher hidden$" "$out" "$who: the launcher's pid is not in CMD's /proc"
	expect_match "^nsenter failed$" "$out" "$who: CMD cannot join the launcher's network namespace"
	expect_match "^pid1 postern-bridge$" "$out" "$who: PID 1 of CMD's namespace is the bridge"
	expect_no_match "^secret in" "$out" "$who: the launcher's secret is in no environment CMD can read"
	expect_match "^host shm hidden$" "$out" "$who: the host's System V shared memory is out of reach"
	expect_match "^created$" "$out" "$who: CMD created a file"
	expect_eq "$want" "$(stat -c %u "$HOMELIKE/made" 2>/dev/null)" \
		"$who: seen from outside, CMD's file belongs to kernel uid $want (not 0)"
	rm -f "$HOMELIKE/made"
	for s in $HIDDEN; do
		expect_match "^sock $s refused" "$out" "$who: host socket $s is out of reach"
	done
}

run_probe() {
	"$@" -- sh -c "$CMD" sh $$ "$HOMELIKE/made" "$SECRET" "$SHMID" $HIDDEN $KEPT 2>&1 \
		4<"$WORLD_DIR/probe.py"
}

# 1. Root, no --socket: the default identity, nobody.
out=$(run_probe in_px env -u SUDO_UID -u SUDO_GID "$SIDECAR" run)
check root 65534 "$out"
for s in $KEPT; do
	expect_match "^sock $s refused" "$out" "root: $s is out of reach without --socket"
done

# 2. Root, with --socket for the two kept ones, as sudo's user.
out=$(run_probe in_px env SUDO_UID=$AGENT_UID SUDO_GID=$AGENT_UID "$SIDECAR" run \
	--socket "$WORLD_DIR/keep.sock" --socket "$HOMELIKE/keep.sock")
check "root, SUDO_UID=$AGENT_UID" $AGENT_UID "$out"
for s in $KEPT; do
	expect_match "^sock $s REACHED hello" "$out" "root: --socket $s is reached"
done

# 3. --uid, and the uids it refuses.
out=$(in_px "$SIDECAR" run --uid 4242 -- id -u 2>/dev/null)
expect_eq 4242 "$out" "root: --uid 4242 runs CMD as 4242"
out=$(in_px "$SIDECAR" run --uid 65532 -- true 2>&1)
expect_eq 2 $? "root: --uid of the engine's own uid is refused (2)"
expect_match "proxy engine runs as that uid" "$out" "and says why"
out=$(in_px "$SIDECAR" run --socket "$HOMELIKE" -- true 2>&1)
expect_eq 2 $? "--socket of something that is not a socket is refused (2)"

# 4. An ordinary user.  It must reach the binaries: copy them when the
# build tree is not open to it (a checkout under /root).
if ! world_userns_ok $AGENT_UID; then
	diag "uid $AGENT_UID cannot create a user namespace here: the user part is skipped"
	exit 0
fi
US=$(world_bins_for $AGENT_UID "$SIDECAR" "$BRIDGE") || die "cannot copy the binaries"
US="$US/$(basename "$SIDECAR")"
mkdir -m 0700 "$WORLD_DIR/xdg-user"
chown $AGENT_UID:$AGENT_UID "$WORLD_DIR/xdg-user"
out=$(run_probe in_px setpriv --reuid $AGENT_UID --regid $AGENT_UID --clear-groups \
	env XDG_RUNTIME_DIR="$WORLD_DIR/xdg-user" "$US" run)
check "user $AGENT_UID" $AGENT_UID "$out"
out=$(run_probe in_px setpriv --reuid $AGENT_UID --regid $AGENT_UID --clear-groups \
	env XDG_RUNTIME_DIR="$WORLD_DIR/xdg-user" "$US" run --socket "$WORLD_DIR/keep.sock" \
	--socket "$HOMELIKE/keep.sock")
for s in $KEPT; do
	expect_match "^sock $s REACHED hello" "$out" "user: --socket $s is reached"
done
expect_match "^sock $RUNSOCK refused" "$out" "user: with --socket, the others stay out of reach"
exit 0
