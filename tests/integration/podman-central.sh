#!/bin/sh
# podman-central.sh: the central proxy of contrib/k8s/central/, played with
# "podman kube play" on this machine's Podman (Debian 12's 4.3): the
# shipped Deployment (postern-proxy:0.1.0 built here from
# contrib/Containerfile.proxy and the static postern-proxy, no registry)
# in the world's px namespace, and two agent pods made from the shipped
# agent-pod.yaml (sessions agent-a and agent-b) in the agent namespace,
# whose only way out is a veth to px: the position NetworkPolicy gives an
# agent in a cluster.  Each agent reaches its session's host through the
# proxy's address with its token, gets 403 for the other session's host,
# 407 without a token, with a wrong one and with the other session's
# name, and cannot connect to the host directly.  The proxy runs as 65532
# with no capability, and the shipped probes' command answers.  The
# shipped metrics listener (port 9090) serves GET /metrics with the
# agents' counters to the test's side, and refuses the admin API.
#
# What differs from Kubernetes, and why (each a fixed edit, checked):
#   - replicas 1 and no container ports: with the host's network (as
#     podman-kube.sh plays, since 4.3 cannot join a named namespace) two
#     replicas would bind one port, and Podman maps declared ports only
#     on its own networks;
#   - the ConfigMap is the test's own (hosts of the world, the world's
#     DNS, the admin socket in /dev/shm: Podman's emptyDir is root's,
#     0755), with the shipped listener and token_file lines;
#   - Podman 4.3 takes a Secret only from its own secret store, writes a
#     secret volume's data values as they are (not base64-decoded) and
#     decodes a secretKeyRef's from a JSON map; and it expands no $(VAR) in
#     env, so the agent expands $(POSTERN_TOKEN) in the shipped
#     HTTPS_PROXY as the kubelet would, and puts the proxy's address for
#     the Service's name.
. "$top_srcdir/tests/integration/lib/world.sh"
command -v podman >/dev/null 2>&1 || skip "podman is not installed"
command -v catatonit >/dev/null 2>&1 || [ -x /usr/libexec/podman/catatonit ] ||
	skip "catatonit is not installed (podman's pods need it: apt-get install catatonit)"
# The static postern-proxy: POSTERN_STATIC_DIR's, this build's when it is
# static, else build-static/build's, which make check builds before this test.
is_static() { file -L "$1" 2>/dev/null | grep -q 'statically linked'; }
BIN="${POSTERN_STATIC_DIR:-$top_builddir}"
[ -z "${POSTERN_STATIC_DIR:-}" ] && ! is_static "$BIN/postern-proxy" &&
	BIN="$top_builddir/build-static/build"
if ! is_static "$BIN/postern-proxy"; then
	[ -n "${POSTERN_STATIC_DIR:-}" ] && skip "$BIN/postern-proxy (POSTERN_STATIC_DIR) is not a static binary"
	[ -s "$top_builddir/build-static/build-proxy.log" ] &&
		skip "the static build failed: see $top_builddir/build-static/build-proxy.log"
	skip "no static $BIN/postern-proxy: run \"make check\" as root (it builds it), or \"make static-proxy\" and re-run"
fi
for b in sh curl; do
	command -v $b >/dev/null 2>&1 || skip "$b is not installed (the agent image is made of it)"
done
K="$top_srcdir/contrib/k8s/central"
TOKA=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
TOKB=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
[ ${#TOKA} = 64 ] && [ ${#TOKB} = 64 ] || die "could not make the tokens"

world_up --agent
PD="$WORLD_DIR/podman"
mkdir -p "$PD/ctx" "$PD/agent/rootfs" "$PD/check/tokens"

# The test's ConfigMap: the shipped [proxy] listener and token_file lines,
# the world's hosts (agent-a: allowed.test, agent-b: other.test).
listen=$(grep '^    listen = ' "$K/configmap.yaml")
tfa=$(grep '^    token_file = .*/agent-a$' "$K/configmap.yaml")
tfb=$(grep '^    token_file = .*/agent-b$' "$K/configmap.yaml")
metrics=$(grep '^    metrics = tcp:0.0.0.0:9090$' "$K/configmap.yaml")
[ -n "$listen" ] && [ -n "$tfa" ] && [ -n "$tfb" ] && [ -n "$metrics" ] ||
	die "the shipped configmap.yaml no longer has the lines this test takes"
cat >"$PD/configmap.yaml" <<-YAML
	apiVersion: v1
	kind: ConfigMap
	metadata:
	  name: postern-central-config
	data:
	  postern.ini: |
	    [proxy]
	$listen
	    admin = unix:/dev/shm/admin.sock
	$metrics
	    log = stderr
	    dns_servers = $WORLD_DNS
	    [session agent-a]
	$tfa
	    allow_hosts = allowed.test:80 private, allowed.test:443 private
	    [session agent-b]
	$tfb
	    allow_hosts = other.test:80 private
YAML

# Without token sessions in this postern-proxy there is nothing to play.
sed -n 's/^    //p' "$PD/configmap.yaml" |
	sed "s|/etc/postern-tokens/|$PD/check/tokens/|" >"$PD/check/postern.ini"
echo "$TOKA" >"$PD/check/tokens/agent-a"
echo "$TOKB" >"$PD/check/tokens/agent-b"
out=$("$BIN/postern-proxy" --check -c "$PD/check/postern.ini" 2>&1)
rc=$?
[ $rc != 0 ] && echo "$out" | grep -q 'unknown key in \[session .*\] (token_file)' &&
	skip "this postern-proxy has no token sessions (token_file, listen ... auth=token): $(echo "$out" | head -n 1)"
expect_eq 0 $rc "the test's config passes postern-proxy --check"
diag "$out"

# The agent namespace's only way out: a veth to px, whose end carries the
# proxy's address, and no route beyond it (px would not forward anyway: a
# fresh namespace's default), so the world is reachable only through the
# proxy.
PROXY_ADDR=10.200.3.1
ip -n "$WORLD_NS_PX" link add veth-agent type veth peer name veth-px netns "$WORLD_NS_AGENT" &&
	ip -n "$WORLD_NS_PX" addr add "$PROXY_ADDR/24" dev veth-agent &&
	ip -n "$WORLD_NS_PX" link set veth-agent up &&
	ip -n "$WORLD_NS_AGENT" addr add 10.200.3.2/24 dev veth-px &&
	ip -n "$WORLD_NS_AGENT" link set veth-px up ||
	die "cannot link the agent namespace to px"
expect_eq 0 "$(ip netns exec "$WORLD_NS_PX" cat /proc/sys/net/ipv4/ip_forward)" "px forwards nothing"

cp "$BIN/postern-proxy" "$PD/ctx/"
. "$top_srcdir/tests/integration/lib-podman.sh"
podman_store "$PD"
# pm_in NS ARGS: podman in network namespace NS (nsenter, not "ip netns
# exec", which would hide /sys/fs/cgroup), in PD: kube play takes a
# directory named as an image in its working directory for a build
# context, and this build's postern-proxy is a file of that name.
# shellcheck disable=SC2086
pm_in() {
	local ns
	ns=$1
	shift
	(cd "$PD" && nsenter --net="/run/netns/$ns" podman --root "$PD/root" --runroot "$PD/runroot" \
		--storage-driver vfs $RUNTIME "$@")
}
CG_BEFORE=$(ls -d /sys/fs/cgroup/*/libpod_parent 2>/dev/null)
world_cleanup_hook() {
	local c d
	pm kube down "$PD/agents.yaml" >/dev/null 2>&1
	pm kube down "$PD/deployment.yaml" >/dev/null 2>&1
	pm pod rm -a -f -t 0 >/dev/null 2>&1
	pm secret rm -a >/dev/null 2>&1
	pm rmi -a -f >/dev/null 2>&1
	if [ -z "$CG_BEFORE" ]; then
		for c in /sys/fs/cgroup/*/libpod_parent; do
			[ -d "$c" ] || continue
			for d in "$c"/*/; do rmdir "$d" 2>/dev/null; done
			rmdir "$c" 2>/dev/null
		done
	fi
	return 0
}

out=$(pm build -q -f "$top_srcdir/contrib/Containerfile.proxy" --build-arg BIN=. \
	-t localhost/postern-proxy:0.1.0 "$PD/ctx" 2>&1)
expect_eq 0 $? "podman build of contrib/Containerfile.proxy as postern-proxy:0.1.0"

# The agent image: the host's sh and curl with the libraries they load.
for b in $(command -v sh) $(command -v curl); do
	for f in "$b" $(ldd "$b" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) .*/\1/p'); do
		mkdir -p "$PD/agent/rootfs$(dirname "$f")"
		cp -L "$f" "$PD/agent/rootfs$f" || die "copy $f into the agent image"
	done
done
mkdir -p "$PD/agent/rootfs/bin" "$PD/agent/rootfs/tmp"
[ -e "$PD/agent/rootfs/bin/sh" ] || cp -L "$(command -v sh)" "$PD/agent/rootfs/bin/sh"
# The agent: its session (the user name of the shipped HTTPS_PROXY), and
# what it reaches, one line each.  First the URL as the kubelet would
# expand it, with the proxy's address for the Service's name.
cat >"$PD/agent/rootfs/agent.sh" <<EOF
P=$PROXY_ADDR:3128
EOF
cat >>"$PD/agent/rootfs/agent.sh" <<'EOF'
[ "$*" = "agent --some-flag" ] || echo "args=$*"
case $HTTPS_PROXY in
'http://'*':$(POSTERN_TOKEN)@postern-central:3128') ;;
*) echo "unexpected HTTPS_PROXY=$HTTPS_PROXY" ;;
esac
name=${HTTPS_PROXY#http://}
name=${name%%:*}
echo "session=$name"
url="http://$name:$POSTERN_TOKEN@$P"
export http_proxy="$url" HTTP_PROXY="$url" https_proxy="$url" HTTPS_PROXY="$url"
st() { curl -s --max-time 10 -o /dev/null -w '%{http_code}' "$@"; }
# The proxy may still be starting: the first request retries.
c=$(st --retry 30 --retry-connrefused --retry-delay 1 --max-time 60 http://allowed.test/a)
echo "allowed=$c"
echo "other=$(st http://other.test/a)"
# The agent image has no tools but sh and curl: curl picks the headers.
h='%{http_code}\nauthenticate=%header{Proxy-Authenticate}\nreason=%header{X-Postern-Reason}\n'
echo "noauth=$(st -x "http://$P" -w "$h" http://allowed.test/a)"
echo "wrong=$(st -x "http://$name:0000000000000000000000000000000000000000000000000000000000000000@$P" \
	-w "$h" http://allowed.test/a)"
other=agent-b
[ "$name" = agent-b ] && other=agent-a
echo "swapped=$(st -x "http://$other:$POSTERN_TOKEN@$P" http://allowed.test/a)"
# CONNECT: the proxy's answer to it is what counts (the image has no CA).
echo "connect=$(curl -s -k --max-time 10 -o /dev/null -w '%{http_connect}' https://allowed.test/c)"
echo "connect-noauth=$(curl -s -k --max-time 10 -o /dev/null -w '%{http_connect}' -x "http://$P" https://allowed.test/c)"
curl -s --noproxy '*' --max-time 5 -o /dev/null http://10.200.1.2/
echo "direct=$?"
EOF
# Imported, not built: a few seconds less, the same one-layer image.
out=$(tar -C "$PD/agent/rootfs" -c . | pm import -q --change 'USER 1000:1000' \
	--change 'ENTRYPOINT ["/bin/sh", "/agent.sh"]' - localhost/agent-image:latest 2>&1)
expect_eq 0 $? "podman import of the agent image"
out=$(pm run --rm --network none --entrypoint /bin/sh localhost/agent-image:latest -c 'curl --version' 2>&1) ||
	skip "this machine cannot run containers: $(echo "$out" | tail -n 1)"

# The Secrets, in Podman's store: the proxy's as a Secret document, the
# agents' as the JSON map 4.3 reads for secretKeyRef.
printf 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: postern-central-tokens\ndata:\n  agent-a: %s\n  agent-b: %s\n' \
	"$TOKA" "$TOKB" >"$PD/tokens.yaml"
out=$(pm secret create postern-central-tokens "$PD/tokens.yaml" 2>&1)
expect_eq 0 $? "podman secret create postern-central-tokens"
for s in "a $TOKA" "b $TOKB"; do
	set -- $s
	printf '{"token":"%s"}' "$(printf %s "$2" | base64 -w0)" >"$PD/token-$1.json"
	out=$(pm secret create "postern-token-agent-$1" "$PD/token-$1.json" 2>&1)
	expect_eq 0 $? "podman secret create postern-token-agent-$1"
done

# The shipped Deployment with the two fixed edits.
sed -e 's/^  replicas: 2$/  replicas: 1/' \
	-e '/^          ports:$/,/^          securityContext:/{/^          securityContext:/!d}' \
	"$K/deployment.yaml" >"$PD/deployment.yaml"
expect_eq "1 8" "$(diff "$K/deployment.yaml" "$PD/deployment.yaml" | grep -c '^>') $(diff "$K/deployment.yaml" "$PD/deployment.yaml" | grep -c '^<')" \
	"the played Deployment is the shipped one but replicas and ports"
out=$(pm_in "$WORLD_NS_PX" kube play --network host --configmap "$PD/configmap.yaml" \
	"$PD/deployment.yaml" 2>&1)
rc=$?
diag "$out"
expect_eq 0 $rc "podman kube play deployment.yaml, in px"
PC=postern-central-pod-0-postern-proxy

# The agents: the shipped Pod (its Secret is Podman's), and the same for
# agent-b.
awk '/^---$/ { p = 1; next } p' "$K/agent-pod.yaml" >"$PD/agent-a.yaml"
grep -q '^kind: Pod$' "$PD/agent-a.yaml" || die "the shipped agent-pod.yaml no longer ends with its Pod"
{
	sed 's/^spec:$/spec:\n  restartPolicy: Never/' "$PD/agent-a.yaml"
	echo ---
	sed -e 's/agent-a/agent-b/g' -e 's/^spec:$/spec:\n  restartPolicy: Never/' "$PD/agent-a.yaml"
} >"$PD/agents.yaml"
out=$(pm_in "$WORLD_NS_AGENT" kube play --network host "$PD/agents.yaml" 2>&1)
rc=$?
diag "$out"
expect_eq 0 $rc "podman kube play of the two agents, in the agent namespace"
for a in agent-a agent-b; do
	i=0
	while [ "$(pm inspect -f '{{.State.Status}}' $a-agent 2>/dev/null)" != exited ] && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	expect_eq exited "$(pm inspect -f '{{.State.Status}}' $a-agent 2>/dev/null)" "$a ran to its end"
done
diag "$(pm ps -a --format '{{.Names}} {{.Status}}' 2>&1)"
plog=$(pm logs $PC 2>&1)
diag "$(echo "$plog" | tail -n 30)"
expect_match '"session":"agent-a",.*"host":"allowed.test",.*"decision":"allow"' "$plog" \
	"the proxy audits agent-a's request under session agent-a"
expect_match '"session":"agent-b",.*"host":"other.test",.*"decision":"allow"' "$plog" \
	"... and agent-b's under agent-b"

la=$(pm logs agent-a-agent 2>&1)
lb=$(pm logs agent-b-agent 2>&1)
diag "$la"
diag "$lb"
expect_match "^session=agent-a$" "$la" "agent-a's shipped HTTPS_PROXY names session agent-a"
expect_match "^session=agent-b$" "$lb" "agent-b's names agent-b"
expect_no_match "^unexpected\|^args=" "$la$lb" "the agents got the shipped args and URL shape"
expect_match "^allowed=200$" "$la" "agent-a reaches allowed.test through the proxy with its token"
expect_match "^other=403$" "$la" "agent-a gets 403 for agent-b's host"
expect_match "^other=200$" "$lb" "agent-b reaches other.test with its token"
expect_match "^allowed=403$" "$lb" "agent-b gets 403 for agent-a's host"
for l in "$la" "$lb"; do
	expect_eq "407 Basic proxy_auth_required" \
		"$(echo "$l" | sed -n '/^noauth=/,/^reason=/p' | sed 's/^[a-z]*=//; s/ realm.*//' | tr '\n' ' ' | sed 's/ $//')" \
		"no token: 407, Proxy-Authenticate: Basic, proxy_auth_required"
	expect_eq "407 Basic proxy_auth_failed" \
		"$(echo "$l" | sed -n '/^wrong=/,/^reason=/p' | sed 's/^[a-z]*=//; s/ realm.*//' | tr '\n' ' ' | sed 's/ $//')" \
		"a wrong token: 407, Proxy-Authenticate: Basic, proxy_auth_failed"
	expect_match "^swapped=407$" "$l" "its token with the other session's name: 407"
	expect_match "^direct=7$" "$l" "no direct connection to the host (curl: 7)"
done
expect_match "^connect=200$" "$la" "agent-a's CONNECT with its token is tunnelled"
expect_match "^connect=403$" "$lb" "agent-b's CONNECT to agent-a's host is refused"
expect_match "^connect-noauth=407$" "$la" "a CONNECT without a token: 407"

# The proxy: uid 65532, no capability, and the shipped liveness command.
pid=$(pm inspect -f '{{.State.Pid}}' $PC 2>/dev/null)
expect_match "^Uid:[[:space:]]65532[[:space:]]65532[[:space:]]65532" "$(grep '^Uid:' /proc/$pid/status 2>&1)" \
	"the proxy runs as 65532"
expect_eq "0000000000000000 0000000000000000" \
	"$(sed -n 's/^Cap\(Eff\|Bnd\):[[:space:]]*//p' /proc/$pid/status | tr '\n' ' ' | sed 's/ $//')" \
	"the proxy holds no capability, not even in its bounding set"
grep -q 'command: \["/usr/bin/postern-proxy", "ctl", "status",' "$K/deployment.yaml" &&
	grep -q '"-c", "/etc/postern/postern.ini"\]$' "$K/deployment.yaml" ||
	die "the shipped probes' command is no longer the one this test runs"
out=$(pm exec $PC /usr/bin/postern-proxy ctl status -c /etc/postern/postern.ini 2>&1)
expect_eq 0 $? "the probes' command answers: $(echo "$out" | head -n 1)"
expect_match "agent-a" "$out" "ctl status shows session agent-a"
out=$(pm exec $PC /usr/bin/postern-proxy ctl metrics -c /etc/postern/postern.ini 2>&1)
expect_match '^postern_connections_total{session="agent-a"}' "$out" "ctl metrics counts agent-a's connections"

# The metrics listener, from the test's side (the proxy has px's network):
# the agents' counters, and nothing of the admin API.
grep -q 'prometheus.io/port: "9090"' "$K/deployment.yaml" ||
	die "the shipped Deployment no longer annotates port 9090"
out=$(in_px curl -sS --max-time 5 "http://$PROXY_ADDR:9090/metrics" 2>&1)
expect_match '^postern_connections_total{session="agent-a"} [1-9]' "$out" \
	"GET http://PROXY:9090/metrics counts agent-a's connections"
expect_match '^postern_connections_total{session="agent-b"} [1-9]' "$out" "... and agent-b's"
expect_eq 404 "$(in_px curl -s --max-time 5 -o /dev/null -w '%{http_code}' -X POST \
	"http://$PROXY_ADDR:9090/reload")" "POST /reload on 9090: 404"
expect_eq 404 "$(in_px curl -s --max-time 5 -o /dev/null -w '%{http_code}' \
	"http://$PROXY_ADDR:9090/status")" "GET /status on 9090: 404"
expect_eq 405 "$(in_px curl -s --max-time 5 -o /dev/null -w '%{http_code}' -X POST \
	"http://$PROXY_ADDR:9090/metrics")" "POST /metrics on 9090: 405"
out=$(pm kube down "$PD/agents.yaml" 2>&1)
expect_eq 0 $? "podman kube down of the agents"
out=$(pm kube down "$PD/deployment.yaml" 2>&1)
expect_eq 0 $? "podman kube down of the Deployment"
exit 0
