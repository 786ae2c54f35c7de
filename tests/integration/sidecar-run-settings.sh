#!/bin/sh
# sidecar-run-settings: postern-sidecar run --settings FILE takes the
# network policy of an srt settings file.  Its allowed domains pass the
# host rules ("*.wild.test" any name below wild.test, not wild.test), its
# denied subdomain is refused even when the command line allows it, an
# unlisted host is refused, and the world's private addresses stay refused
# until --allow gives the flag (srt has no such floor).  --print-config
# prints the postern.ini it stands for: run --check accepts it and run -c
# with it decides the same.  A settings file postern cannot apply whole
# (an unknown network key) starts nothing.
. "$top_srcdir/tests/integration/sidecar-lib.sh"
sc_world_up
[ -x "$top_builddir/postern-bridge" ] || skip "postern-bridge is not built"

XDG="$WORLD_DIR/xdg"
mkdir -m 0711 "$XDG"
err="$WORLD_DIR/run.err"
S="$WORLD_DIR/srt-settings.json"
cat >"$S" <<-JSON
	{
	  "network": {
	    "allowedDomains": ["allowed.test", "*.wild.test"],
	    "deniedDomains": ["a.wild.test"],
	    "allowUnixSockets": ["/var/run/docker.sock"],
	    "allowLocalBinding": false
	  },
	  "filesystem": {
	    "denyRead": ["~/.ssh"],
	    "allowWrite": ["."],
	    "denyWrite": []
	  }
	}
JSON

# CMD asks for each host over plain HTTP and prints "HOST CODE".
probe='for h in allowed.test b.c.wild.test a.wild.test wild.test other.test; do
	printf "%s %s\n" $h "$(curl -s --max-time 10 -o /dev/null -w "%{http_code}" http://$h/)"
done'

# The file alone: what its rules admit is refused only at the address.
out=$(in_px env XDG_RUNTIME_DIR="$XDG" "$SIDECAR" run --settings "$S" -- sh -c "$probe" 2>"$err")
rc=$?
diag "$out"
diag "$(cat "$err")"
expect_eq 0 $rc "run --settings ran CMD"
expect_match "^postern: refused GET allowed\.test:80 .*private_address.*--allow 'allowed\.test private'$" \
	"$(cat "$err")" "allowed.test passes the file's rules, refused only at its private address"
expect_match "^postern: refused GET b\.c\.wild\.test:80 .*private_address" "$(cat "$err")" \
	"*.wild.test admits b.c.wild.test (refused only at the address)"
expect_match "^postern: refused GET a\.wild\.test:80 .*denied_by_rule" "$(cat "$err")" \
	"the denied subdomain is refused by a deny rule"
expect_match "^postern: refused GET wild\.test:80 .*host_not_allowed" "$(cat "$err")" \
	"*.wild.test does not admit wild.test itself"
expect_match "^postern: refused GET other\.test:80 .*host_not_allowed" "$(cat "$err")" \
	"an unlisted host is refused"
expect_match "warning: .*network\.allowUnixSockets: not applied" "$(cat "$err")" \
	"a key not applied is named"
expect_match "warning: .*filesystem\.denyRead: no postern equivalent" "$(cat "$err")" \
	"and the file settings are said not to apply"

# With the private flag the refusal offered: reachable, but the file's
# deny still wins over the command line's allow.
out=$(in_px env XDG_RUNTIME_DIR="$XDG" "$SIDECAR" run --settings "$S" \
	--allow 'allowed.test private' --allow '*.wild.test private' -- sh -c "$probe" 2>"$err")
diag "$out"
expect_match "^allowed\.test 200$" "$out" "the allowed domain is reachable"
expect_match "^b\.c\.wild\.test 200$" "$out" "a name under the wildcard is reachable"
expect_match "^a\.wild\.test 403$" "$out" "the denied subdomain is refused, --allow '*.wild.test private' or not"
expect_match "^wild\.test 403$" "$out" "wild.test itself is refused"
expect_match "^other\.test 403$" "$out" "the unlisted host is refused"
expect_eq 0 "$(upstream_count host=a.wild.test)" "nothing reached upstream for a.wild.test"
expect_eq 0 "$(upstream_count host=other.test)" "nor for other.test"

# The equivalent postern.ini: accepted by run --check, and it decides the same.
P="$WORLD_DIR/postern.ini"
"$SIDECAR" run --settings "$S" --print-config >"$P" 2>"$err"
expect_eq 0 $? "--print-config"
diag "$(cat "$P")"
expect_match "^allow_hosts = \*\.wild\.test$" "$(cat "$P")" "the wildcard as postern writes it"
expect_match "^deny_hosts = a\.wild\.test$" "$(cat "$P")" "the denied domain as a deny rule"
in_px env XDG_RUNTIME_DIR="$XDG" "$SIDECAR" run --check -c "$P" >"$WORLD_DIR/check.out" 2>&1
expect_eq 0 $? "run --check -c accepts the printed postern.ini"
out=$(in_px env XDG_RUNTIME_DIR="$XDG" "$SIDECAR" run -c "$P" \
	--allow 'allowed.test private' --allow '*.wild.test private' -- sh -c "$probe" 2>"$err")
expect_match "^allowed\.test 200$" "$out" "run -c with it reaches the allowed domain"
expect_match "^a\.wild\.test 403$" "$out" "and refuses the denied subdomain"
expect_match "^other\.test 403$" "$out" "and the unlisted host"

# --learn on top of the file: the learned items go into that postern.ini.
in_px env XDG_RUNTIME_DIR="$XDG" "$SIDECAR" run --settings "$S" --learn -- \
	curl -s --max-time 10 -o /dev/null http://other.test/ 2>"$err"
diag "$(cat "$err")"
expect_match "^# for the postern.ini of run --settings FILE --print-config: add these items" \
	"$(cat "$err")" "--learn says where its items go"
expect_match "--allow 'other\.test private'" "$(cat "$err")" "and learns the unlisted host"

# A network key postern does not know could widen what CMD reaches when
# left out: nothing starts.
B="$WORLD_DIR/bad.json"
printf '{"network": {"allowedDomains": ["allowed.test"], "deniedPorts": [80]}}\n' >"$B"
out=$(in_px env XDG_RUNTIME_DIR="$XDG" "$SIDECAR" run --settings "$B" -- echo started 2>"$err")
expect_eq 2 $? "an unknown network key refuses the file"
expect_no_match "started" "$out" "and CMD never ran"
expect_match "bad\.json: network\.deniedPorts: unknown key" "$(cat "$err")" "the error names the key"
printf '{"network": {"allowedDomains": ["allowed.test",]}}\n' >"$B"
in_px env XDG_RUNTIME_DIR="$XDG" "$SIDECAR" run --settings "$B" -- true 2>"$err"
expect_eq 2 $? "bad JSON refuses the file"
expect_match "bad\.json:1:[0-9]+: " "$(cat "$err")" "with FILE:LINE:COLUMN"
exit 0
