#!/bin/sh
# sidecar-run-audit: `postern-sidecar run` with an audit log in its config
# writes the proxy engine's chained, signed audit: the file a run leaves
# verifies with `postern-proxy audit verify`, a second run continues the
# chain in the same file, and an edited byte is caught.
. "$top_srcdir/tests/integration/sidecar-lib.sh"
sc_world_up
[ -x "$top_builddir/postern-bridge" ] || skip "postern-bridge is not built"

P="$top_builddir/postern-proxy"
# The engine writes as the proxy's uid: its own directory.
chmod 0755 "$WORLD_DIR"
D="$WORLD_DIR/audit"
mkdir -m 0700 "$D" && chown $PROXY_UID "$D" || die "mkdir $D"
LOG="$D/run-audit.log"
KEY="$D/run.key"
CONF="$WORLD_DIR/run.ini"
cat >"$CONF" <<-INI
	[proxy]
	log = $LOG
	audit_signing_key = $KEY
	[defaults]
	allow_hosts = allowed.test:8080 private
INI

run() { # TAG
	in_px env XDG_RUNTIME_DIR="$WORLD_DIR" "$SIDECAR" run -c "$CONF" -- sh -c "
		curl -s --max-time 10 -o /dev/null -w 'refused %{http_code}\n' https://$1.test/
		curl -sS --max-time 10 -o /dev/null -w 'allowed %{http_code}\n' http://allowed.test:8080/$1
		" 2>"$WORLD_DIR/run.err"
}

out=$(run first)
diag "$out"
diag "$(cat "$WORLD_DIR/run.err")"
expect_match "^allowed 200$" "$out" "run serves CMD"
expect_eq "600 $PROXY_UID" "$(stat -c '%a %u' "$KEY")" "run makes the signing key, mode 0600, the engine's"
expect_match '"host":"first\.test".*"seq":[0-9]*,"prev":"[0-9a-f]{64}"}$' "$(cat "$LOG")" \
	"the refusal's line is chained"
expect_match '"event":"checkpoint"' "$(tail -n 1 "$LOG")" "the run's audit ends with a signed checkpoint"
out=$("$P" audit verify -c "$CONF" "$LOG" 2>&1)
expect_eq 0 $? "audit verify accepts the run's audit"
diag "$out"

out=$(run second)
expect_match "^allowed 200$" "$out" "a second run serves CMD"
expect_eq 1 "$(grep -c '"event":"audit_open","chain":"continue"' "$LOG")" \
	"the second run continues the chain in the same file"
out=$("$P" audit verify -c "$CONF" "$LOG" 2>&1)
expect_eq 0 $? "audit verify accepts both runs"
diag "$out"

sed 's/first\.test/firsT.test/' "$LOG" >"$WORLD_DIR/edited.log"
out=$("$P" audit verify -c "$CONF" "$WORLD_DIR/edited.log" 2>&1)
expect_eq 3 $? "an edited byte in the run's audit: exit 3"
expect_match "edited\.log:[0-9]*: prev is not the hash of the line before" "$out" "... named"
