#!/bin/sh
# sidecar-run-report.sh: postern-sidecar run --report.
#   - what the allowlist would refuse is reached, and told on the terminal
#     as a "would refuse" line (not a refusal) with the --allow that would
#     allow it, once per host:port, reason and fix; summed apart at the end;
#   - a warning at start says the session is not enforcing;
#   - still refused: a deny rule of the file, an unlisted host whose
#     address is in a never-reachable range;
#   - transparent capture: a program that ignores HTTP_PROXY reaches in
#     report mode a port no rule names (the name check offers the usual
#     ports, judged like the CONNECT);
#   - without --report the same run refuses as before.
. "$top_srcdir/tests/integration/sidecar-lib.sh"
sc_world_up
[ -x "$top_builddir/postern-bridge" ] || skip "postern-bridge is not built"

run() { in_px "$SIDECAR" run "$@"; }

cat >"$WORLD_DIR/rep.ini" <<-INI
	[defaults]
	allow_hosts = allowed.test:8443 private
	deny_hosts = deny.test
INI
cmd='for p in /a /b; do
		curl -sS --max-time 5 -o /dev/null -w "allowed %{http_code}\n" http://allowed.test$p
	done
	curl -sS --max-time 5 -o /dev/null -w "priv %{http_code}\n" http://priv.test/
	curl -sS --max-time 5 -o /dev/null -w "deny %{http_code}\n" http://deny.test/'

out=$(run -c "$WORLD_DIR/rep.ini" --report -- sh -c "$cmd" 2>"$WORLD_DIR/err1")
rc=$?
err=$(cat "$WORLD_DIR/err1")
diag "stderr: $err"
expect_eq 0 $rc "run --report runs CMD"
expect_eq 2 "$(printf '%s\n' "$out" | grep -c '^allowed 200$')" \
	"report: another port of a listed host is reached, twice"
expect_match "^priv 403$" "$out" "report: an unlisted host at a private address is still refused"
expect_match "^deny 403$" "$out" "report: a deny rule is still enforced"
expect_match "session default is in report mode \(--report\): NOT ENFORCING" "$err" \
	"a warning at start says the session is not enforcing"
expect_eq 1 "$(grep -c "^postern: report mode, allowed; would refuse GET allowed.test:80 path /a: port_not_allowed .*; to allow it: --allow 'allowed.test private'$" "$WORLD_DIR/err1")" \
	"the relaxed request is told once as would refuse, with its --allow hint"
expect_eq 0 "$(grep -c "^postern: refused GET allowed.test" "$WORLD_DIR/err1")" \
	"it is not told as a refusal"
expect_match "^postern: refused GET priv.test:80 path /: private_address" "$err" "the private one is a refusal"
expect_match "^postern: refused GET deny.test:80 path /: denied_by_rule" "$err" "the denied one too"
expect_match "^postern: report mode: would have refused 2 requests in this run:$" "$err" \
	"a summary of what report mode let through"
expect_match "^postern:   2x allowed.test:80 \(port_not_allowed\)$" "$err" "with its count"
expect_match "^postern: refused 2 requests in this run:$" "$err" "and the refusals' own summary"

XDG="$WORLD_DIR/xdg"
mkdir -m 0711 "$XDG"
out=$(in_px env XDG_RUNTIME_DIR="$XDG" "$SIDECAR" run -c "$WORLD_DIR/rep.ini" --report -- sh -c '
	curl -sS --noproxy "*" --max-time 10 -o /dev/null -w "capture %{http_code}\n" http://allowed.test/cap
	curl -sS --noproxy "*" --max-time 10 -o /dev/null -w "capture deny %{http_code}\n" http://deny.test/' \
	2>"$WORLD_DIR/err3")
diag "stderr: $(cat "$WORLD_DIR/err3")"
expect_match "^capture 200$" "$out" "report: capture reaches another port of a listed host"
expect_no_match "^capture deny 200$" "$out" "report: capture still refuses a denied host"
expect_match "would refuse CONNECT allowed.test:80: port_not_allowed" "$(cat "$WORLD_DIR/err3")" \
	"and the would-refuse line names the CONNECT capture made"

out=$(run -c "$WORLD_DIR/rep.ini" -- sh -c "$cmd" 2>"$WORLD_DIR/err2")
err=$(cat "$WORLD_DIR/err2")
diag "stderr: $err"
expect_eq 2 "$(printf '%s\n' "$out" | grep -c '^allowed 403$')" "without --report: refused"
expect_no_match "would refuse|NOT ENFORCING|report mode" "$err" "and nothing says report mode"
expect_match "^postern: refused GET allowed.test:80 path /a: port_not_allowed" "$err" "told as a refusal"

expect_match "only applies to run" "$("$SIDECAR" --report 2>&1)" "--report is run's only"
