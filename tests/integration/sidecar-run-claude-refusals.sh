#!/bin/sh
# sidecar-run-claude-refusals.sh: the agent is told why.  The real Claude
# Code runs under `postern-sidecar run` against a stand-in for the Messages
# API (lib/mock-anthropic-tool.py), which has it call its Bash tool twice:
# first `curl https://refused.test/`, whose own output only says the tunnel
# failed, then `cat "$POSTERN_REFUSALS"`.  The request Claude Code sends
# after that carries, in its tool_result, the line the person saw: the
# refusal, its reason (host_not_allowed) and the --allow that would allow
# it.  Skips when Claude Code is not installed (contrib/install-deps.sh
# installs it from npm).
. "$top_srcdir/tests/integration/sidecar-lib.sh"
KEY="sk-ant-postern-test-$$"
sc_claude_world mock-anthropic-tool.py \
	'curl -sS --max-time 10 https://refused.test/' 'cat "$POSTERN_REFUSALS"'

out=$(in_px env -i PATH="$PATH" HOME="$HOMEDIR" LANG=C.UTF-8 TERM=dumb \
	ANTHROPIC_API_KEY="$KEY" NODE_EXTRA_CA_CERTS="$HOMEDIR/ca.pem" \
	"$SIDECAR" run --env ANTHROPIC_API_KEY --allow 'api.anthropic.com private' -- \
	claude -p 'Fetch https://refused.test/ and say why it failed' --allowedTools Bash \
	</dev/null 2>"$WORLD_DIR/claude.err")
rc=$?
diag "claude printed: $out"
diag "stderr: $(cat "$WORLD_DIR/claude.err")"
diag "mock saw: $(cat "$MOCK_LOG")"
expect_eq 0 $rc "claude -p exits 0"
expect_match "^postern: refused CONNECT refused\.test:443: host_not_allowed .*; to allow it: --allow 'refused\.test'$" \
	"$(cat "$WORLD_DIR/claude.err")" "the person at the terminal is told"

# The tool results of the last request that carried any, one per line.
results=$("$WORLD_PYTHON" -c '
import json, sys
last = []
for line in open(sys.argv[1]):
    r = json.loads(line).get("tool_results") or []
    if r:
        last = r
for i, t in enumerate(last):
    print("%d: %s" % (i + 1, t.replace("\n", " | ")))' "$MOCK_LOG")
diag "tool results: $results"
expect_match "^1: .*CONNECT tunnel failed, response 403" "$results" \
	"the curl alone: Claude sees a failed tunnel, not why"
expect_no_match "^1: .*host_not_allowed" "$results" "the curl's own output does not say policy"
expect_match "^2: postern: refused CONNECT refused\.test:443: host_not_allowed \(.*\); to allow it: --allow 'refused\.test'" \
	"$results" "Claude's next request carries the refusal, its reason and the --allow hint"
expect_eq done "$out" "the session ends once the agent has read it"
exit 0
