#!/bin/sh
# proxy-sessinfo: the proxy answers a bridge's session request on the
# session's own socket (GET /.well-known/postern/session): the session's
# placeholders, never the real values, and its CAs, the same one the state
# directory keeps; a session with no secret gets the version line only; a
# reload that adds a terminated host keeps the CA and adds one; and the
# real bridge, pointed at the socket, gives CMD the placeholder and a
# bundle that ends with the CA.
. "$top_srcdir/tests/integration/lib/world.sh"
command -v openssl >/dev/null 2>&1 || skip "openssl is not installed"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

S="$WORLD_DIR/sock"
ST="$WORLD_DIR/state"
mkdir -p "$S" "$ST" "$WORLD_DIR/conf.d"
chmod 700 "$ST"
chmod 755 "$WORLD_DIR/conf.d"
conf="$WORLD_DIR/conf.d/postern.ini"
KEY="sk-ant-api03-REAL$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')-real"
GHKEY="ghp_REAL$(od -An -N14 -tx1 /dev/urandom | tr -d ' \n')"
export ANTHROPIC_API_KEY="$KEY" GH_TOKEN="$GHKEY"

write_conf() { # EXTRA-SECRETS
	{
		admin_proxy_section "state_dir = $ST"
		cat <<-EOF2
			[session agent]
			listen = unix:$S/agent.sock
			allow_hosts = api.anthropic.com, api.github.com, github.com
			secrets = anthropic$1
			[session plain]
			listen = unix:$S/plain.sock
			allow_hosts = allowed.test private
		EOF2
	} >"$conf.tmp"
	mv "$conf.tmp" "$conf"
}
ask() { # SOCK -> the answer's body on stdout, the status in $WORLD_DIR/status
	in_px curl -s -o - -w '%{http_code}' --unix-socket "$1" \
		http://postern/.well-known/postern/session >"$WORLD_DIR/ans"
	tail -c 3 "$WORLD_DIR/ans" >"$WORLD_DIR/status"
	head -c -3 "$WORLD_DIR/ans"
}

write_conf ""
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"

body=$(ask "$S/agent.sock")
expect_eq 200 "$(cat "$WORLD_DIR/status")" "the session request is answered"
expect_eq "postern-session 1" "$(echo "$body" | head -n 1)" "version 1"
ph=$(echo "$body" | sed -n 's/^env ANTHROPIC_API_KEY //p')
[ -n "$ph" ] || fail "no placeholder for ANTHROPIC_API_KEY: $body"
[ "$ph" != "$KEY" ] || fail "the answer holds the real key"
# The vendor's prefix, then 95 random letters and digits: the length of
# Anthropic's keys, not of this one, and nothing else of it.
expect_match '^sk-ant-api03-[A-Za-z0-9]{95}$' "$ph" "the placeholder is sk-ant-api03- and 95 random characters"
echo "$body" | sed -n '/^ca$/,$p' | sed 1d >"$WORLD_DIR/ca-answer.pem"
cmp -s "$WORLD_DIR/ca-answer.pem" "$ST/ca/agent.pem" ||
	fail "the CA in the answer is not the one in the state directory"
openssl x509 -in "$WORLD_DIR/ca-answer.pem" -noout -ext nameConstraints 2>/dev/null |
	grep -q "DNS:api.anthropic.com" || fail "the CA is not constrained to api.anthropic.com"
expect_eq "$ph" "$(ask "$S/agent.sock" | sed -n 's/^env ANTHROPIC_API_KEY //p')" \
	"the same placeholder twice"

expect_eq "postern-session 1" "$(ask "$S/plain.sock")" "a session without secrets: the version line only"
expect_eq 200 "$(cat "$WORLD_DIR/status")" "and a 200"

# A reload that binds github: the first CA stays, a second one comes.
write_conf ", github"
ms=$(wait_generation 2 2)
expect_eq 0 $? "the reload is taken ($ms ms)"
body=$(ask "$S/agent.sock")
expect_eq "$ph" "$(echo "$body" | sed -n 's/^env ANTHROPIC_API_KEY //p')" \
	"the placeholder survives the reload"
echo "$body" | grep -q '^env GH_TOKEN ghp_' || fail "no GH_TOKEN placeholder after the reload"
expect_eq 2 "$(echo "$body" | grep -c 'BEGIN CERTIFICATE')" "two CAs after the reload"
echo "$body" | sed -n '/^ca$/,$p' | sed 1d | head -n "$(wc -l <"$ST/ca/agent.pem")" |
	cmp -s - "$ST/ca/agent.pem" || fail "the first CA is not the one sandboxes already trust"

# The real bridge against the real proxy: CMD gets the placeholder, not
# the key it was started with, and a bundle that ends with the CAs.
if command -v unshare >/dev/null 2>&1; then
	root=
	[ "$(id -u)" = 0 ] && root=--allow-root
	out=$(ANTHROPIC_API_KEY="$KEY" unshare -n "$top_builddir/postern-bridge" $root --connect "$S/agent.sock" \
		--env ANTHROPIC_API_KEY -- sh -c 'echo "key=$ANTHROPIC_API_KEY"; echo "bundle=$SSL_CERT_FILE";
			tail -n 1 "$SSL_CERT_FILE"' 2>"$WORLD_DIR/bridge.err")
	expect_eq "key=$ph" "$(echo "$out" | sed -n 1p)" "the bridge gives CMD the placeholder"
	expect_eq "-----END CERTIFICATE-----" "$(echo "$out" | sed -n 3p)" "and a bundle ending with a CA" ||
		world__show "$(cat "$WORLD_DIR/bridge.err")"
else
	diag "unshare is not there: the bridge half is not run"
fi

for f in "$WORLD_DIR/proxy.out" "$WORLD_DIR/ans" "$WORLD_DIR/bridge.err"; do
	[ -f "$f" ] || continue
	grep -qF "$KEY" "$f" && fail "the real key is in $f"
	grep -qF "$GHKEY" "$f" && fail "the real GitHub token is in $f"
done
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
