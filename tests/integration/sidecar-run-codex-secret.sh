#!/bin/sh
# sidecar-run-codex-secret.sh: `OPENAI_API_KEY=... postern-sidecar run
# --secret OPENAI_API_KEY -- codex exec ...` with the real Codex CLI against
# a stand-in for the Responses API at api.openai.com (the world's DNS names
# it, its addresses are private: hence --allow 'api.openai.com private';
# the world's CA reaches the proxy, which verifies the upstream, through
# SSL_CERT_FILE):
#   - Codex, holding only a placeholder, prints the mock's answer: the
#     proxy terminated TLS with the session CA (which the bridge's bundle
#     gives Codex through SSL_CERT_FILE) and put the real key in
#     Authorization;
#   - every Responses call arrived upstream with the real key, never with
#     the placeholder;
#   - CMD's OPENAI_API_KEY is sk-proj- and 156 random letters and digits:
#     the shape of OpenAI's project keys, nothing of this key (its length,
#     its '-' and '_') but the vendor prefix.
# Codex's built-in openai provider is used as it is: no base URL, no
# provider of the test's own.  Codex tries a WebSocket first (GET
# /v1/responses with Upgrade, which the mock answers 404), then falls back
# to HTTPS.  Skips when Codex is not installed
# (npm i -g @openai/codex).
. "$top_srcdir/tests/integration/sidecar-lib.sh"
CODEX=$(command -v codex) || skip "Codex (codex) is not installed: npm i -g @openai/codex"
"$CODEX" --version >/dev/null 2>&1 || skip "$CODEX does not run here"
API4=10.200.1.10
WORLD_DNS_EXTRA="api.openai.com=$API4"
sc_world_up
[ -x "$top_builddir/postern-bridge" ] || skip "postern-bridge is not built"
ip -n "$WORLD_NS_UP" addr add "$API4/24" dev veth-px || die "cannot add $API4"
KEY="sk-proj-REAL$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')-real_0123"
ANSWER="postern-mock-answer-$$"
# Outside /tmp, /var/tmp, /run and /dev/shm (the jail's fresh ones): a home
# for CMD (nobody, for a root caller; Codex wants its CODEX_HOME to exist)
# and the world's CA.
HOMEDIR=$(mktemp -d /var/lib/postern-codex.XXXXXX) || die "mktemp"
mkdir -p "$HOMEDIR/.codex" "$HOMEDIR/work" && chmod 1777 "$HOMEDIR" "$HOMEDIR/.codex" "$HOMEDIR/work" ||
	die "cannot make the home"
cp "$WORLD_CA" "$HOMEDIR/ca.pem" && chmod 0644 "$HOMEDIR/ca.pem" || die "cannot copy the CA"
world_cleanup_hook() {
	[ -n "${MOCK_PID:-}" ] && kill "$MOCK_PID" 2>/dev/null
	rm -rf "$HOMEDIR"
}
MOCK_LOG="$WORLD_DIR/mock.log"
: >"$MOCK_LOG"
MOCK_PID=$(world__spawn "$WORLD_DIR/mock.out" ip netns exec "$WORLD_NS_UP" \
	"$WORLD_PYTHON" "$top_srcdir/tests/integration/lib/mock-openai.py" \
	"$API4" 443 "$WORLD_CERT" "$WORLD_KEY" "$MOCK_LOG" "$WORLD_DIR/mock.ready" "$ANSWER")
i=0
while [ ! -e "$WORLD_DIR/mock.ready" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
[ -e "$WORLD_DIR/mock.ready" ] || die "the mock API did not start: $(cat "$WORLD_DIR/mock.out")"
# renv CMD...: CMD in px with the caller's environment of this test.
renv() {
	in_px env -i PATH="$PATH" HOME="$HOMEDIR" CODEX_HOME="$HOMEDIR/.codex" LANG=C.UTF-8 TERM=dumb \
		OPENAI_API_KEY="$KEY" SSL_CERT_FILE="$HOMEDIR/ca.pem" "$@"
}

# 1. codex exec, holding the placeholder, against the mock.
out=$(cd "$HOMEDIR/work" && renv "$SIDECAR" run --allow 'api.openai.com private' \
	--secret OPENAI_API_KEY -- "$CODEX" exec --skip-git-repo-check 'Say hello' \
	</dev/null 2>"$WORLD_DIR/codex.err")
rc=$?
diag "codex printed: $out"
diag "stderr: $(tail -n 20 "$WORLD_DIR/codex.err")"
diag "mock saw: $(cat "$MOCK_LOG")"
expect_eq 0 $rc "codex exec --secret OPENAI_API_KEY exits 0"
expect_match "$ANSWER" "$out" "the mock's answer is printed"
expect_match "\"path\": \"/v1/responses\"" "$(cat "$MOCK_LOG")" "Codex called the Responses API"
expect_match "\"method\": \"POST\", \"path\": \"/v1/responses\"" "$(cat "$MOCK_LOG")" \
	"Codex posted to the Responses API"
# Its WebSocket attempt carries no credential of its own, and gets none:
# the value goes only where the placeholder was.
expect_eq "" "$(grep '"/v1/' "$MOCK_LOG" | grep -v '"authorization": null' |
	grep -v "\"authorization\": \"Bearer $KEY\"")" \
	"every API call that carried a credential arrived with the real key in Authorization"
expect_eq "" "$(grep '"method": "POST", "path": "/v1/' "$MOCK_LOG" |
	grep -v "\"authorization\": \"Bearer $KEY\"")" \
	"every POST arrived with the real key: codex exec sent the placeholder it found in CODEX_API_KEY"
grep -q "$KEY" "$WORLD_DIR/codex.err" && fail "the key is on the terminal"
expect_no_match "$KEY" "$out" "the key is not in CMD's output"

# 2. What CMD holds: the placeholder, of the shape of OpenAI's keys.
PH=$(renv "$SIDECAR" run --secret OPENAI_API_KEY -- sh -c 'echo "$OPENAI_API_KEY"' 2>/dev/null)
expect_match '^sk-proj-[A-Za-z0-9]{156}$' "$PH" "CMD's OPENAI_API_KEY is sk-proj- and 156 random characters"
expect_ne "$KEY" "$PH" "and not the real key"
both=$(renv "$SIDECAR" run --secret OPENAI_API_KEY -- sh -c 'echo "$OPENAI_API_KEY $CODEX_API_KEY"' 2>/dev/null)
expect_eq "${both% *}" "${both#* }" "CODEX_API_KEY holds the same placeholder"
expect_match '^sk-proj-' "${both#* }" "(a placeholder)"
expect_no_match "$PH" "$(cat "$MOCK_LOG")" "the placeholder never reached the API"
exit 0
