#!/bin/sh
# podman-kube.sh: "podman kube play contrib/podman/pod.yaml" runs on this
# machine's Podman (Debian 12's 4.3), in the world's px namespace, with the
# images built here from the static binaries and no registry: postern:0.1.0
# from contrib/Containerfile, and an agent image of the host's sh and curl.
# The init container seals the namespace and exits 0 before the agent
# starts (podman's event log says so: podman removes an init container
# once it has run); the agent (uid 1000, no capability) then reaches an
# allowed host through the proxy, gets 403 for another, and cannot connect
# anywhere directly; without the proxy variables it reaches the allowed
# host by name through the proxy's DNS stub and capture (--capture,
# dnsConfig), and another name does not resolve.  The played file is the shipped one with only the
# probe addresses kept inside the world (--probe-addr); the agent image's
# entrypoint is the test's agent; the config is a ConfigMap of the test's
# own (--configmap), as contrib/k8s/postern-configmap.yaml would be.
. "$top_srcdir/tests/integration/sidecar-lib.sh"
command -v podman >/dev/null 2>&1 || skip "podman is not installed"
command -v catatonit >/dev/null 2>&1 || [ -x /usr/libexec/podman/catatonit ] ||
	skip "catatonit is not installed (podman's pods need it: apt-get install catatonit)"
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
for b in sh curl; do
	command -v $b >/dev/null 2>&1 || skip "$b is not installed (the agent image is made of it)"
done
sc_world_up

PD="$WORLD_DIR/podman"
mkdir -p "$PD/ctx" "$PD/agent/rootfs"
cp "$BIN/postern-sidecar" "$BIN/postern-bridge" "$PD/ctx/"
. "$top_srcdir/tests/integration/lib-podman.sh"
podman_store "$PD"
CG_BEFORE=$(ls -d /sys/fs/cgroup/*/libpod_parent 2>/dev/null)
world_cleanup_hook() {
	local c
	pm kube down "$PD/pod.yaml" >/dev/null 2>&1
	pm pod rm -f -t 0 agent >/dev/null 2>&1
	pm rmi -a -f >/dev/null 2>&1
	in_px "$SIDECAR" unlock >/dev/null 2>&1
	if [ -z "$CG_BEFORE" ]; then
		for c in /sys/fs/cgroup/*/libpod_parent; do
			[ -d "$c" ] || continue
			for d in "$c"/*/; do rmdir "$d" 2>/dev/null; done
			rmdir "$c" 2>/dev/null
		done
	fi
	return 0
}

out=$(pm build -q -f "$top_srcdir/contrib/Containerfile" --build-arg BIN=. \
	-t localhost/postern:0.1.0 "$PD/ctx" 2>&1)
expect_eq 0 $? "podman build of contrib/Containerfile as postern:0.1.0"

# The agent image: the host's sh and curl with the libraries they load,
# at the same paths (no registry, nothing but these files).
for b in $(command -v sh) $(command -v curl); do
	for f in "$b" $(ldd "$b" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) .*/\1/p'); do
		mkdir -p "$PD/agent/rootfs$(dirname "$f")"
		cp -L "$f" "$PD/agent/rootfs$f" || die "copy $f into the agent image"
	done
done
mkdir -p "$PD/agent/rootfs/bin" "$PD/agent/rootfs/etc" "$PD/agent/rootfs/tmp"
[ -e "$PD/agent/rootfs/bin/sh" ] || cp -L "$(command -v sh)" "$PD/agent/rootfs/bin/sh"
# The agent: what it reaches, one line each, then it exits.
cat >"$PD/agent/rootfs/agent.sh" <<'EOF'
[ "$*" = "agent --some-flag" ] || echo "args=$*"
# Before anything else: the init container has sealed the namespace.
curl -s --noproxy '*' --max-time 5 -o /dev/null http://10.200.1.2/
echo "first=$?"
c=$(curl -s --retry 30 --retry-connrefused --retry-delay 1 --max-time 60 -o /dev/null \
	-w '%{http_code}' http://allowed.test/pod)
echo "allowed=$c"
c=$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' http://other.test/)
echo "denied=$c"
# Transparent capture: by name, without the proxy variables.
while read -r l; do echo "resolv.conf: $l"; done </etc/resolv.conf
c=$(curl -sS --noproxy '*' --max-time 10 -o /dev/null -w '%{http_code}' http://allowed.test/cap 2>&1)
echo "captured=$c"
curl -s --noproxy '*' --max-time 5 -o /dev/null http://other.test/
echo "captured-denied=$?"
curl -s --noproxy '*' --max-time 5 -o /dev/null http://10.200.1.2/
echo "direct=$?"
curl -s --noproxy '*' --max-time 5 -o /dev/null 'http://[fd00:200:1::2]/'
echo "direct6=$?"
EOF
printf 'FROM scratch\nCOPY rootfs/ /\nUSER 1000:1000\nENTRYPOINT ["/bin/sh", "/agent.sh"]\n' \
	>"$PD/agent/Containerfile"
out=$(pm build -q -f "$PD/agent/Containerfile" -t localhost/agent-image:latest "$PD/agent" 2>&1)
expect_eq 0 $? "podman build of the agent image"
out=$(pm run --rm --network none --entrypoint /bin/sh localhost/agent-image:latest -c 'curl --version' 2>&1) ||
	skip "this machine cannot run containers: $(echo "$out" | tail -n 1)"

cat >"$PD/configmap.yaml" <<-YAML
	apiVersion: v1
	kind: ConfigMap
	metadata:
	  name: postern-config
	data:
	  postern.ini: |
	    [proxy]
	    user = 65532
	    log = stderr
	    dns_servers = $WORLD_DNS
	    [defaults]
	    allow_hosts = allowed.test:80 private
YAML

# The shipped pod, with the probes aimed inside the world; nothing else
# changes (the agent's "agent --some-flag" goes to the image's entrypoint).
sed -e 's|^      args: \["lockdown-check", "-c", "/etc/postern/postern.ini"\]$|      args: ["lockdown-check", "-c", "/etc/postern/postern.ini", "--probe-addr", "10.200.1.77", "--probe-addr", "fd00:200:1::77"]|' \
	-e 's|^      args: \["-c", "/etc/postern/postern.ini", "--user", "65532",$|      args: ["-c", "/etc/postern/postern.ini", "--user", "65532", "--probe-addr", "10.200.1.77", "--probe-addr", "fd00:200:1::77",|' \
	"$top_srcdir/contrib/podman/pod.yaml" >"$PD/pod.yaml"
[ "$(diff "$top_srcdir/contrib/podman/pod.yaml" "$PD/pod.yaml" | grep -c '^>')" = 2 ] ||
	die "the shipped pod.yaml no longer has the two lines this test replaces"

# Podman 4.3 cannot join a pod to a named namespace (ns:PATH): it plays
# the pod from inside px with the host's network, which is px (nsenter,
# not "ip netns exec", which would hide /sys/fs/cgroup).
# With the host's network Podman also gives the containers the host's
# /etc/resolv.conf, whatever dnsConfig says: one naming 127.0.0.1 (what
# dnsConfig gives a pod with a network of its own) is bound over it in a
# mount namespace of podman's own.
printf 'nameserver 127.0.0.1\n' >"$PD/resolv.conf"
chmod 644 "$PD/resolv.conf"
out=$(nsenter --net="/run/netns/$WORLD_NS_PX" unshare -m --propagation private sh -c '
	mount --bind "$1" /etc/resolv.conf || exit 125
	shift
	exec "$@"' sh "$PD/resolv.conf" podman --root "$PD/root" --runroot "$PD/runroot" \
	--storage-driver vfs $RUNTIME kube play --network host \
	--configmap "$PD/configmap.yaml" "$PD/pod.yaml" 2>&1)
rc=$?
diag "$out"
expect_eq 0 $rc "podman kube play contrib/podman/pod.yaml"
i=0
while [ "$(pm inspect -f '{{.State.Status}}' agent-agent 2>/dev/null)" != exited ] && [ $i -lt 600 ]; do
	sleep 0.1
	i=$((i + 1))
done
expect_eq exited "$(pm inspect -f '{{.State.Status}}' agent-agent 2>/dev/null)" "the agent ran to its end"
# The order of events: the init container ended, with status 0, before
# the agent started.
ev=$(pm events --stream=false --filter type=container \
	--format '{{.Name}} {{.Status}} {{.ContainerExitCode}}' 2>&1 | grep '^agent-')
order=$(echo "$ev" | awk '
	$1 == "agent-lockdown" && $2 == "died" { died = NR; code = $3 }
	$1 == "agent-agent" && $2 == "start" && !start { start = NR }
	END { print (died && start && died < start) ? "init-first " code : "agent-first" }')
expect_eq "init-first 0" "$order" "the lock-down init container exited 0 before the agent started"
[ "$order" = "init-first 0" ] || diag "$ev"
diag "$(pm ps -a --format '{{.Names}} {{.Status}}' 2>&1)"
diag "$(pm logs agent-postern 2>&1 | tail -n 30)"
logs=$(pm logs agent-agent 2>&1)
diag "$logs"
expect_match "^allowed=200$" "$logs" "the agent reaches the allowed host through the proxy"
expect_match "^denied=403$" "$logs" "another host is refused with 403"
expect_match "^captured=200$" "$logs" "without the proxy variables, the allowed host is reached through capture"
expect_match "^captured-denied=6$" "$logs" "another host does not resolve (curl: 6)"
expect_no_match "^args=" "$logs" "the agent got the shipped args"
expect_match "^first=7$" "$logs" "the agent's very first direct connection fails"
expect_match "^direct=7$" "$logs" "a direct IPv4 connection fails (curl: could not connect)"
expect_match "^direct6=7$" "$logs" "a direct IPv6 connection fails"
expect_match "serving as uid 65532" "$(pm logs agent-postern 2>&1)" "the proxy container serves as 65532"
out=$(pm kube down "$PD/pod.yaml" 2>&1)
expect_eq 0 $? "podman kube down"
exit 0
