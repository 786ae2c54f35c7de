#!/bin/sh
# secret-github-app: a [secret] of kind = github-app.  A mock GitHub API
# (api.gh.test:8446) checks the app's JWT (RS256, with the app's public
# key, by python3-jwt) and mints installation tokens; a git smart-HTTP
# server (git.gh.test:8447) takes only a live token, for the repositories
# it was minted for.  The session may have org/allowed, contents:write.
# git clone and push of org/allowed work with no credential in the
# sandbox; the token asked for names only that repository and those
# permissions; a push to org/other and an API call for it are refused by
# postern (403 repository_not_allowed) and never reach the servers; the
# sandbox's answer holds placeholders in GH_TOKEN and GITHUB_TOKEN and no
# token; a runtime session gets a token of its own, revoked when the
# session is removed; when the proxy stops the token is revoked (the API
# sees the DELETE); no token is in any log; through README's bwrap recipe
# (postern-bridge on the session's UNIX socket) git clones org/allowed with
# only placeholders in its environment, and its push to org/other is
# refused by postern.
command -v git >/dev/null 2>&1 || { echo "git is not installed"; exit 77; }
/usr/bin/python3 -c 'import jwt, cryptography' 2>/dev/null || { echo "python3-jwt is not installed"; exit 77; }
WORLD_DNS_EXTRA="api.gh.test=10.200.1.2 git.gh.test=10.200.1.2"
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

state="$WORLD_DIR/state"
mock="$WORLD_DIR/mock"
mkdir -p "$state"
chmod 700 "$state"
openssl genrsa -out "$WORLD_DIR/app.pem" 2048 2>/dev/null
openssl rsa -in "$WORLD_DIR/app.pem" -pubout -out "$WORLD_DIR/app.pub" 2>/dev/null
[ -s "$WORLD_DIR/app.pub" ] || die "no app key"

. "$top_srcdir/tests/integration/lib-tls/ghworld.sh"
gh_world

conf="$WORLD_DIR/postern.ini"
{
	admin_proxy_section "upstream_ca_file = $WORLD_CA" "state_dir = $state"
	cat <<-EOF
		[defaults]
		allow_hosts = git.gh.test:8447 private, api.gh.test:8446 private
		secrets = gh
		github_repositories = org/allowed
		github_permissions = contents:write, pull_requests:read
		[secret gh]
		kind = github-app
		app_id = 1234
		installation_id = 42
		api_url = https://api.gh.test:8446
		private_key_file = $WORLD_DIR/app.pem
		inject_when = always
		inject = git.gh.test:8447 basic x-access-token
		inject = api.gh.test:8446 header Authorization "Bearer %s"
	EOF
} >"$conf"
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
CA="$state/ca/default.pem"
[ -s "$CA" ] || die "the session CA is not in $CA"
sess=$(in_px curl -sS --max-time 5 http://127.0.0.1:3128/.well-known/postern/session)
PH=$(printf '%s\n' "$sess" | sed -n 's/^env GH_TOKEN //p')
PH2=$(printf '%s\n' "$sess" | sed -n 's/^env GITHUB_TOKEN //p')
[ -n "$PH" ] || die "no placeholder in GH_TOKEN"
expect_eq "$PH" "$PH2" "GITHUB_TOKEN holds the same placeholder as GH_TOKEN"

g() {
	in_px env -u GH_TOKEN GIT_TERMINAL_PROMPT=0 GIT_SSL_CAINFO="$CA" HTTPS_PROXY=http://127.0.0.1:3128 \
		HOME="$WORLD_DIR" git -c user.name=t -c user.email=t@t "$@"
}
g clone -q https://git.gh.test:8447/org/allowed.git "$WORLD_DIR/clone" >"$WORLD_DIR/clone.out" 2>&1
expect_eq 0 $? "git clone of org/allowed through the proxy succeeds"
expect_eq "hello from the app" "$(cat "$WORLD_DIR/clone/README" 2>/dev/null)" "the clone has the file"
expect_eq 1 "$(grep -c '"jwt_ok": true' "$mock/api.log")" \
	"one installation token was minted, with a JWT the app's public key verifies"
expect_match '"body": "\{\\"repositories\\":\[\\"allowed\\"\],\\"permissions\\":\{\\"contents\\":\\"write\\",\\"pull_requests\\":\\"read\\"\}\}"' \
	"$(grep jwt_ok "$mock/api.log")" "the token was asked for org/allowed and the session's permissions only"
TOKEN=$(sed -n 1p "$mock/issued")

echo "pushed by the app" >"$WORLD_DIR/clone/PUSHED"
git -C "$WORLD_DIR/clone" add PUSHED
git -C "$WORLD_DIR/clone" -c user.name=t -c user.email=t@t commit -q -m "pushed by the app"
g -C "$WORLD_DIR/clone" push -q origin main >"$WORLD_DIR/push.out" 2>&1
expect_eq 0 $? "git push to org/allowed succeeds"
expect_eq "pushed by the app" "$(git -C "$WORLD_DIR/repos/org/allowed.git" log -1 --format=%s main 2>/dev/null)" \
	"the server's repository has the pushed commit"
expect_audit "the push is audited with the secret" event=request host=git.gh.test method=POST \
	path=/org/allowed.git/git-receive-pack secret=gh status=200

g -C "$WORLD_DIR/clone" push -q https://git.gh.test:8447/org/other.git main >"$WORLD_DIR/push2.out" 2>&1
expect_ne 0 $? "git push to org/other fails"
expect_match "403" "$(cat "$WORLD_DIR/push2.out")" "with postern's 403"
expect_audit "the refusal is audited" host=git.gh.test reason=repository_not_allowed \
	path=/org/other.git/info/refs
expect_eq 0 "$(grep -c '/org/other' "$mock/git.log")" "no request for org/other reached the git server"

code=$(curl_status -x http://127.0.0.1:3128 --cacert "$CA" https://api.gh.test:8446/repos/org/other/issues)
expect_eq 403 "$code" "an API call for org/other is refused by postern"
code=$(curl_status -x http://127.0.0.1:3128 --cacert "$CA" https://api.gh.test:8446/repos/org/allowed/issues)
expect_eq 200 "$code" "an API call for org/allowed goes with the token"
expect_eq 0 "$(grep -c '/repos/org/other' "$mock/api.log")" "the API never saw the call for org/other"
expect_eq 1 "$(grep -c '"jwt_ok": true' "$mock/api.log")" "the token was minted once for the session"

printf '%s\n' "$sess" | grep -qF "$TOKEN" && fail "the session's answer holds the token" ||
	ok "the session's answer (the sandbox's environment) holds no token"

# A runtime session gets its own token; removing the session revokes it.
out=$(printf 'listen = tcp:127.0.0.1:3129\n' | admin_curl -X PUT --data-binary @- -w ' %{http_code}' \
	http://postern/sessions/task)
expect_match " 200$" "$out" "a runtime session is made"
i=0
while [ ! -s "$state/ca/task.pem" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
code=$(curl_status -x http://127.0.0.1:3129 --cacert "$state/ca/task.pem" \
	https://api.gh.test:8446/repos/org/allowed/pulls)
expect_eq 200 "$code" "the runtime session's API call goes with a token"
expect_eq 2 "$(grep -c '"jwt_ok": true' "$mock/api.log")" "a second token was minted, for the runtime session"
TOKEN2=$(sed -n 2p "$mock/issued")
expect_eq 200 "$(admin_curl -X DELETE -o /dev/null -w '%{http_code}' http://postern/sessions/task)" \
	"the runtime session is removed"
i=0
while ! grep -q "\"revoked\": \"$TOKEN2\"" "$mock/api.log" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
expect_eq 1 "$(grep -c "\"revoked\": \"$TOKEN2\"" "$mock/api.log")" \
	"removing the runtime session revokes its token"
expect_eq 0 "$(grep -c "\"revoked\": \"$TOKEN\"" "$mock/api.log")" "and not the other session's"

proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
expect_eq 1 "$(grep -c "\"revoked\": \"$TOKEN\"" "$mock/api.log")" \
	"when the proxy stops, the token is revoked (DELETE /installation/token)"
for f in "$PROXY_LOG" "$WORLD_DIR/proxy.out"; do
	{ grep -qF "$TOKEN" "$f" || grep -qF "$TOKEN2" "$f"; } && fail "a token is in $(basename "$f")" ||
		ok "no token is in $(basename "$f")"
done

# The bwrap recipe of README.md: git as uid 1000 in a sandbox with no
# network but the session's socket; the bridge gives it the placeholders,
# the session CA and HTTPS_PROXY.
. "$top_srcdir/tests/integration/lib/recipe.sh"
if recipe_ok; then
	# Outside /tmp, /var/tmp and /run (the sandbox's fresh ones), readable
	# by uid 1000: the bridge and the session's socket.
	recipe_dir gh
	HOMEDIR=$RECIPE_DIR
	world_cleanup_hook() { rm -rf "$HOMEDIR"; }
	sed "/^\[proxy\]/a listen = unix:$HOMEDIR/s1/proxy.sock mode=666" "$conf" >"$WORLD_DIR/recipe.ini"
	proxy_start "$WORLD_DIR/recipe.ini" || die "no proxy for the recipe"
	admin_wait || die "no admin socket"
	PH=$(in_px curl -sS --max-time 5 http://127.0.0.1:3128/.well-known/postern/session |
		sed -n 's/^env GH_TOKEN //p')
	minted=$(grep -c '"jwt_ok": true' "$mock/api.log")
	fetched=$(grep -c '/org/allowed' "$mock/git.log")
	refusals() { grep -c '"path":"/org/other.git/info/refs".*"reason":"repository_not_allowed"' "$PROXY_LOG"; }
	refused=$(refusals)
	out=$(recipe_run sh -c '
		export HOME=/tmp GIT_TERMINAL_PROMPT=0
		env | grep "^GH_TOKEN=\|^GITHUB_TOKEN="
		git clone -q https://git.gh.test:8447/org/allowed.git /tmp/c && echo clone=ok
		echo "readme=$(cat /tmp/c/README)"
		cd /tmp/c && echo x >X && git add X && git -c user.name=t -c user.email=t@t commit -qm x &&
			{ git push -q https://git.gh.test:8447/org/other.git main >/tmp/o 2>&1
			echo "other=$? $(grep -c 403 /tmp/o)"; }
		' </dev/null 2>"$WORLD_DIR/bwrap.err")
	rc=$?
	expect_eq 0 $rc "bwrap recipe: the sandbox exits 0 ($(tail -c 400 "$WORLD_DIR/bwrap.err"))"
	expect_eq "GH_TOKEN=$PH" "$(printf '%s\n' "$out" | grep '^GH_TOKEN=')" \
		"  CMD's GH_TOKEN is the session's placeholder"
	expect_eq "GITHUB_TOKEN=$PH" "$(printf '%s\n' "$out" | grep '^GITHUB_TOKEN=')" "  and GITHUB_TOKEN"
	expect_match "^clone=ok$" "$out" "  git clone of org/allowed succeeds"
	expect_match "^readme=hello from the app$" "$out" "  the clone has the file"
	expect_eq $((minted + 1)) "$(grep -c '"jwt_ok": true' "$mock/api.log")" "  with a token minted for it"
	[ "$(grep -c '/org/allowed' "$mock/git.log")" -gt "$fetched" ] &&
		ok "  the git server served the clone" || fail "  the git server saw no clone"
	expect_match "^other=[1-9][0-9]* [1-9]" "$out" "  a push to org/other fails with postern's 403"
	expect_eq 0 "$(grep -c '/org/other' "$mock/git.log")" "  no request for org/other reached the git server"
	expect_eq $((refused + 1)) "$(refusals)" "  the refusal is audited"
	leaked=0
	while read -r t; do
		[ -n "$t" ] && printf '%s\n' "$out" | grep -qF "$t" && leaked=$((leaked + 1))
	done <"$mock/issued"
	expect_eq 0 "$leaked" "  no token is in CMD's environment"
	proxy_stop
	expect_eq 0 $? "the recipe's proxy exits cleanly"
else
	diag "bwrap, postern-bridge or user namespaces for uid 1000 are missing: the bwrap recipe is not tried"
fi
