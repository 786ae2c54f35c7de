#!/bin/sh
# sidecar-run-summary.sh: what `postern-sidecar run` tells the person at the
# terminal about refusals, and run --session.
#   - a refusal repeated (same host:port, reason and fix, as pip's retries
#     are) is one line, told when it first happens;
#   - when CMD exits, one summary: each refused host:port with its count,
#     then the --allow flags that would allow them, each once;
#   - nothing at all when nothing was refused;
#   - --session NAME with -c FILE serves [session NAME] of FILE (its rules,
#     on run's own socket; none of the file's listeners is bound), and an
#     unknown NAME is a config error listing the file's sessions.
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
# (A checkout under /tmp gets a warning about the working directory.)
expect_eq "" "$(grep -v 'warning: the working directory' "$WORLD_DIR/err2")" \
	"no summary when nothing was refused"

# 3. --session NAME serves that session of the file.
HOSTSOCK="/run/pw-summary-$WORLD_ID.sock"
S2SOCK="/run/pw-summary-s2-$WORLD_ID.sock"
cat >"$WORLD_DIR/sessions.ini" <<-INI
	[proxy]
	listen = unix:$HOSTSOCK
	[defaults]
	allow_hosts = other.test:80 private
	[session s1]
	listen = unix:/run/pw-summary-s1-$WORLD_ID.sock
	allow_hosts = allowed.test:80 private
	[session s2]
	listen = unix:$S2SOCK
INI
out=$(run -c "$WORLD_DIR/sessions.ini" --session s1 -- sh -c '
	curl -sS --max-time 5 -o /dev/null -w "allowed %{http_code}\n" http://allowed.test/
	curl -sS --max-time 5 -o /dev/null -w "other %{http_code}\n" http://other.test/
	curl -sS --max-time 5 -o /dev/null -w "deny %{http_code}\n" http://deny.test/
	ls /run' 2>"$WORLD_DIR/err3")
rc=$?
diag "stderr: $(cat "$WORLD_DIR/err3")"
expect_eq 0 $rc "run --session s1 runs CMD"
expect_match "^allowed 200$" "$out" "the session's own rule allows"
expect_match "^other 200$" "$out" "and it inherits [defaults]"
expect_match "^deny 403$" "$out" "anything else is refused"
expect_match "in session s1\)" "$(cat "$WORLD_DIR/err3")" "the refusal names the session"
expect_eq "" "$(ls "$HOSTSOCK" "$S2SOCK" "/run/pw-summary-s1-$WORLD_ID.sock" 2>/dev/null)" \
	"none of the file's listeners was bound"
out=$(run -c "$WORLD_DIR/sessions.ini" --session nope -- echo CMD-RAN 2>&1)
rc=$?
expect_eq 2 $rc "an unknown session is a config error"
expect_match "no \[session nope\]; its sessions: s1, s2" "$out" "which lists the file's sessions"
expect_no_match "CMD-RAN" "$out" "and CMD does not run"
exit 0
