#!/bin/sh
# secret-oauth2: a [secret] of kind = oauth2.  A mock token endpoint
# (auth.test:8444) rotates its refresh token on every use and refuses an
# old one, and gives access tokens good for 2 s; a mock API
# (api.oauth.test:8445) takes only a current access token.  The client,
# through the proxy, holds only the session's placeholder.  A stream of
# requests for 10 s, new connections and kept-alive ones, never fails
# across the refreshes; the rotated refresh token is kept in state_dir
# (0600) and used after a restart (the config's first one is spent); a
# 401 from the API drops the token and the next request gets a new one;
# with the endpoint down a request that needs a token is refused 503
# credential_unavailable, audited and counted, with the endpoint's error
# in the text; no token reaches a log, the audit or the session's answer,
# and a response that echoes the token reaches the client overwritten;
# through README's bwrap recipe (postern-bridge on the session's UNIX
# socket) and inside `postern-sidecar run --secret api`, curl with only
# the placeholder in its environment reaches the API with a minted token.
WORLD_DNS_EXTRA="auth.test=10.200.1.2 api.oauth.test=10.200.1.2"
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

state="$WORLD_DIR/state"
mock="$WORLD_DIR/mock"
mkdir -p "$state" "$mock"
chmod 700 "$state"
CS="cs-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
R0="rt0-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
export PX_OAUTH_CS="$CS" PX_OAUTH_RT="$R0"
printf '%s\n%s\n' "$CS" "$R0" >"$mock/issued"

start_token() {
	in_up "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-tls/oauth2mock.py" token 10.200.1.2 8444 \
		"$WORLD_CERT" "$WORLD_KEY" "$mock" client-1 "$CS" "$R0" 2 &
	world_wait_tcp 10.200.1.2:8444
}
start_token
in_up "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-tls/oauth2mock.py" api 10.200.1.2 8445 \
	"$WORLD_CERT" "$WORLD_KEY" "$mock" &
world_wait_tcp 10.200.1.2:8445

conf="$WORLD_DIR/postern.ini"
{
	admin_proxy_section "upstream_ca_file = $WORLD_CA" "state_dir = $state"
	cat <<-EOF
		[defaults]
		allow_hosts = api.oauth.test:8445 private
		secrets = api
		[secret api]
		kind = oauth2
		token_url = https://auth.test:8444/token
		client_id = client-1
		from_env = PX_OAUTH_CS
		refresh_token_env = PX_OAUTH_RT
		scope = read write
		placeholder_env = API_TOKEN
		inject = api.oauth.test:8445 header Authorization "Bearer %s"
	EOF
} >"$conf"
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
CA="$state/ca/default.pem"
[ -s "$CA" ] || die "the session CA is not in $CA"
sess=$(in_px curl -sS --max-time 5 http://127.0.0.1:3128/.well-known/postern/session)
PH=$(printf '%s\n' "$sess" | sed -n 's/^env API_TOKEN //p')
[ -n "$PH" ] || die "no placeholder for API_TOKEN in the session answer"

# stream SECONDS: requests with the placeholder for SECONDS, half on new
# connections, half on one kept alive; prints "ok N" or the failures.
stream() {
	in_px "$WORLD_PYTHON" - "$1" "$PH" "$CA" <<'EOF'
import http.client, ssl, sys, time
secs, ph, ca = float(sys.argv[1]), sys.argv[2], sys.argv[3]
ctx = ssl.create_default_context(cafile=ca)
def conn():
    c = http.client.HTTPSConnection("127.0.0.1", 3128, context=ctx, timeout=10)
    c.set_tunnel("api.oauth.test", 8445)
    return c
kept = conn()
n, bad = 0, []
end = time.time() + secs
while time.time() < end:
    for c in (conn(), kept):
        try:
            c.request("GET", "/api/item", headers={"Authorization": "Bearer " + ph})
            r = c.getresponse()
            body = r.read()
            if r.status != 200:
                bad.append("%d %s %s" % (r.status, r.getheader("X-Postern-Reason"), body[:200]))
        except Exception as e:
            bad.append("error %r" % (e,))
            if c is kept:
                kept = conn()
        n += 1
        if c is not kept:
            c.close()
    time.sleep(0.05)
print("ok %d" % n if not bad else "\n".join(bad[:10]) + "\nfailed %d of %d" % (len(bad), n))
EOF
}

out=$(stream 10)
expect_match "^ok [0-9]+$" "$out" "a 10 s stream of requests never fails across refreshes"
n=$(grep -c '"ok": true' "$mock/token.log")
[ "$n" -ge 4 ] && ok "the token was refreshed $n times in 10 s" ||
	fail "the token was refreshed only $n times in 10 s"
expect_eq 0 "$(grep -c '"ok": false' "$mock/token.log")" "no grant was refused (no refresh token used twice)"
expect_eq 0 "$(grep -c '"ok": false' "$mock/api.log")" "the API never saw a token it does not take"
expect_eq 0 "$(grep -cF "$PH" "$mock/api.log")" "the API never saw the placeholder"
expect_audit "the requests are audited as allowed" host=api.oauth.test decision=allow
# An API that echoes the credential: the client gets it overwritten.
echo_out=$(curl_px -x http://127.0.0.1:3128 --cacert "$CA" -H "Authorization: Bearer $PH" \
	https://api.oauth.test:8445/echo)
expect_match "^auth=Bearer \*+$" "$echo_out" "a response that carries the token back has it overwritten"

# The rotated refresh token is kept, 0600, and not the first one.
sf="$state/oauth2-api.refresh"
expect_eq 600 "$(stat -c %a "$sf" 2>/dev/null)" "the rotated refresh token is kept in state_dir, mode 0600"
cur=$("$WORLD_PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1])))' "$mock/refresh.json")
expect_eq 1 "$(grep -cF "$cur" "$sf")" "state_dir holds the current refresh token"

# A 401 from the API drops the token: the next request mints another.
# Tokens good for 30 s from now on, so that the one revoked is still in
# the cache when the next request comes.
echo 30 >"$mock/life.json"
sleep 2.5
code=$(curl_status -x http://127.0.0.1:3128 --cacert "$CA" -H "Authorization: Bearer $PH" \
	https://api.oauth.test:8445/api/before-revoke)
expect_eq 200 "$code" "a token good for 30 s is minted"
in_px curl -sS --max-time 5 --cacert "$WORLD_CA" -X POST https://api.oauth.test:8445/revoke-all >/dev/null
before=$(grep -c '"ok": true' "$mock/token.log")
code=$(curl_status -x http://127.0.0.1:3128 --cacert "$CA" -H "Authorization: Bearer $PH" \
	https://api.oauth.test:8445/api/after-revoke)
expect_eq 401 "$code" "a token the API no longer takes gets its 401 through"
code=$(curl_status -x http://127.0.0.1:3128 --cacert "$CA" -H "Authorization: Bearer $PH" \
	https://api.oauth.test:8445/api/after-401)
expect_eq 200 "$code" "after the 401, the next request carries a new token"
after=$(grep -c '"ok": true' "$mock/token.log")
expect_eq $((before + 1)) "$after" "the 401 made the proxy mint once more"
echo 2 >"$mock/life.json"
cur=$("$WORLD_PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1])))' "$mock/refresh.json")

# A restart: the first refresh token is spent, the kept one is used.
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
proxy_start "$conf" || die "no proxy after the restart"
admin_wait || die "no admin socket"
: >"$mock/token.log"
# A new process makes new placeholders.
sess=$(in_px curl -sS --max-time 5 http://127.0.0.1:3128/.well-known/postern/session)
PH=$(printf '%s\n' "$sess" | sed -n 's/^env API_TOKEN //p')
code=$(curl_status -x http://127.0.0.1:3128 --cacert "$CA" -H "Authorization: Bearer $PH" \
	https://api.oauth.test:8445/api/after-restart)
expect_eq 200 "$code" "after a restart the kept refresh token gets a new access token"
expect_eq 1 "$(grep -c "\"refresh\": \"$cur\", .*\"ok\": true" "$mock/token.log")" \
	"the refresh token used after the restart is the rotated one"
expect_eq 0 "$(grep -cF "\"refresh\": \"$R0\"" "$mock/token.log")" \
	"the config's spent refresh token is not used again"

# The endpoint down: once the token expires, a request is refused.
kill "$(cat "$mock/token.pid")" 2>/dev/null
sleep 2.5
hdr=$(in_px curl -sS --max-time 20 -o "$WORLD_DIR/down.body" -D - -x http://127.0.0.1:3128 --cacert "$CA" \
	-H "Authorization: Bearer $PH" https://api.oauth.test:8445/api/down)
expect_match "^HTTP/1.1 503" "$hdr" "with the endpoint down, the request is refused 503"
expect_match "^X-Postern-Reason: credential_unavailable" "$hdr" "with reason credential_unavailable"
expect_match "token endpoint failed: could not connect to auth.test" "$(cat "$WORLD_DIR/down.body")" \
	"the refusal says what the endpoint did"
expect_audit "the refusal is audited" host=api.oauth.test reason=credential_unavailable
expect_eq 1 "$(metrics_get postern_decisions_total session=default reason=credential_unavailable)" \
	"and counted in /metrics"

# No token anywhere but where it belongs.
proxy_stop
for f in "$PROXY_LOG" "$WORLD_DIR/proxy.out"; do
	leaked=0
	while read -r t; do
		[ -n "$t" ] && grep -qF "$t" "$f" && leaked=$((leaked + 1))
	done <"$mock/issued"
	expect_eq 0 "$leaked" "no token or client secret is in $(basename "$f")"
done
leaked=0
while read -r t; do
	[ -n "$t" ] && printf '%s\n' "$sess" | grep -qF "$t" && leaked=$((leaked + 1))
done <"$mock/issued"
expect_eq 0 "$leaked" "the session's answer (the sandbox's environment) holds no token"

# The next two sections: a fresh refresh token (the mock's current one is
# set to it) and the token endpoint back up.
# fresh_refresh: a new current refresh token, exported in PX_OAUTH_RT.
fresh_refresh() {
	PX_OAUTH_RT="rt-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
	export PX_OAUTH_RT
	printf '"%s"\n' "$PX_OAUTH_RT" >"$mock/refresh.json"
}
start_token
# Outside /tmp, /var/tmp and /run (the sandboxes' fresh ones), readable by
# uid 1000: the bridge, the world's CA and the session's socket.
. "$top_srcdir/tests/integration/lib/recipe.sh"
recipe_dir oauth2
HOMEDIR=$RECIPE_DIR
world_cleanup_hook() { rm -rf "$HOMEDIR"; }
# api_ok PATH-PREFIX: how many requests under PATH-PREFIX the API took.
api_ok() { grep -F "\"path\": \"$1" "$mock/api.log" | grep -c '"ok": true'; }
# CMD for both: its API_TOKEN and PX_ variables, then three requests.
CMD3='env | grep "^API_TOKEN=\|^PX_"; for i in 1 2 3; do
	curl -sS --max-time 10 -H "Authorization: Bearer $API_TOKEN" "https://api.oauth.test:8445/api/$P-$i"; done'

# The bwrap recipe of README.md: curl in a sandbox with no network
# but the session's socket; the bridge gives it the placeholder, the
# session CA and HTTPS_PROXY.
if recipe_ok; then
	fresh_refresh
	mkdir -p "$WORLD_DIR/state2" && chmod 700 "$WORLD_DIR/state2"
	sed -e "s|^state_dir = .*|state_dir = $WORLD_DIR/state2|" \
		-e "/^\[proxy\]/a listen = unix:$HOMEDIR/s1/proxy.sock mode=666" "$conf" >"$WORLD_DIR/recipe.ini"
	proxy_start "$WORLD_DIR/recipe.ini" || die "no proxy for the recipe"
	admin_wait || die "no admin socket"
	PH=$(in_px curl -sS --max-time 5 http://127.0.0.1:3128/.well-known/postern/session |
		sed -n 's/^env API_TOKEN //p')
	out=$(recipe_run sh -c "P=bwrap; $CMD3" \
		</dev/null 2>"$WORLD_DIR/bwrap.err")
	rc=$?
	expect_eq 0 $rc "bwrap recipe: curl exits 0 ($(tail -c 400 "$WORLD_DIR/bwrap.err"))"
	expect_eq "API_TOKEN=$PH" "$(printf '%s\n' "$out" | grep '^API_TOKEN=')" \
		"  CMD's API_TOKEN is the session's placeholder"
	expect_eq 3 "$(printf '%s\n' "$out" | grep -c '^ok$')" "  the API answered ok three times"
	expect_eq 3 "$(api_ok /api/bwrap-)" "  the API took a minted token three times"
	expect_eq 0 "$(grep -cF "$PH" "$mock/api.log")" "  the API never saw the placeholder"
	expect_eq 1 "$(grep -c "\"refresh\": \"$PX_OAUTH_RT\", .*\"ok\": true" "$mock/token.log")" \
		"  the proxy minted it with the refresh token it was given"
	leaked=0
	while read -r t; do
		[ -n "$t" ] && printf '%s\n' "$out" | grep -qF "$t" && leaked=$((leaked + 1))
	done <"$mock/issued"
	expect_eq 0 "$leaked" "  no token or client secret is in CMD's environment"
	proxy_stop
else
	diag "bwrap, postern-bridge or user namespaces for uid 1000 are missing: the bwrap recipe is not tried"
fi

# Inside postern-sidecar run --secret api: curl holds the placeholder.
SIDECAR="${POSTERN_SIDECAR:-$top_builddir/postern-sidecar}"
if [ -x "$SIDECAR" ] && [ -x "$top_builddir/postern-bridge" ]; then
	fresh_refresh
	cp "$WORLD_CA" "$HOMEDIR/ca.pem"
	chmod -R a+rX "$HOMEDIR"
	cat >"$WORLD_DIR/run.ini" <<-INI
		[proxy]
		listen = unix:/run/pw-run-oauth2-$WORLD_ID.sock
		upstream_ca_file = $HOMEDIR/ca.pem
		[defaults]
		allow_hosts = api.oauth.test:8445 private
		[secret api]
		kind = oauth2
		token_url = https://auth.test:8444/token
		client_id = client-1
		from_env = PX_OAUTH_CS
		refresh_token_env = PX_OAUTH_RT
		placeholder_env = API_TOKEN
		inject = api.oauth.test:8445 header Authorization "Bearer %s"
	INI
	out=$(in_px env -i PATH=/usr/bin:/bin LANG=C.UTF-8 PX_OAUTH_CS="$CS" PX_OAUTH_RT="$PX_OAUTH_RT" \
		"$SIDECAR" run --config "$WORLD_DIR/run.ini" --secret api -- sh -c "P=run; $CMD3" \
		</dev/null 2>"$WORLD_DIR/sc.err")
	rc=$?
	expect_eq 0 $rc "curl inside postern-sidecar run exits 0 ($(tail -c 400 "$WORLD_DIR/sc.err"))"
	PH=$(printf '%s\n' "$out" | sed -n 's/^API_TOKEN=//p')
	[ -n "$PH" ] && ok "  CMD has a placeholder in API_TOKEN" || fail "  CMD has no API_TOKEN"
	expect_eq 3 "$(printf '%s\n' "$out" | grep -c '^ok$')" "  the API answered ok three times"
	expect_eq 3 "$(api_ok /api/run-)" "  the API took a minted token three times"
	[ -n "$PH" ] && expect_eq 0 "$(grep -cF "$PH" "$mock/api.log")" "  the API never saw the placeholder"
	expect_eq 1 "$(grep -c "\"refresh\": \"$PX_OAUTH_RT\", .*\"ok\": true" "$mock/token.log")" \
		"  the engine minted it with the refresh token it was given"
	leaked=0
	while read -r t; do
		[ -n "$t" ] && { printf '%s\n' "$out"; cat "$WORLD_DIR/sc.err"; } | grep -qF "$t" &&
			leaked=$((leaked + 1))
	done <"$mock/issued"
	expect_eq 0 "$leaked" "  no token or client secret is in CMD's environment or on the terminal"
	expect_no_match "$CS|$PX_OAUTH_RT" "$out" "  nor the client secret or the refresh token"
else
	diag "postern-sidecar or postern-bridge is not built: the sidecar run is not tried"
fi
