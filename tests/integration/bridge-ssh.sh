#!/bin/sh
# bridge-ssh.sh: ssh and git over ssh from the sandbox with no nc or socat
# (ProxyCommand), and ALL_PROXY as SOCKS5.  A real sshd (key
# auth only, a host key made here) listens on 10.200.1.2:22 in up; CMD
# runs under the bridge in the agent namespace (only lo):
#   - ssh with "postern-bridge connect %h %p" as its ProxyCommand runs a
#     command on an allowed host:22, through an audited CONNECT;
#   - the GIT_SSH_COMMAND the bridge exports does the same, and git clone
#     over ssh works with it, unchanged;
#   - a refused target prints the postern line (reason and the proxy's
#     explanation) on ssh's stderr, and ssh fails;
#   - curl with ALL_PROXY alone (socks5h://, the bridge's port) goes
#     through SOCKS5.
# Fails on main: the bridge has no "connect" subcommand, exports no
# GIT_SSH_COMMAND, and ALL_PROXY is http://.
. "$top_srcdir/tests/integration/lib/world.sh"
BRIDGE="$top_builddir/postern-bridge"
[ -x "$BRIDGE" ] || skip "postern-bridge is not built"
SSHD=/usr/sbin/sshd
[ -x "$SSHD" ] || skip "openssh-server is not installed (contrib/install-deps.sh)"
command -v ssh >/dev/null 2>&1 || skip "ssh is not installed"
command -v ssh-keygen >/dev/null 2>&1 || skip "ssh-keygen is not installed"
command -v git >/dev/null 2>&1 || skip "git is not installed"
command -v curl >/dev/null 2>&1 || skip "curl is not installed"
world_up --agent

SSHD_PID=
world_cleanup_hook() {
	[ -n "$SSHD_PID" ] && kill "$SSHD_PID" 2>/dev/null
	return 0
}

# The server: host key and the client's key made here, key auth only.
H="$WORLD_DIR/home"
mkdir -p "$H/.ssh" && chmod 700 "$H" "$H/.ssh" || die "mkdir $H/.ssh"
ssh-keygen -q -t ed25519 -N '' -f "$WORLD_DIR/host_key" || die "ssh-keygen (host)"
ssh-keygen -q -t ed25519 -N '' -f "$H/.ssh/id_ed25519" || die "ssh-keygen (client)"
cp "$H/.ssh/id_ed25519.pub" "$WORLD_DIR/authorized_keys"
chmod 600 "$WORLD_DIR/authorized_keys"
for h in allowed.test deny.test; do
	echo "$h $(cut -d' ' -f1,2 "$WORLD_DIR/host_key.pub")"
done >"$H/.ssh/known_hosts"
printf '%s\n' "Host *" "	IdentityFile $H/.ssh/id_ed25519" "	UserKnownHostsFile $H/.ssh/known_hosts" \
	"	StrictHostKeyChecking yes" "	BatchMode yes" "	ConnectTimeout 10" >"$H/.ssh/config"
chmod 600 "$H/.ssh/config"
printf '%s\n' "ListenAddress $WORLD_UP4:22" "HostKey $WORLD_DIR/host_key" \
	"AuthorizedKeysFile $WORLD_DIR/authorized_keys" "PidFile $WORLD_DIR/sshd.pid" \
	"PermitRootLogin prohibit-password" "PasswordAuthentication no" \
	"KbdInteractiveAuthentication no" "UsePAM no" "StrictModes no" >"$WORLD_DIR/sshd_config"
# sshd's privilege separation directory (Debian's build needs it).
mkdir -p /run/sshd
ip netns exec "$WORLD_NS_UP" "$SSHD" -D -e -f "$WORLD_DIR/sshd_config" >"$WORLD_DIR/sshd.log" 2>&1 &
SSHD_PID=$!
in_up "$WORLD_PYTHON" "$WORLD_LIB/world.py" wait --timeout 5 --pid "$SSHD_PID" --tcp "$WORLD_UP4:22" ||
	die "sshd is not listening: $(cat "$WORLD_DIR/sshd.log")"

# A repository to clone, served by that sshd.
git init -q "$WORLD_DIR/src" &&
	git -C "$WORLD_DIR/src" -c user.name=t -c user.email=t@t commit -q --allow-empty -m "over ssh" ||
	die "git init"

printf '%s\n' "[proxy]" "listen = unix:$WORLD_DIR/proxy.sock" "log = $PROXY_LOG" \
	"dns_servers = $WORLD_DNS" "[defaults]" \
	"allow_hosts = allowed.test private, allowed.test:22 private" >"$WORLD_DIR/postern.ini"
proxy_start "$WORLD_DIR/postern.ini" || die "no proxy"

# bridge -- CMD: the bridge in the agent namespace, HOME with the ssh setup.
bridge() {
	in_agent env -i PATH="$PATH" HOME="$H" "$BRIDGE" --connect "$WORLD_DIR/proxy.sock" \
		--allow-root "$@"
}
B=$(readlink -f "$BRIDGE")

# 1. The bridge as ssh's ProxyCommand, written by hand.
out=$(bridge -- ssh -F "$H/.ssh/config" -o ProxyCommand="$B connect %h %p" root@allowed.test 'echo via-ssh' 2>&1)
rc=$?
diag "$out"
expect_eq 0 "$rc" "ssh through postern-bridge connect succeeded"
expect_match '^via-ssh$' "$out" "the remote command ran and its output came back"
expect_audit "the CONNECT is audited" event=decision method=CONNECT host=allowed.test port=22 \
	decision=allow address="$WORLD_UP4"

# 2. The exported GIT_SSH_COMMAND: ssh, then git clone.  ssh reads its
# config from the passwd entry's home, not $HOME: -F is added for the
# test's keys, nothing else.
out=$(bridge -- sh -c 'echo "GSC=$GIT_SSH_COMMAND"; eval "$GIT_SSH_COMMAND -F $0 root@allowed.test echo gsc-works"' \
	"$H/.ssh/config" 2>&1)
diag "$out"
expect_match "^GSC=ssh -o ProxyCommand='$B connect --via 127\\.0\\.0\\.1:3128 %h %p'\$" "$out" \
	"GIT_SSH_COMMAND uses the bridge's own path and port"
expect_match '^gsc-works$' "$out" "ssh with GIT_SSH_COMMAND reaches the host"
rm -rf "$WORLD_DIR/dst"
out=$(bridge -- sh -c 'GIT_SSH_COMMAND="$GIT_SSH_COMMAND -F $0" exec git clone -q "$1" "$2"' \
	"$H/.ssh/config" "root@allowed.test:$WORLD_DIR/src" "$WORLD_DIR/dst" 2>&1)
rc=$?
diag "$out"
expect_eq 0 "$rc" "git clone over ssh with the exported GIT_SSH_COMMAND"
expect_eq "over ssh" "$(git -C "$WORLD_DIR/dst" log -1 --format=%s 2>/dev/null)" "the clone has the commit"

# 3. A refused target: the postern line on stderr, ssh fails.
out=$(bridge -- ssh -F "$H/.ssh/config" -o ProxyCommand="$B connect %h %p" root@deny.test true 2>&1)
rc=$?
diag "$out"
expect_ne 0 "$rc" "ssh to a refused host fails"
expect_match '^postern-bridge: postern refused CONNECT deny\.test:22: 403 host_not_allowed$' "$out" \
	"the postern refusal line, with its reason"
expect_match '^postern-bridge:   no rule matches deny\.test:22' "$out" "and the proxy's explanation"
expect_audit "the refusal is audited" event=decision method=CONNECT host=deny.test port=22 \
	reason=host_not_allowed
bridge -- "$B" connect allowed.test 'x y' </dev/null >/dev/null 2>&1
expect_eq 2 $? "a malformed port is refused before anything is sent"

# 4. ALL_PROXY alone: SOCKS5 through the bridge.
out=$(bridge -- sh -c 'echo "ALL=$ALL_PROXY"; unset HTTPS_PROXY https_proxy HTTP_PROXY http_proxy
	curl -sS --max-time 10 --cacert "$0" https://allowed.test/all' "$WORLD_CA" 2>&1)
diag "$out"
expect_match '^ALL=socks5h://127\.0\.0\.1:3128$' "$out" "ALL_PROXY is socks5h:// at the bridge's port"
expect_match '^sni=allowed\.test$' "$out" "curl with only ALL_PROXY reaches the host"
expect_audit "over SOCKS5" event=decision "method=SOCKS5 CONNECT" host=allowed.test port=443 decision=allow
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"

# 5. postern-sidecar run: its sandbox gets the same GIT_SSH_COMMAND (the
# bridge's path inside it), which reaches the allowed host:22, and a
# refused one prints the postern line with its --allow hint.  run gives
# CMD a fresh /tmp, so the ssh setup lives in /var/lib meanwhile, owned
# by CMD's uid.
SIDECAR="$top_builddir/postern-sidecar"
if [ -x "$SIDECAR" ]; then
	# (Outside /tmp, /var/tmp, /run and /dev/shm, which CMD gets empty:
	# not in the build tree, which may be under /tmp.)
	RH=$(mktemp -d /var/lib/postern-bridge-ssh.XXXXXX) || die "mktemp"
	rmdir "$RH"
	cp -a "$H" "$RH" || die "copy the ssh setup"
	sed -i "s|$H|$RH|g" "$RH/.ssh/config"
	# run's CMD is nobody (65534): ssh wants its key and config its own.
	chown -R 65534:65534 "$RH"
	world_cleanup_hook() {
		[ -n "$SSHD_PID" ] && kill "$SSHD_PID" 2>/dev/null
		rm -rf "$RH"
		return 0
	}
	mkdir -m 0711 "$WORLD_DIR/xdg"
	out=$(in_px env XDG_RUNTIME_DIR="$WORLD_DIR/xdg" "$SIDECAR" run --allow 'allowed.test:22 private' -- \
		sh -c 'eval "$GIT_SSH_COMMAND -F $0 root@allowed.test echo via-run"' "$RH/.ssh/config" 2>&1)
	diag "$out"
	expect_match '^via-run$' "$out" "run: ssh with the sandbox's GIT_SSH_COMMAND reaches allowed.test:22"
	out=$(in_px env XDG_RUNTIME_DIR="$WORLD_DIR/xdg" "$SIDECAR" run --allow 'allowed.test:22 private' -- \
		sh -c 'eval "$GIT_SSH_COMMAND -F $0 root@deny.test true"' "$RH/.ssh/config" 2>&1)
	diag "$out"
	expect_match "^postern-bridge: postern refused CONNECT deny\\.test:22: 403 host_not_allowed\$" "$out" \
		"run: a refused ssh target prints the postern line"
	expect_match "--allow 'deny\\.test:22'" "$out" "with the --allow that would permit it"

	# 6. Transparent capture: plain ssh, no ProxyCommand, no
	# ProxyCommand in GIT_SSH_COMMAND: the bridge's DNS stub gives allowed.test a
	# synthetic address, and the connection to its port 22 is captured
	# and opened as CONNECT allowed.test:22.  A refused name does not
	# resolve, and run tells the refusal with its --allow.
	out=$(in_px env XDG_RUNTIME_DIR="$WORLD_DIR/xdg" "$SIDECAR" run --allow 'allowed.test:22 private' -- \
		sh -c 'unset GIT_SSH_COMMAND; ssh -F "$0" root@allowed.test echo via-capture &&
			GIT_SSH_COMMAND="ssh -F $0" git clone -q root@allowed.test:"$1" /tmp/cl && git -C /tmp/cl log --format=%s' \
		"$RH/.ssh/config" "$WORLD_DIR/src" 2>&1)
	diag "$out"
	expect_match '^via-capture$' "$out" "run: plain ssh reaches allowed.test:22 through capture"
	expect_match '^over ssh$' "$out" "and git clone over plain ssh"
	out=$(in_px env XDG_RUNTIME_DIR="$WORLD_DIR/xdg" "$SIDECAR" run --allow 'allowed.test:22 private' -- \
		sh -c 'unset GIT_SSH_COMMAND; ssh -F "$0" root@deny.test true' "$RH/.ssh/config" 2>&1)
	diag "$out"
	expect_match "deny\\.test.*(not known|resolve)" "$out" "run: plain ssh to a refused name does not resolve"
	expect_match "^postern: refused DNS deny\\.test" "$out" "and run prints the refusal"
	expect_match "knows no port: a program using another than 443 needs HOST:PORT" "$out" \
		"saying that the hint's port is a guess"
fi
