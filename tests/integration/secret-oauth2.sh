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
# and a response that echoes the token reaches the client overwritten.
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

# wait_port PORT: until 10.200.1.2:PORT takes a connection.
wait_port() {
	in_px "$WORLD_PYTHON" -c '
import socket, sys, time
for i in range(200):
    try:
        socket.create_connection(("10.200.1.2", int(sys.argv[1])), timeout=1).close()
        break
    except OSError:
        time.sleep(0.05)
' "$1"
}
start_token() {
	in_up "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-tls/oauth2mock.py" token 10.200.1.2 8444 \
		"$WORLD_CERT" "$WORLD_KEY" "$mock" client-1 "$CS" "$R0" 2 &
	wait_port 8444
}
start_token
in_up "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-tls/oauth2mock.py" api 10.200.1.2 8445 \
	"$WORLD_CERT" "$WORLD_KEY" "$mock" &
wait_port 8445

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
