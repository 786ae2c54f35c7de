#!/bin/sh
# tls-git: git clone over HTTPS through a terminated tunnel, the way
# github.com is bound (basic x-access-token): the sandbox has no token, the
# proxy puts it on each request of git's smart HTTP, and a path rule narrows
# the host to one organisation inside TLS (github.com/my-org/).  The git
# server answers 401 to any request without the real token.
command -v git >/dev/null 2>&1 || { echo "git is not installed"; exit 77; }
WORLD_DNS_EXTRA="git.test=10.200.1.2"
. "$top_srcdir/tests/integration/lib/world.sh"
world_up

TOKEN="ghp_$(od -An -N18 -tx1 /dev/urandom | tr -d ' \n')"
export PX_GIT_TOKEN="$TOKEN"
state="$WORLD_DIR/state"
mkdir -p "$state" "$WORLD_DIR/repos/org" "$WORLD_DIR/repos/other"
chmod 700 "$state"

# Two bare repositories: org/repo.git (allowed), other/repo.git (not).
src="$WORLD_DIR/src"
git init -q -b main "$src"
echo "hello through postern" >"$src/README"
git -C "$src" add README
git -C "$src" -c user.name=t -c user.email=t@t commit -q -m one
git clone -q --bare "$src" "$WORLD_DIR/repos/org/repo.git"
git clone -q --bare "$src" "$WORLD_DIR/repos/other/repo.git"

gitlog="$WORLD_DIR/git.log"
: >"$gitlog"
expect="Basic $(printf 'x-access-token:%s' "$TOKEN" | base64 -w0)"
in_up "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-tls/githttps.py" 10.200.1.2 8443 \
	"$WORLD_CERT" "$WORLD_KEY" "$WORLD_DIR/repos" "$gitlog" "$expect" &
# Wait until it listens (a bare TCP connect: no request in its log).
in_px "$WORLD_PYTHON" -c '
import socket, time
for i in range(200):
    try:
        socket.create_connection(("10.200.1.2", 8443), timeout=1).close()
        break
    except OSError:
        time.sleep(0.05)
'

conf="$WORLD_DIR/postern.ini"
cat >"$conf" <<EOF
[proxy]
listen = tcp:127.0.0.1:3128
log = $PROXY_LOG
dns_servers = $WORLD_DNS
upstream_ca_file = $WORLD_CA
state_dir = $state
[defaults]
allow_hosts = git.test:8443/org/ private
secrets = gh
[secret gh]
from_env = PX_GIT_TOKEN
placeholder_env = GH_TOKEN
inject = git.test:8443 basic x-access-token
EOF
proxy_start "$conf" || die "no proxy"
CA="$state/ca/default.pem"

g() {
	in_px env -u GH_TOKEN GIT_TERMINAL_PROMPT=0 GIT_SSL_CAINFO="$CA" HTTPS_PROXY=http://127.0.0.1:3128 \
		HOME="$WORLD_DIR" git "$@"
}
g clone -q https://git.test:8443/org/repo.git "$WORLD_DIR/clone" >"$WORLD_DIR/clone.out" 2>&1
expect_eq 0 $? "git clone of org/repo.git through the terminated tunnel succeeds"
expect_eq "hello through postern" "$(cat "$WORLD_DIR/clone/README" 2>/dev/null)" "the clone has the file"
expect_match "\"authorization\": \"$expect\"" "$(cat "$gitlog")" "the git server received the token"
expect_no_match "\"authorization\": \"\"" "$(cat "$gitlog")" "and no request reached it without"
expect_audit "each request of the clone is audited with the secret" event=request host=git.test \
	path=/org/repo.git/info/refs secret=gh status=200

g clone -q https://git.test:8443/other/repo.git "$WORLD_DIR/clone2" >"$WORLD_DIR/clone2.out" 2>&1
expect_ne 0 $? "a clone outside the path rule fails"
expect_match "403" "$(cat "$WORLD_DIR/clone2.out")" "with the proxy's 403"
expect_audit "path_not_allowed inside TLS" host=git.test reason=path_not_allowed \
	path=/other/repo.git/info/refs
expect_eq 0 "$(grep -c '/other/' "$gitlog")" "no request for other/ reached the git server"

expect_no_match "$TOKEN" "$(cat "$PROXY_LOG" "$WORLD_DIR/proxy.out" "$WORLD_DIR/clone.out")" \
	"the token is in no log of the proxy, nor in git's output"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
