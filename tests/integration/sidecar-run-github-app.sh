#!/bin/sh
# sidecar-run-github-app: `postern-sidecar run -c FILE -- CMD` with a
# [secret] of kind = github-app (the mock GitHub of secret-github-app.sh).
# CMD sees only placeholders in GH_TOKEN and GITHUB_TOKEN; git in CMD
# clones and pushes org/allowed, with no credential of its own; a push
# to org/other is refused by the engine before it leaves; when CMD exits
# and the engine stops, the session's token is revoked (the mock API sees
# the DELETE).
. "$top_srcdir/tests/integration/sidecar-lib.sh"
command -v git >/dev/null 2>&1 || skip "git is not installed"
/usr/bin/python3 -c 'import jwt, cryptography' 2>/dev/null || skip "python3-jwt is not installed"
WORLD_DNS_EXTRA="api.gh.test=10.200.1.2 git.gh.test=10.200.1.2"
sc_world_up
[ -x "$top_builddir/postern-bridge" ] || skip "postern-bridge is not built"
# Outside /tmp (run gives CMD fresh ones): the world's CA and the app's
# key, for the engine.
CADIR=$(mktemp -d /var/lib/postern-run-gh.XXXXXX) || die "mktemp"
world_cleanup_hook() { rm -rf "$CADIR"; }
cp "$WORLD_CA" "$CADIR/ca.pem" && chmod 0755 "$CADIR" || die "cannot copy the CA"
openssl genrsa -out "$CADIR/app.pem" 2048 2>/dev/null
openssl rsa -in "$CADIR/app.pem" -pubout -out "$WORLD_DIR/app.pub" 2>/dev/null
chmod 0644 "$CADIR/ca.pem" "$CADIR/app.pem"

mock="$WORLD_DIR/mock"
. "$top_srcdir/tests/integration/lib-tls/ghworld.sh"
gh_world

cat >"$WORLD_DIR/run.ini" <<-INI
	[proxy]
	listen = unix:/run/pw-run-gh-$WORLD_ID.sock
	upstream_ca_file = $CADIR/ca.pem
	[defaults]
	allow_hosts = git.gh.test:8447 private, api.gh.test:8446 private
	secrets = gh
	github_repositories = org/allowed
	github_permissions = contents:write
	[secret gh]
	kind = github-app
	app_id = 1234
	installation_id = 42
	api_url = https://api.gh.test:8446
	private_key_file = $CADIR/app.pem
	inject_when = always
	inject = git.gh.test:8447 basic x-access-token
	inject = api.gh.test:8446 header Authorization "Bearer %s"
INI

out=$(in_px "$SIDECAR" run -c "$WORLD_DIR/run.ini" -- sh -c '
	export HOME="${TMPDIR:-/tmp}" GIT_TERMINAL_PROMPT=0
	echo "gh=$GH_TOKEN"
	echo "ghu=$GITHUB_TOKEN"
	c="${TMPDIR:-/tmp}/c"
	git clone -q https://git.gh.test:8447/org/allowed.git "$c" && echo clone=ok
	echo "readme=$(cat "$c/README")"
	cd "$c" && echo pushed >PUSHED && git add PUSHED &&
		git -c user.name=t -c user.email=t@t commit -qm "pushed from the sandbox" &&
		git push -q origin main && echo push=ok
	git push -q https://git.gh.test:8447/org/other.git main >"${TMPDIR:-/tmp}/other.out" 2>&1 ||
		echo "other=refused $(grep -c 403 "${TMPDIR:-/tmp}/other.out")"
	' 2>"$WORLD_DIR/err")
rc=$?
diag "stdout: $out"
diag "stderr: $(tail -n 5 "$WORLD_DIR/err")"
expect_eq 0 $rc "the run exits 0"
gh=$(printf '%s\n' "$out" | sed -n 's/^gh=//p')
expect_match '^ghs_[A-Za-z0-9]{36}$' "$gh" "CMD's GH_TOKEN is a placeholder in GitHub's token form"
expect_eq "$gh" "$(printf '%s\n' "$out" | sed -n 's/^ghu=//p')" "GITHUB_TOKEN holds the same placeholder"
expect_match "^clone=ok$" "$out" "git clone of org/allowed in CMD succeeds"
expect_match "^readme=hello from the app$" "$out" "the clone has the file"
expect_match "^push=ok$" "$out" "git push to org/allowed succeeds"
expect_eq "pushed from the sandbox" "$(git -C "$WORLD_DIR/repos/org/allowed.git" log -1 --format=%s main 2>/dev/null)" \
	"the server's repository has the pushed commit"
expect_match "^other=refused [1-9]" "$out" "a push to org/other is refused with postern's 403"
expect_eq 0 "$(grep -c '/org/other' "$mock/git.log")" "no request for org/other reached the git server"
TOKEN=$(sed -n 1p "$mock/issued")
[ -n "$TOKEN" ] || fail "no token was minted"
expect_ne "$TOKEN" "$gh" "the placeholder is not the token"
expect_eq 1 "$(grep -c "\"revoked\": \"$TOKEN\"" "$mock/api.log")" \
	"when CMD exits and the engine stops, the token is revoked"
grep -qF "$TOKEN" "$WORLD_DIR/err" && fail "the token is on the terminal" || ok "the token is not on the terminal"
