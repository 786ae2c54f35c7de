#!/bin/sh
# sidecar-run-summary.sh: what `postern-sidecar run` tells the person at the
# terminal about refusals.
#   - a refusal repeated (same host:port, reason and fix, as pip's retries
#     are) is one line, told when it first happens;
#   - when CMD exits, one summary: each refused host:port with its count,
#     then the --allow flags that would allow them, each once;
#   - nothing at all when nothing was refused.
. "$top_srcdir/tests/integration/sidecar-lib.sh"
sc_world_up
[ -x "$top_builddir/postern-bridge" ] || skip "postern-bridge is not built"

run() { in_px "$SIDECAR" run "$@"; }

# 1. Six identical refusals, two others, one allowed request.
out=$(run --allow "allowed.test:80 private" -- sh -c '
	for i in 1 2 3 4 5 6; do
		curl -sS --max-time 5 -o /dev/null -w "%{http_connect}\n" https://deny.test/simple/
	done
	curl -sS --max-time 5 -o /dev/null -w "%{http_code}\n" http://other.test/a
	curl -sS --max-time 5 -o /dev/null -w "%{http_code}\n" http://other.test/b
	curl -sS --max-time 5 -o /dev/null -w "%{http_code}\n" http://allowed.test/
	exit 4' 2>"$WORLD_DIR/err1")
rc=$?
err=$(cat "$WORLD_DIR/err1")
diag "stderr: $err"
expect_eq 4 $rc "CMD's status comes back"
expect_match "^200$" "$out" "the allowed request went through"
expect_eq 1 "$(grep -c "^postern: refused CONNECT deny.test:443: host_not_allowed" "$WORLD_DIR/err1")" \
	"six identical refusals are told once"
expect_eq 1 "$(grep -c "^postern: refused GET other.test:80 path /a: host_not_allowed" "$WORLD_DIR/err1")" \
	"the first refusal of other.test is told"
expect_eq 0 "$(grep -c "^postern: refused GET other.test:80 path /b" "$WORLD_DIR/err1")" \
	"its repeat (same host, port, reason and fix) is not"
expect_match "^postern: refused 8 requests in this run:$" "$err" "a summary when CMD exits"
expect_match "^postern:   6x deny.test:443 \(host_not_allowed\)$" "$err" "the repeated one with its count"
expect_match "^postern:   2x other.test:80 \(host_not_allowed\)$" "$err" "the other one with its count"
expect_match "^postern: to allow them: --allow 'deny.test' --allow 'other.test'$" "$err" \
	"the --allow flags that would allow them, each once"
expect_eq "postern: to allow them: --allow 'deny.test' --allow 'other.test'" "$(tail -n 1 "$WORLD_DIR/err1")" \
	"the summary is the last thing printed"

# 2. Nothing refused: nothing said.
out=$(run --allow "allowed.test:80 private" -- \
	curl -sS --max-time 5 -o /dev/null -w "%{http_code}\n" http://allowed.test/ 2>"$WORLD_DIR/err2")
expect_eq 200 "$out" "an allowed request"
expect_eq "" "$(cat "$WORLD_DIR/err2")" "no summary when nothing was refused"

exit 0
