#!/bin/sh
# sidecar-podman.sh: the FROM scratch image.  podman builds contrib/Containerfile
# from the static binaries (POSTERN_STATIC_DIR's, the tested sidecar's when
# static, else those make check builds in build-static/), the image has no
# shell, and a container of it, joined to the world's px namespace with
# NET_ADMIN, SETUID and SETGID only, locks the namespace and serves: the
# agent's direct egress is ENETUNREACH, an allowed name works through
# 127.0.0.1:3128, a denied one gets 403; "podman stop" ends it with status 0
# and the socket file gone.  All podman state lives in the test's
# own directory and goes with it.
. "$top_srcdir/tests/integration/sidecar-lib.sh"
command -v podman >/dev/null 2>&1 || skip "podman is not installed"
# The static binaries: POSTERN_STATIC_DIR's, this build's when it is static,
# else build-static/build's, which make check builds before this test.
is_static() { file -L "$1" 2>/dev/null | grep -q 'statically linked'; }
BIN="${POSTERN_STATIC_DIR:-$top_builddir}"
[ -z "$POSTERN_STATIC_DIR" ] && ! is_static "$BIN/postern-sidecar" &&
	BIN="$top_builddir/build-static/build"
for b in postern-sidecar postern-bridge; do
	is_static "$BIN/$b" && continue
	[ -n "$POSTERN_STATIC_DIR" ] && skip "$BIN/$b (POSTERN_STATIC_DIR) is not a static binary"
	[ -s "$top_builddir/build-static/build.log" ] &&
		skip "the static build failed: see $top_builddir/build-static/build.log"
	skip "no static $BIN/$b: run \"make check\" as root (it builds them), or \"make static-binaries\" and re-run"
done
sc_world_up

PD="$WORLD_DIR/podman"
mkdir -p "$PD/ctx" "$PD/vol"
# The volume is what an emptyDir is: 0777, shared.
chmod 0777 "$PD/vol"
cp "$BIN/postern-sidecar" "$BIN/postern-bridge" "$PD/ctx/"
# No default ulimits (raising RLIMIT_NOFILE may be refused where this runs);
# cgroupfs and a file event log: no systemd needed.
cat >"$PD/containers.conf" <<-CONF
	[containers]
	default_ulimits = []
	[engine]
	cgroup_manager = "cgroupfs"
	events_logger = "file"
CONF
export CONTAINERS_CONF="$PD/containers.conf"
RUNTIME=
command -v runc >/dev/null 2>&1 && RUNTIME="--runtime runc"
# shellcheck disable=SC2086
pm() { podman --root "$PD/root" --runroot "$PD/runroot" --storage-driver vfs $RUNTIME "$@"; }
CTR="postern-sc-$$"
IMG="localhost/postern-test:$$"
# podman's cgroupfs manager leaves an empty libpod_parent behind; remove it
# afterwards unless it was there before (rmdir only removes empty ones).
CG_BEFORE=$(ls -d /sys/fs/cgroup/*/libpod_parent 2>/dev/null)
world_cleanup_hook() {
	local c
	pm rm -f -t 0 "$CTR" >/dev/null 2>&1
	pm rmi -f "$IMG" >/dev/null 2>&1
	in_px "$SIDECAR" unlock >/dev/null 2>&1
	if [ -z "$CG_BEFORE" ]; then
		for c in /sys/fs/cgroup/*/libpod_parent; do
			[ -d "$c" ] || continue
			rmdir "$c/conmon" 2>/dev/null
			rmdir "$c" 2>/dev/null
		done
	fi
	return 0
}

out=$(pm build -q -f "$top_srcdir/contrib/Containerfile" --build-arg BIN=. -t "$IMG" "$PD/ctx" 2>&1)
expect_eq 0 $? "podman build of contrib/Containerfile"
out=$(pm run --rm --network none "$IMG" --help 2>&1) ||
	skip "this machine cannot run containers: $(echo "$out" | tail -n 1)"
expect_match "^usage: postern-sidecar" "$out" "the image's entrypoint is postern-sidecar"
expect_eq "0:0" "$(pm image inspect -f '{{.Config.User}}' "$IMG")" "numeric USER"
out=$(pm run --rm --network none --entrypoint /bin/sh "$IMG" -c true 2>&1)
expect_ne 0 $? "the image has no shell"
out=$(pm run --rm --network none --entrypoint /usr/bin/postern-bridge "$IMG" --help 2>&1)
expect_match "postern-bridge" "$out" "the bridge is in the image"

cat >"$PD/postern.ini" <<-INI
	[proxy]
	log = stderr
	dns_servers = $WORLD_DNS
	[defaults]
	allow_hosts = allowed.test private
INI
chmod 644 "$PD/postern.ini"
NETNS="/run/netns/$WORLD_NS_PX"

# Without SETUID/SETGID the sidecar cannot drop privileges nor probe as
# another uid, and must refuse rather than serve as root.
out=$(pm run --rm --network "ns:$NETNS" --cap-drop ALL --cap-add NET_ADMIN \
	-v "$PD/postern.ini:/etc/postern/postern.ini:ro" "$IMG" \
	-c /etc/postern/postern.ini --probe-addr 10.200.1.77 2>&1)
expect_ne 0 $? "NET_ADMIN alone: the sidecar refuses to start"
expect_match "refusing to start the proxy" "$out" "and says so"
in_px "$SIDECAR" unlock >/dev/null 2>&1

# wait_serving NAME: until the container's log says it serves (10 s).
wait_serving() {
	local i
	i=0
	while ! pm logs "$1" 2>&1 | grep -q "serving as uid" && [ $i -lt 100 ]; do
		[ "$(pm inspect -f '{{.State.Running}}' "$1" 2>/dev/null)" = true ] || break
		sleep 0.1
		i=$((i + 1))
	done
}

# Without a volume the sidecar makes /run/postern for the proxy itself.
pm run -d --name "$CTR" --network "ns:$NETNS" --cap-drop ALL \
	--cap-add NET_ADMIN,SETUID,SETGID -v "$PD/postern.ini:/etc/postern/postern.ini:ro" \
	"$IMG" -c /etc/postern/postern.ini --probe-addr 10.200.1.77 >/dev/null ||
	die "podman run -d failed"
wait_serving "$CTR"
expect_match "serving as uid 65532" "$(pm logs "$CTR" 2>&1)" "no volume: it serves (socket directory made)"
pm stop -t 10 "$CTR" >/dev/null 2>&1
expect_eq 0 "$(pm inspect -f '{{.State.ExitCode}}' "$CTR")" "no volume: podman stop gives status 0"
pm rm -f "$CTR" >/dev/null 2>&1

# A mounted directory the proxy uid cannot write to: refused, with a hint.
mkdir -m 0755 "$PD/rootvol"
out=$(pm run --rm --network "ns:$NETNS" --cap-drop ALL --cap-add NET_ADMIN,SETUID,SETGID \
	-v "$PD/postern.ini:/etc/postern/postern.ini:ro" -v "$PD/rootvol:/run/postern" \
	"$IMG" -c /etc/postern/postern.ini --probe-addr 10.200.1.77 2>&1)
expect_ne 0 $? "a socket directory the proxy cannot write: the sidecar exits non-zero"
expect_match "/run/postern is not writable by uid 65532" "$out" "and says why"

pm run -d --name "$CTR" --network "ns:$NETNS" --cap-drop ALL \
	--cap-add NET_ADMIN,SETUID,SETGID \
	-v "$PD/postern.ini:/etc/postern/postern.ini:ro" -v "$PD/vol:/run/postern" \
	"$IMG" -c /etc/postern/postern.ini \
	--probe-addr 10.200.1.77 --probe-addr fd00:200:1::77 >/dev/null ||
	die "podman run -d failed"
wait_serving "$CTR"
logs=$(pm logs "$CTR" 2>&1)
expect_match "lock-down proven" "$logs" "the container proved the lock-down"
expect_match "serving as uid 65532" "$logs" "and serves as 65532"
# Without NET_RAW the nftables lock-down still holds and is proven by its
# drop counters; the sidecar says what it could not try.
expect_match "check passed: nftables: inet postern output drops" "$logs" \
	"the container installed and read back the nftables tables"
expect_match "check passed: uid 65533: UDP bound to veth-up \(SO_BINDTODEVICE\).*dropped by the filter" \
	"$logs" "the container's escape probe: a device-bound datagram dropped"
expect_match "note: no CAP_NET_RAW" "$logs" "without NET_RAW it says what it could not prove live"

expect_eq ENETUNREACH "$(conn $AGENT_UID tcp "$WORLD_UP4" 443)" "agent: direct TCP is ENETUNREACH"
expect_eq ENETUNREACH "$(conn $AGENT_UID udp "$WORLD_DNS" 53)" "agent: UDP DNS is ENETUNREACH"
out=$(as_uid $AGENT_UID curl -sS --max-time 10 -x http://127.0.0.1:3128 --cacert "$WORLD_CA" \
	https://allowed.test/ 2>&1)
expect_match "^sni=allowed.test$" "$out" "agent: an allowed name through the container's proxy"
out=$(as_uid $AGENT_UID curl -s --max-time 10 -x http://127.0.0.1:3128 -o /dev/null \
	-w "%{http_connect}" --cacert "$WORLD_CA" https://other.test/ 2>&1)
expect_eq 403 "$out" "agent: a denied name gets 403"
expect_eq yes "$([ -S "$PD/vol/proxy.sock" ] && echo yes || echo no)" "the UNIX socket is in the volume"

pm stop -t 10 "$CTR" >/dev/null 2>&1
expect_eq 0 "$(pm inspect -f '{{.State.ExitCode}}' "$CTR")" "podman stop: exit status 0"
expect_eq no "$([ -e "$PD/vol/proxy.sock" ] && echo yes || echo no)" "the socket file is removed"
exit 0
