#!/bin/sh
# proxy-errors: what the three programs say when something is wrong.  A
# condition that stops a start is "error:" and the last line says the
# program is not starting (proxy and bridge); an unknown key gets the nearest known one;
# -V/--version work on every binary and "run --help" is run's own usage.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

P="$top_builddir/postern-proxy"
S="$top_builddir/postern-sidecar"
B="$top_builddir/postern-bridge"
PACKAGE_VERSION=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$top_builddir/config.h")

for bin in "$P" "$S" "$B"; do
	name=$(basename "$bin")
	for opt in -V --version; do
		out=$("$bin" $opt 2>&1)
		expect_eq "0 $name $PACKAGE_VERSION" "$? $out" "$name $opt prints its version"
	done
done

out=$("$S" run --help 2>&1)
expect_eq 0 $? "run --help exits 0"
expect_match "^usage: postern-sidecar run " "$(printf '%s\n' "$out" | head -1)" "run --help starts with run's usage"
expect_no_match "lockdown-check|unlock" "$out" "and is not the whole program's"

# A socket directory the proxy cannot write: fatal, "error:", not starting.
d=$(mktemp -d "$WORLD_DIR/rootdir.XXXXXX")
chmod 0755 "$WORLD_DIR" "$d"
conf="$WORLD_DIR/sock.ini"
printf '[proxy]\nlisten = unix:%s/p.sock\ndns_servers = %s\n[defaults]\nallow_hosts = allowed.test\n' \
	"$d" "$WORLD_DNS" >"$conf"
chmod 0644 "$conf"
out=$(in_px timeout 10 setpriv --reuid 65534 --regid 65534 --clear-groups "$P" -c "$conf" 2>&1)
rc=$?
expect_eq 1 "$rc" "a socket it cannot bind stops the start"
expect_match "^postern-proxy: error: cannot listen on unix:$d/p\.sock: Permission denied$" "$out" "as an error"
expect_no_match "warning:" "$out" "not as a warning"
expect_eq "postern-proxy: not starting" "$(printf '%s\n' "$out" | tail -1)" "and the last line says it is not starting"

# No resolv.conf nameserver and no dns_servers: fatal the same way.
conf="$WORLD_DIR/nodns.ini"
printf '[proxy]\nlisten = tcp:127.0.0.1:3128\n[defaults]\nallow_hosts = allowed.test\n' >"$conf"
out=$(in_px timeout 10 unshare -m sh -c 'mount --bind /dev/null /etc/resolv.conf && exec "$0" -c "$1"' "$P" "$conf" 2>&1)
expect_eq 1 $? "no nameserver stops the start"
expect_match "^postern-proxy: error: DNS: no dns_servers configured and /etc/resolv.conf lists no nameserver$" "$out" "as an error"
expect_eq "postern-proxy: not starting" "$(printf '%s\n' "$out" | tail -1)" "and the last line says so"

# The bridge's refusal to start says so the same way.
out=$(in_px timeout 10 "$B" --connect "$WORLD_DIR/none.sock" -- true 2>&1)
expect_eq 2 $? "the bridge refuses to run CMD as root"
expect_match "^postern-bridge: error: refusing to run true: " "$out" "as an error"
expect_eq "postern-bridge: not starting" "$(printf '%s\n' "$out" | tail -1)" "and its last line says it is not starting"

# Unknown keys: the nearest known one, when it is near.
printf '[proxy]\nlisten = tcp:127.0.0.1:3128\nconect_timeout = 5s\nbogus = 1\n[defaults]\nallow_host = allowed.test\n[hostss]\n' >"$WORLD_DIR/typo.ini"
out=$(in_px "$P" --check -c "$WORLD_DIR/typo.ini" 2>&1)
expect_eq 2 $? "--check refuses the typos"
expect_match "typo\.ini:3: unknown key in \[proxy\] \(conect_timeout\); did you mean connect_timeout\?$" "$out" "a [proxy] typo gets the key it resembles"
expect_match "typo\.ini:6: unknown key in \[defaults\] \(allow_host\); did you mean allow_hosts\?$" "$out" "so does a [defaults] one"
expect_match "typo\.ini:4: unknown key in \[proxy\] \(bogus\)$" "$out" "a word like no key gets no guess"
expect_match "typo\.ini:7: unknown section \[hostss\] .*; did you mean \[hosts\]\?$" "$out" "so does a section"

# Pasted URLs where a host is expected: the scheme gives the port, and the
# proxy says what the URL was taken as.
conf="$WORLD_DIR/url.ini"
printf '[proxy]\nlisten = tcp:127.0.0.1:3128\nlog = %s\ndns_servers = %s\n[defaults]\nallow_hosts = http://other.test/api/ private\n' \
	"$PROXY_LOG" "$WORLD_DNS" >"$conf"
proxy_start "$conf" --allow 'https://allowed.test private' || die "no proxy with --allow https://allowed.test"
expect_match "warning: <command line>: https://allowed\.test private taken as allowed\.test:443$" \
	"$(cat "$WORLD_DIR/proxy.out")" "--allow https://HOST says it is taken as HOST:443"
expect_match "url\.ini:6: http://other\.test/api/ private taken as other\.test:80/api/$" \
	"$(cat "$WORLD_DIR/proxy.out")" "a URL in the file says what it became, with FILE:LINE"
out=$(curl_px -x http://127.0.0.1:3128 https://allowed.test/x)
expect_match "^sni=allowed\.test$" "$out" "a CONNECT to the URL's host and port goes through"
expect_eq 200 "$(curl_status -x http://127.0.0.1:3128 http://other.test/api/v1)" \
	"an http:// URL with a path is a path rule: inside it is allowed"
expect_eq 403 "$(curl_status -x http://127.0.0.1:3128 http://other.test/admin)" \
	"and outside it refused"
proxy_stop >/dev/null

out=$(in_px "$P" --check -c "$conf" --allow https://allowed.test/org/repo 2>&1)
expect_eq 2 $? "--allow https://HOST/PATH is refused"
expect_match "needs the \"inspect\" flag: the path is inside TLS, which the proxy sees only when it terminates" \
	"$out" "saying a path is enforced inside TLS only with inspect"

out=$(in_px "$P" --explain https://allowed.test/org/repo -c "$conf" --allow 'allowed.test private' 2>"$WORLD_DIR/explain.err")
expect_eq 0 $? "--explain https://HOST/PATH explains the CONNECT it becomes"
expect_match "^allow allowed\.test private" "$(printf '%s\n' "$out" | head -1)" "as an allow by the host rule"
expect_match "note: https://allowed\.test/org/repo taken as CONNECT allowed\.test:443$" \
	"$(cat "$WORLD_DIR/explain.err")" "and says what it was taken as"
expect_match "note: the path /org/repo is inside TLS" "$(cat "$WORLD_DIR/explain.err")" \
	"and that the path is not seen"

# A suggestion widens a rule that needed "private": it keeps the flag, or
# the rule it suggests would be refused at the address.
out=$(in_px "$P" --explain allowed.test:8443 -c "$conf" --allow 'allowed.test private' 2>/dev/null)
expect_match "^  add to \[defaults\]: allow_hosts = allowed\.test:8443 private$" "$out" \
	"a port suggestion keeps the rule's private flag"
out=$(in_px "$P" --explain http://other.test/admin -c "$conf" 2>/dev/null)
expect_match "^  add to \[defaults\]: allow_hosts = other\.test/admin private$" "$out" \
	"so does a path suggestion"
