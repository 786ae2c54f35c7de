#!/bin/sh
# sidecar-run-claude-secret.sh: the README's `ANTHROPIC_API_KEY=...
# postern-sidecar run --secret ANTHROPIC_API_KEY -- claude -p ...` line, run
# as printed with the real Claude Code against a stand-in for the Messages
# API at api.anthropic.com (the world's DNS names it, its addresses are
# private: hence the one added --allow 'api.anthropic.com private'; the
# world's CA reaches the proxy, which verifies the upstream, through
# SSL_CERT_FILE):
#   - Claude Code, holding only a placeholder, gets the mock's answer: the
#     proxy terminated TLS with the session CA (which the bridge's bundle
#     gives Node) and put the real key in x-api-key;
#   - every Messages call arrived upstream with the real key, and never
#     with the placeholder;
#   - while CMD runs, the real key is nowhere CMD can reach: not in its
#     environment, not in its memory (searched), while the placeholder is
#     (so the search works);
#   - the placeholder is sk-ant-api03- and 95 random letters and digits:
#     the shape of Anthropic's keys, nothing of this key but the prefix.
# Skips when Claude Code is not installed (contrib/install-deps.sh installs
# it from npm).
. "$top_srcdir/tests/integration/sidecar-lib.sh"
KEY="sk-ant-api03-REAL$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')-realkey0123"
ANSWER="postern-mock-answer-$$"
sc_claude_world mock-anthropic.py "$ANSWER"
# The README's line, as printed.
line=$(sed -n 's/^    \$ \(ANTHROPIC_API_KEY=[^ ]* \)\{0,1\}\(postern-sidecar run --secret ANTHROPIC_API_KEY .*-- claude .*\)$/\2/p' \
	"$top_srcdir/README.md" | sed 's/ *# .*$//' | head -n 1)
[ -n "$line" ] || die "the README has no 'postern-sidecar run --secret ANTHROPIC_API_KEY -- claude' line"
diag "README: $line"
rest=${line#postern-sidecar run }
# renv CMD...: CMD in px with the caller's environment of this test.
renv() {
	in_px env -i PATH="$PATH" HOME="$HOMEDIR" LANG=C.UTF-8 TERM=dumb \
		ANTHROPIC_API_KEY="$KEY" SSL_CERT_FILE="$HOMEDIR/ca.pem" "$@"
}

# 1. The README's example, against the mock.
out=$(eval "renv \"\$SIDECAR\" run --allow 'api.anthropic.com private' $rest" \
	</dev/null 2>"$WORLD_DIR/claude.err")
rc=$?
diag "claude printed: $out"
diag "stderr: $(cat "$WORLD_DIR/claude.err")"
diag "mock saw: $(cat "$MOCK_LOG")"
expect_eq 0 $rc "the README's claude -p --secret line exits 0"
expect_match "$ANSWER" "$out" "the mock's answer is printed"
expect_match "\"path\": \"/v1/messages[?\"]" "$(cat "$MOCK_LOG")" "Claude Code called the Messages API"
expect_eq "" "$(grep '"/v1/messages' "$MOCK_LOG" | grep -v "\"x-api-key\": \"$KEY\"")" \
	"every Messages call arrived with the real key in x-api-key"
grep -q "$KEY" "$WORLD_DIR/claude.err" && fail "the key is on the terminal"
expect_no_match "$KEY" "$out" "the key is not in CMD's output"

# 2. While CMD runs: the real key is nowhere in CMD, the placeholder is.
cat >"$HOMEDIR/show.sh" <<'EOF'
env | sort >"$HOME/env.out"
: >"$HOME/ready"
i=0
while [ ! -e "$HOME/go" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
EOF
cat >"$WORLD_DIR/memscan.py" <<'EOF'
import sys
needle, pid = sys.argv[1].encode(), sys.argv[2]
with open("/proc/%s/maps" % pid) as maps, open("/proc/%s/mem" % pid, "rb", 0) as mem:
    for line in maps:
        f = line.split()
        if "r" not in f[1]:
            continue
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        try:
            mem.seek(lo)
            if needle in mem.read(hi - lo):
                print(f[5] if len(f) > 5 else f[0])
        except (OSError, ValueError, OverflowError):
            pass
EOF
renv "$SIDECAR" run --secret ANTHROPIC_API_KEY -- sh "$HOMEDIR/show.sh" \
	>"$WORLD_DIR/show.out" 2>&1 &
jpid=$!
i=0
while [ ! -e "$HOMEDIR/ready" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
[ -e "$HOMEDIR/ready" ] || die "CMD did not start: $(cat "$WORLD_DIR/show.out")"
PH=$(sed -n 's/^ANTHROPIC_API_KEY=//p' "$HOMEDIR/env.out")
cmdpid=
for p in $(pgrep -f "^sh $HOMEDIR/show.sh"); do cmdpid=$p; done
key_mem=x ph_mem=
if [ -n "$cmdpid" ]; then
	key_mem=$("$WORLD_PYTHON" "$WORLD_DIR/memscan.py" "$KEY" "$cmdpid")
	ph_mem=$("$WORLD_PYTHON" "$WORLD_DIR/memscan.py" "$PH" "$cmdpid")
fi
: >"$HOMEDIR/go"
wait $jpid
expect_eq 0 $? "the run exits 0"
expect_ne "" "$PH" "CMD has ANTHROPIC_API_KEY"
expect_ne "$KEY" "$PH" "and it is not the real key"
expect_match '^sk-ant-api03-[A-Za-z0-9]{95}$' "$PH" "it is sk-ant-api03- and 95 random characters"
expect_ne "" "$ph_mem" "CMD's memory holds the placeholder (so the memory search works)"
expect_eq "" "$key_mem" "CMD's memory does not hold the real key"
exit 0
