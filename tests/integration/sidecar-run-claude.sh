#!/bin/sh
# sidecar-run-claude.sh: the README's `postern-sidecar run --env
# ANTHROPIC_API_KEY -- claude -p ...` line, run as printed with the real
# Claude Code against a stand-in for the Messages API at api.anthropic.com
# (the world's DNS names it; its addresses are private, hence the one added
# --allow 'api.anthropic.com private', and its CA reaches Claude Code through
# NODE_EXTRA_CA_CERTS, which run passes by default):
#   - the key arrives upstream in x-api-key, and the mock's answer is printed;
#   - while CMD runs, the key is in CMD's environment and in no postern
#     process's /proc/PID/cmdline or /proc/PID/environ (sidecar, engine,
#     bridge), nor anywhere in their writable memory;
#   - CMD gets NODE_USE_ENV_PROXY=1 beside the proxy variables, and the
#     certificate-bundle variables, but not a variable not named by --env.
# Skips when Claude Code is not installed (contrib/install-deps.sh installs
# it from npm).
. "$top_srcdir/tests/integration/sidecar-lib.sh"
KEY="sk-ant-postern-test-$$-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
ANSWER="postern-mock-answer-$$"
sc_claude_world mock-anthropic.py "$ANSWER"

# The README's line, as printed (the lines with `run --env ... claude`).
line=$(sed -n 's/^    \$ \(postern-sidecar run --env ANTHROPIC_API_KEY .*-- claude .*\)$/\1/p' \
	"$top_srcdir/README.md" | sed 's/ *# .*$//' | head -n 1)
[ -n "$line" ] || die "the README has no 'postern-sidecar run --env ANTHROPIC_API_KEY -- claude' line"
diag "README: $line"
rest=${line#postern-sidecar run }

# renv CMD...: CMD in px with the caller's environment of this test.
renv() {
	in_px env -i PATH="$PATH" HOME="$HOMEDIR" LANG=C.UTF-8 TERM=dumb \
		ANTHROPIC_API_KEY="$KEY" NODE_EXTRA_CA_CERTS="$HOMEDIR/ca.pem" \
		POSTERN_TEST_UNNAMED="unnamed-$$" "$@"
}

# 1. The README's example, against the mock.
out=$(eval "renv \"\$SIDECAR\" run --allow 'api.anthropic.com private' $rest" \
	</dev/null 2>"$WORLD_DIR/claude.err")
rc=$?
diag "claude printed: $out"
diag "stderr: $(cat "$WORLD_DIR/claude.err")"
diag "mock saw: $(cat "$MOCK_LOG")"
expect_eq 0 $rc "the README's claude -p line exits 0"
expect_match "$ANSWER" "$out" "the mock's answer is printed"
expect_match "\"path\": \"/v1/messages[?\"]" "$(cat "$MOCK_LOG")" "Claude Code called the Messages API"
expect_eq "" "$(grep '"/v1/messages' "$MOCK_LOG" | grep -v "\"x-api-key\": \"$KEY\"")" \
	"every Messages call carried the key in x-api-key"

# 2. While CMD runs: the key is in CMD's environment only.
cat >"$HOMEDIR/show.sh" <<'EOF'
env | sort >"$HOME/env.out"
: >"$HOME/ready"
i=0
while [ ! -e "$HOME/go" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
EOF
# memscan.py NEEDLE PID: print the writable mappings of PID that hold NEEDLE.
cat >"$WORLD_DIR/memscan.py" <<'EOF'
import sys
needle, pid = sys.argv[1].encode(), sys.argv[2]
with open("/proc/%s/maps" % pid) as maps, open("/proc/%s/mem" % pid, "rb", 0) as mem:
    for line in maps:
        f = line.split()
        if "w" not in f[1]:
            continue
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        try:
            mem.seek(lo)
            if needle in mem.read(hi - lo):
                print(f[5] if len(f) > 5 else f[0])
        except (OSError, ValueError, OverflowError):
            pass
EOF
renv "$SIDECAR" run --env ANTHROPIC_API_KEY -- sh "$HOMEDIR/show.sh" \
	>"$WORLD_DIR/show.out" 2>&1 &
jpid=$!
i=0
while [ ! -e "$HOMEDIR/ready" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
[ -e "$HOMEDIR/ready" ] || die "CMD did not start: $(cat "$WORLD_DIR/show.out")"
leaks= seen=0 cmdpid=
for p in $(pgrep -f "postern-(sidecar|bridge)"); do
	tr '\0' '\n' </proc/$p/cmdline 2>/dev/null | grep -q "$HOMEDIR/show.sh" || continue
	seen=$((seen + 1))
	for f in cmdline environ; do
		grep -qa "$KEY" /proc/$p/$f 2>/dev/null && leaks="$leaks $p:$f"
	done
	for m in $("$WORLD_PYTHON" "$WORLD_DIR/memscan.py" "$KEY" $p); do
		mleaks="${mleaks:-} $p:$m"
	done
done
cmd_mem=
for p in $(pgrep -f "^sh $HOMEDIR/show.sh"); do
	cmd_mem=$("$WORLD_PYTHON" "$WORLD_DIR/memscan.py" "$KEY" $p)
done
for p in $(pgrep -f "^sh $HOMEDIR/show.sh"); do cmdpid=$p; done
cmd_has=no
[ -n "$cmdpid" ] && grep -qa "$KEY" /proc/$cmdpid/environ && cmd_has=yes
: >"$HOMEDIR/go"
wait $jpid
expect_eq 0 $? "the run exits 0"
expect_eq 3 "$seen" "three postern processes found (sidecar, engine, bridge)"
expect_eq yes "$cmd_has" "CMD's own environ holds the key (so the search works)"
expect_eq "" "${leaks# }" "no postern process's cmdline or environ holds the key"
expect_ne "" "$cmd_mem" "CMD's memory holds the key (so the memory search works)"
expect_eq "" "${mleaks# }" "no postern process's memory holds the key"
env_out=$(cat "$HOMEDIR/env.out")
expect_match "^ANTHROPIC_API_KEY=$KEY$" "$env_out" "CMD got the --env variable"
expect_no_match "POSTERN_TEST_UNNAMED" "$env_out" "CMD did not get a variable not named"
expect_match "^NODE_USE_ENV_PROXY=1$" "$env_out" "NODE_USE_ENV_PROXY=1 beside the proxy variables"
expect_match "^HTTPS_PROXY=http://127.0.0.1:3128$" "$env_out" "HTTPS_PROXY is set"
expect_match "^NODE_EXTRA_CA_CERTS=$HOMEDIR/ca.pem$" "$env_out" "a certificate bundle passes by default"

# 3. A value is never taken from the command line.
renv "$SIDECAR" run --env "ANTHROPIC_API_KEY=$KEY" -- true 2>"$WORLD_DIR/bad.err"
expect_eq 2 $? "--env NAME=VALUE is a usage error"
exit 0
