#!/bin/sh
# proxy-explain: --check and --explain answer an admin before deployment,
# with the decision code the proxy itself runs; --resolve looks the name
# up with the world's DNS and classifies every address; without it no DNS
# query is made.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

P="$top_builddir/postern-proxy"
conf=$(proxy_conf "[defaults]" \
	"allow_hosts = allowed.test, loop.test, *.wild.test private" \
	"deny_hosts = b.c.wild.test" \
	"[session agent-1]" "listen = unix:$WORLD_DIR/a1.sock" \
	"allow_hosts = api.example.test:8080/hooks/ private")

out=$(in_px "$P" --check -c "$conf")
expect_eq 0 $? "--check accepts the file"
expect_match "^session agent-1$" "$out" "--check lists each session"
expect_match "allow \*\.wild\.test private .*postern\.ini:6" "$out" "with each rule and its FILE:LINE"
expect_match "listen unix:$WORLD_DIR/a1.sock" "$out" "and its listeners"

out=$(in_px "$P" --explain allowed.test:443 -c "$conf")
expect_eq 0 $? "--explain exits 0 for allow"
expect_match "^allow allowed\.test .*postern\.ini:6$" "$(printf '%s\n' "$out" | head -1)" "first line: allow RULE FILE:LINE"
expect_eq 0 "$(dns_query_count)" "no DNS query without --resolve"

out=$(in_px "$P" --explain evil.test:443 -c "$conf")
expect_eq 1 $? "--explain exits 1 for deny"
expect_eq "deny host_not_allowed (no rule matches evil.test:443 in session default)" \
	"$(printf '%s\n' "$out" | head -1)" "first line: deny REASON (detail)"
expect_match "allow_hosts = evil.test" "$out" "and what would allow it"

out=$(in_px "$P" --explain b.c.wild.test:443 -c "$conf")
expect_match "^deny denied_by_rule" "$out" "deny wins, and --explain says so"
out=$(in_px "$P" --explain http://api.example.test:8080/hooks/x --session agent-1 -c "$conf")
expect_match "^allow api\.example\.test:8080/hooks/ private" "$out" "a plain-HTTP URL in a session"
out=$(in_px "$P" --explain http://api.example.test:8080/admin --session agent-1 -c "$conf")
expect_match "^deny path_not_allowed" "$out" "outside the path prefix"
out=$(in_px "$P" --explain allowed.test:443 --session agent-2 -c "$conf" 2>&1)
expect_eq 2 $? "--explain exits 2 for an unknown session"
expect_match "no session named agent-2 in .*; its sessions: default, agent-1$" "$out" \
	"and lists the sessions the file has"
out=$(in_px "$P" --explain 0x7f.1:443 -c "$conf")
expect_match "^deny bad_request" "$out" "a non-canonical literal is a bad request"

out=$(in_px "$P" --explain allowed.test:443 --resolve -c "$conf")
expect_match "^deny private_address" "$out" "--resolve: allowed.test resolves to a private address without the flag"
expect_match "REFUSED 10\.200\.1\.2" "$out" "and names the address"
expect_ne 0 "$(dns_query_count allowed.test)" "--resolve queried the world's DNS"
out=$(in_px "$P" --explain a.wild.test:443 --resolve -c "$conf")
expect_match "^allow \*\.wild\.test private" "$out" "--resolve: with the private flag the address is accepted"
out=$(in_px "$P" --explain nxdomain.test:443 --resolve -c "$conf" --allow nxdomain.test)
expect_match "^deny dns_failure" "$out" "--resolve: a name that does not exist is a dns_failure"

printf '[proxy]\nlisten = tcp:127.0.0.1:1\nbogus = 1\n[defaults]\nallow_hosts = *\n' >"$WORLD_DIR/bad.ini"
out=$(in_px "$P" --check -c "$WORLD_DIR/bad.ini" 2>&1)
expect_eq 2 $? "--check exits 2 for a bad file"
expect_match "bad\.ini:3: unknown key in \[proxy\] \(bogus\)" "$out" "each error with FILE:LINE"
expect_match "bad\.ini:5: a bare \* would allow everything" "$out" "all errors, not just the first"
