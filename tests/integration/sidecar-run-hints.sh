#!/bin/sh
# sidecar-run-hints: in `postern-sidecar run` the rules come from the
# command line, so a refusal tells the person (on stderr) and the client
# (in the 403 body) which --allow would permit it, never a [defaults]
# line, and the suggestion keeps the "private" flag an address needs.
. "$top_srcdir/tests/integration/sidecar-lib.sh"
sc_world_up
[ -x "$top_builddir/postern-bridge" ] || skip "postern-bridge is not built"

XDG="$WORLD_DIR/xdg"
mkdir -m 0711 "$XDG"
err="$WORLD_DIR/run.err"

# allowed.test resolves to 10.200.1.2, a private address: the rule without
# the flag is refused at the address.
out=$(in_px env XDG_RUNTIME_DIR="$XDG" "$SIDECAR" run --allow 'allowed.test:80' -- \
	curl -sS --max-time 10 http://allowed.test/ 2>"$err")
expect_match "^postern: refused GET allowed\.test:80 .*private_address.*pass --allow 'allowed\.test private'$" \
	"$(cat "$err")" "a private refusal names the --allow with the flag"
expect_no_match "\[defaults\]" "$(cat "$err")" "and no [defaults] line on the terminal"
expect_match "pass --allow 'allowed\.test private'$" "$out" "the client's 403 body says --allow too"
expect_no_match "\[defaults\]" "$out" "and not [defaults]"

# A port the private rule does not cover: the suggestion keeps "private".
out=$(in_px env XDG_RUNTIME_DIR="$XDG" "$SIDECAR" run --allow 'allowed.test private' -- \
	curl -sS --max-time 10 http://allowed.test:8080/ 2>"$err")
expect_match "^postern: refused GET allowed\.test:8080 .*port_not_allowed.*; to allow it: --allow 'allowed\.test:8080 private'$" \
	"$(cat "$err")" "a port suggestion in run keeps the rule's private flag"
expect_match "pass --allow 'allowed\.test:8080 private'$" "$out" "in the 403 body too"
