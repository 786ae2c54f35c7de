#!/bin/sh
# sidecar-run-hints: in `postern-sidecar run` the rules come from the
# command line, so a refusal tells the person (on stderr) and the client
# (in the 403 body) which --allow would permit it, never a [defaults]
# line, and the suggestion keeps the "private" flag an address needs.  A
# path that holds what the reader splits on is hinted as one rule for its
# own host: the hint passed back to run allows no other host.
WORLD_DNS_EXTRA="foo.attacker.test=10.200.1.2"
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
expect_match "^postern:   1x allowed\.test:80 \(private_address\)$" "$(cat "$err")" \
	"the summary counts the private refusal"
expect_eq "postern: to allow them: --allow 'allowed.test private'" "$(tail -n 1 "$err")" \
	"and keeps the private flag the line offered"
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

# A path holding a list: the hint on stderr and in the 403 body is one
# rule for other.test, its path cut before the ','.
out=$(in_px env XDG_RUNTIME_DIR="$XDG" "$SIDECAR" run --allow 'http://other.test/api/ private' -- \
	curl -sS --max-time 10 -g --path-as-is 'http://other.test/x,*.attacker.test:1-65535' 2>"$err")
diag "$(cat "$err")"
hint=$(sed -n "s/^postern: refused GET other\.test:80 .*; to allow it: --allow '\(.*\)'\$/\1/p" "$err" | head -n 1)
expect_eq "other.test/x private" "$hint" "a path holding a list: the hint is one rule for other.test"
expect_match "pass --allow 'other\.test/x private'$" "$out" "the 403 body says the same"
expect_no_match "--allow '[^']*attacker" "$(cat "$err")" "no --allow on stderr holds the rest"
out=$(in_px env XDG_RUNTIME_DIR="$XDG" "$SIDECAR" run --allow 'http://other.test/api/ private' \
	--allow "$hint" -- curl -sS --max-time 10 -o /dev/null -w '%{http_connect}\n' \
	-p https://foo.attacker.test:22/ 2>"$err")
diag "$(cat "$err")"
expect_eq 403 "$out" "the hint passed back to run allows no CONNECT to foo.attacker.test:22"

# A loopback port in --allow is the host's: without its --forward, CMD's
# own loopback answers (Failed to connect), so run says so at start.
in_px env XDG_RUNTIME_DIR="$XDG" "$SIDECAR" run --allow '127.0.0.1:8099' -- true 2>"$err"
diag "$(cat "$err")"
expect_match "hint: --allow '127\.0\.0\.1:8099' names a loopback port.*also pass --forward 8099$" \
	"$(cat "$err")" "an --allow of a loopback port without --forward gets a hint"
in_px env XDG_RUNTIME_DIR="$XDG" "$SIDECAR" run --allow 'allowed.test private, [::1]:9000' \
	--allow '127.0.0.1:8099' --forward 8099 -- true 2>"$err"
diag "$(cat "$err")"
expect_match "hint: --allow '\[::1\]:9000' names a loopback port.*also pass --forward 9000$" \
	"$(cat "$err")" "an item of a list is judged too"
expect_no_match "8099" "$(cat "$err")" "with its --forward, no hint"
