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

# Over SOCKS5 (ALL_PROXY, socks5h:// at the bridge): the same line and the
# same --allow hint as for a CONNECT.
out=$(in_px env XDG_RUNTIME_DIR="$XDG" "$SIDECAR" run --allow 'allowed.test private' -- \
	sh -c 'echo "ALL=$ALL_PROXY"; curl -sS --max-time 10 --proxy "$ALL_PROXY" https://deny.test/' 2>"$err")
expect_match "^ALL=socks5h://127\.0\.0\.1:[0-9]+$" "$out" "run's sandbox has ALL_PROXY=socks5h://"
expect_match "^postern: refused SOCKS5 CONNECT deny\.test:443: host_not_allowed .*; to allow it: --allow 'deny\.test'$" \
	"$(cat "$err")" "a SOCKS5 refusal names the --allow that would permit it"
expect_match "curl: \(97\).*\(2\)" "$(cat "$err")" "and the client saw reply code 2"
