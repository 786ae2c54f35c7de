#!/bin/sh
# bridge-gvisor.sh: the gVisor recipe of README.md and postern-bridge(8),
# run as printed: Podman with runsc, gVisor's loopback as the only network,
# the session's directory as the only volume, the bridge as the entry
# point and uid 1000.  Only IMAGE and the directory change: the image is a
# directory (--rootfs) with the host's /usr read-only and the tested bridge
# on its PATH, and /run/postern/s1 is the world's s1, where the real
# postern-proxy listens for uid 1000.  Inside, the agent:
#   - is uid 1000, and the bridge started it (no refusal, no hang);
#   - reaches allowed.test through HTTP_PROXY, and over HTTPS through a
#     CONNECT (HTTPS_PROXY);
#   - is refused deny.test with the proxy's 403 and its reason;
#   - has no network but gVisor's loopback: lo is its only interface, and
#     a listener on the host's 127.0.0.1 is not there (refused), nor a host
#     UNIX socket outside the session's directory.
# Skips when runsc or podman is missing, or runsc cannot start a sandbox
# here.
. "$top_srcdir/tests/integration/lib/world.sh"
BRIDGE="$top_builddir/postern-bridge"
[ -x "$BRIDGE" ] || skip "postern-bridge is not built"
command -v runsc >/dev/null 2>&1 || skip "runsc (gVisor) is not installed"
command -v podman >/dev/null 2>&1 || skip "podman is not installed"
command -v curl >/dev/null 2>&1 || skip "curl is not installed"
world_up

README_LINE=$(. "$top_srcdir/tests/integration/lib-bridge.sh" &&
	br_doc_recipe "$top_srcdir/README.md" podman)
MAN_LINE=$(. "$top_srcdir/tests/integration/lib-bridge.sh" &&
	br_doc_recipe "$top_srcdir/bridge/postern-bridge.8" podman)
[ -n "$README_LINE" ] || die "README.md prints no podman recipe"
expect_eq "$README_LINE" "$MAN_LINE" "README.md and postern-bridge(8) print the same gVisor recipe"
case $README_LINE in
*runsc*"agent ..."*) ;;
*) die "the podman recipe is not the gVisor one: $README_LINE" ;;
esac

PD="$WORLD_DIR/podman"
S1="$WORLD_DIR/s1"
ROOTFS="$WORLD_DIR/rootfs"
mkdir -p "$PD" "$S1" "$ROOTFS/usr" "$ROOTFS/tmp" "$ROOTFS/etc" || die "mkdir"
chmod 0755 "$WORLD_DIR" "$S1" "$ROOTFS"
chmod 1777 "$ROOTFS/tmp"
for d in bin lib lib64 sbin; do
	ln -s "usr/$d" "$ROOTFS/$d"
done
cp "$BRIDGE" "$WORLD_DIR/postern-bridge" && chmod 0755 "$WORLD_DIR/postern-bridge" ||
	die "copy the bridge"
cp "$WORLD_CA" "$ROOTFS/ca.pem" && chmod 0644 "$ROOTFS/ca.pem" || die "copy the CA"
cat >"$PD/containers.conf" <<-CONF
	[containers]
	default_ulimits = []
	[engine]
	cgroup_manager = "cgroupfs"
	events_logger = "file"
CONF
export CONTAINERS_CONF="$PD/containers.conf"
PODMAN="podman --root $PD/root --runroot $PD/runroot --storage-driver vfs"
IMAGE="-v /usr:/usr:ro -v $WORLD_DIR/postern-bridge:/usr/local/bin/postern-bridge:ro --rootfs $ROOTFS"
CG_BEFORE=$(ls -d /sys/fs/cgroup/*/libpod_parent 2>/dev/null)
# Each run names its container's ID in a file: a sandbox still there at the
# end is removed, and so are the empty cgroups runsc leaves behind.
world_cleanup_hook() {
	local c f id
	[ -n "${LO_PID:-}" ] && kill "$LO_PID" 2>/dev/null
	[ -n "${US_PID:-}" ] && kill "$US_PID" 2>/dev/null
	for f in "$PD"/*.cid; do
		[ -s "$f" ] || continue
		id=$(cat "$f")
		$PODMAN rm -f -t 0 "$id" >/dev/null 2>&1
		for c in /sys/fs/cgroup/*/libpod_parent/"$id"; do
			[ -d "$c" ] && rmdir "$c" 2>/dev/null
		done
	done
	if [ -z "$CG_BEFORE" ]; then
		for c in /sys/fs/cgroup/*/libpod_parent; do
			[ -d "$c" ] || continue
			rmdir "$c/conmon" 2>/dev/null
			rmdir "$c" 2>/dev/null
		done
	fi
	return 0
}

# sandbox NAME LINE: run the shell line LINE (a podman run) with
# --cidfile $PD/NAME.cid, output in $PD/NAME.out; give it 30 s, then remove
# the container (a bridge that hangs must fail the test, not stall it).
# Sets RC (124 when it was stopped).
sandbox() {
	local name i
	name=$1
	LINE=$(printf '%s\n' "$2" | sed "s| run | run --cidfile $PD/$1.cid |")
	sh -c "$LINE" >"$PD/$name.out" 2>&1 </dev/null &
	SB_PID=$!
	i=0
	while kill -0 "$SB_PID" 2>/dev/null && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$SB_PID" 2>/dev/null; then
		[ -s "$PD/$name.cid" ] && $PODMAN rm -f -t 0 "$(cat "$PD/$name.cid")" >/dev/null 2>&1
		kill "$SB_PID" 2>/dev/null
		wait "$SB_PID"
		RC=124
	else
		wait "$SB_PID"
		RC=$?
	fi
}

# Can runsc start a sandbox here at all (its ptrace platform, no KVM)?
sandbox pre "$PODMAN --runtime runsc --runtime-flag network=none run --rm --network none $IMAGE /usr/bin/true"
[ "$RC" = 0 ] || skip "runsc cannot start a sandbox here: $(tail -n 1 "$PD/pre.out")"

cat >"$WORLD_DIR/postern.ini" <<EOF
[proxy]
listen = unix:$S1/proxy.sock owner=1000 group=1000 mode=0600
log = $PROXY_LOG
dns_servers = $WORLD_DNS
[defaults]
allow_hosts = allowed.test private
EOF
proxy_start "$WORLD_DIR/postern.ini" || die "no proxy"

# On the host, outside the sandbox: a TCP listener on the host's loopback
# and a UNIX socket next to (not in) the session's directory, both open to
# anyone, so that only the sandbox can keep the agent from them.
cat >"$WORLD_DIR/listen.py" <<'EOF'
import os, socket, sys
kind, where, ready = sys.argv[1:4]
if kind == "tcp":
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    name = str(s.getsockname()[1])
else:
    s = socket.socket(socket.AF_UNIX)
    s.bind(where)
    os.chmod(where, 0o777)
    name = where
s.listen(8)
with open(ready + ".tmp", "w") as f:
    f.write(name)
os.rename(ready + ".tmp", ready)
while True:
    c, _ = s.accept()
    c.sendall(b"host\n")
    c.close()
EOF
"$WORLD_PYTHON" "$WORLD_DIR/listen.py" tcp - "$WORLD_DIR/lo.port" &
LO_PID=$!
"$WORLD_PYTHON" "$WORLD_DIR/listen.py" unix "$WORLD_DIR/host.sock" "$WORLD_DIR/host.ready" &
US_PID=$!
i=0
until [ -e "$WORLD_DIR/lo.port" ] && [ -e "$WORLD_DIR/host.ready" ]; do
	i=$((i + 1))
	[ $i -lt 50 ] || die "the host listeners did not start"
	sleep 0.1
done
LO_PORT=$(cat "$WORLD_DIR/lo.port")
# Both answer from outside a sandbox: or the checks below prove nothing.
expect_eq host "$(curl -s --max-time 5 telnet://127.0.0.1:"$LO_PORT" </dev/null)" \
	"the host's loopback listener answers outside the sandbox"
expect_eq host "$("$WORLD_PYTHON" -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(9).decode().strip())' \
	"$WORLD_DIR/host.sock" 2>&1)" "the host UNIX socket answers outside the sandbox"

cat >"$ROOTFS/probe.sh" <<EOF
# The agent: what it is, and what it reaches.
echo "id=\$(id -u):\$(id -g)"
echo "http_proxy=\$HTTP_PROXY"
curl -sS --max-time 10 http://allowed.test/gvisor 2>&1 | tr -d '\r' | sed 's/^/allowed: /'
curl -sS --max-time 10 --cacert /ca.pem https://allowed.test/gvisor-tls 2>&1 | tr -d '\r' |
	sed 's/^/tls: /'
curl -sS --max-time 10 -D - -o /dev/null http://deny.test/ 2>&1 | tr -d '\r' | sed 's/^/deny: /'
python3 - "$LO_PORT" "$WORLD_DIR/host.sock" <<'PY'
import socket, sys
print("ifaces=" + ",".join(n for _, n in socket.if_nameindex()))
s = socket.socket()
s.settimeout(5)
try:
    s.connect(("127.0.0.1", int(sys.argv[1])))
    print("hostlo=connected: " + s.recv(9).decode().strip())
except OSError as e:
    print("hostlo=" + type(e).__name__)
u = socket.socket(socket.AF_UNIX)
try:
    u.connect(sys.argv[2])
    print("hostsock=connected")
except OSError as e:
    print("hostsock=" + type(e).__name__)
PY
echo done
EOF
chmod 0644 "$ROOTFS/probe.sh"

# The recipe, as printed, with the world's directory and image.
line=$(printf '%s\n' "$README_LINE" | sed -e "s|^podman |$PODMAN |" -e "s| IMAGE | $IMAGE |" \
	-e "s|/run/postern/s1|$S1|g" -e 's|agent \.\.\.|sh /probe.sh|')
t0=$(date +%s)
sandbox agent "$line"
t1=$(date +%s)
diag "$LINE"
diag "the sandbox ran for $((t1 - t0)) s"
out=$(cat "$PD/agent.out")
world__show "$out"
expect_eq 0 "$RC" "the recipe exits 0 (124: it hung)"
expect_no_match "refusing|not starting|error:" "$out" "the bridge starts under gVisor"
expect_match "^id=1000:1000$" "$out" "the agent is uid 1000"
expect_match "^http_proxy=http://127\.0\.0\.1:3128$" "$out" "the agent's HTTP_PROXY is the bridge"
expect_match "^allowed: GET /gvisor HTTP/1\.1$" "$out" "HTTP_PROXY reaches allowed.test"
expect_match "^tls: sni=allowed\.test$" "$out" "a CONNECT through HTTPS_PROXY reaches allowed.test"
expect_match "^deny: HTTP/1\.1 403 " "$out" "deny.test is refused 403"
expect_match "^deny: X-Postern-Reason: host_not_allowed$" "$out" "with the proxy's reason"
expect_match "^ifaces=lo$" "$out" "the sandbox's only interface is lo"
expect_match "^hostlo=ConnectionRefusedError$" "$out" "the host's loopback is not the sandbox's"
expect_match "^hostsock=FileNotFoundError$" "$out" "no host UNIX socket outside the session's directory"
expect_match "^done$" "$out" "the agent ran to its end"
expect_match '"host":"allowed.test"|allowed\.test' "$(cat "$PROXY_LOG" 2>/dev/null)" \
	"the proxy logged the agent's requests"
