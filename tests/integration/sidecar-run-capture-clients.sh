#!/bin/sh
# sidecar-run-capture-clients.sh: more clients without proxy support
# through transparent capture in postern-sidecar run:
# git:// to a local git daemon, Node's https.get, and Python requests with
# trust_env=False (it ignores every proxy variable).  Each allowed target
# works, through the proxy (the sandbox has only loopback); a refused
# git:// host does not resolve and run prints the refusal.
. "$top_srcdir/tests/integration/sidecar-lib.sh"
sc_world_up
[ -x "$top_builddir/postern-bridge" ] || skip "postern-bridge is not built"
command -v git >/dev/null 2>&1 || skip "git is not installed"
GITD=$(git --exec-path)/git-daemon
[ -x "$GITD" ] || skip "git daemon is not installed"
command -v node >/dev/null 2>&1 || skip "node is not installed"
[ -f /etc/resolv.conf ] || skip "no /etc/resolv.conf to bind over"

GITD_PID=
world_cleanup_hook() { [ -n "$GITD_PID" ] && kill "$GITD_PID" 2>/dev/null; return 0; }
mkdir -p "$WORLD_DIR/repos"
git init -q --bare "$WORLD_DIR/repos/r.git" || die "git init"
git init -q "$WORLD_DIR/w" && git -C "$WORLD_DIR/w" -c user.name=t -c user.email=t@t \
	commit -q --allow-empty -m "over git daemon" &&
	git -C "$WORLD_DIR/w" push -q "$WORLD_DIR/repos/r.git" HEAD:refs/heads/main ||
	die "cannot make the repository"
git -C "$WORLD_DIR/repos/r.git" symbolic-ref HEAD refs/heads/main
chmod -R a+rX "$WORLD_DIR/repos"
ip netns exec "$WORLD_NS_UP" "$GITD" --verbose --reuseaddr --export-all --base-path="$WORLD_DIR/repos" \
	--listen="$WORLD_UP4" --port=9418 "$WORLD_DIR/repos" >"$WORLD_DIR/gitd.log" 2>&1 &
GITD_PID=$!
in_up "$WORLD_PYTHON" "$WORLD_LIB/world.py" wait --timeout 5 --pid "$GITD_PID" --tcp "$WORLD_UP4:9418" ||
	die "git daemon is not listening: $(cat "$WORLD_DIR/gitd.log")"

cp "$WORLD_CA" "$WORLD_DIR/ca.pem"
chmod 644 "$WORLD_DIR/ca.pem"
HAVE_REQUESTS=0
/usr/bin/python3 -c 'import requests' 2>/dev/null && HAVE_REQUESTS=1
XDG="$WORLD_DIR/xdg"
mkdir -m 0711 "$XDG"
out=$(in_px env XDG_RUNTIME_DIR="$XDG" "$SIDECAR" run --allow "allowed.test:9418 private" \
	--allow "allowed.test private" -- sh -c '
	git clone -q git://allowed.test/r.git /tmp/r && git -C /tmp/r log --format="git %s"
	git clone -q git://denied.test/r.git /tmp/d 2>&1 | sed -n "s/^fatal: .*denied.test.*/git denied: fatal/p"
	node -e "
		const https = require(\"https\"), fs = require(\"fs\");
		https.get(\"https://allowed.test/nodehttps\", { ca: fs.readFileSync(\"/dev/fd/3\") }, r => {
			console.log(\"node https\", r.statusCode); r.resume();
		}).on(\"error\", e => console.log(\"node error\", e.code || e.message));"
	if [ "$1" = 1 ]; then
		/usr/bin/python3 -c "
import requests
s = requests.Session()
s.trust_env = False
print(\"requests\", s.get(\"https://allowed.test/requests\", verify=\"/dev/fd/3\", timeout=10).status_code)"
	fi' sh "$HAVE_REQUESTS" 2>"$WORLD_DIR/run.err" 3<"$WORLD_DIR/ca.pem")
err=$(cat "$WORLD_DIR/run.err")
diag "stdout: $out"
diag "stderr: $err"
expect_match "^git over git daemon$" "$out" "git clone git://allowed.test through capture"
expect_match "Connection from $WORLD_PX4:" "$(cat "$WORLD_DIR/gitd.log")" \
	"the git daemon was reached from the proxy's side (the sandbox has only loopback)"
expect_match "^git denied: fatal$" "$out" "git:// to a refused name fails"
expect_match "refused DNS denied.test" "$err" "and run prints the refusal"
expect_match "^node https 200$" "$out" "Node's https.get (no proxy support) reaches it"
if [ "$HAVE_REQUESTS" = 1 ]; then
	expect_match "^requests 200$" "$out" "Python requests with trust_env=False reaches it"
else
	diag "python3-requests is not installed: that client is not tried"
fi
exit 0
