#!/bin/sh
# proxy-hosts: names the admin knows.  A name pinned in [hosts] goes to its
# address without DNS, and that address is vetted exactly like a DNS
# answer (never-reachable ranges, "private", deny_hosts); a name only
# /etc/hosts knows ends in dns_failure, and the refusal and --explain say
# that /etc/hosts is not read and how to pin it; a bad [hosts] line on
# reload leaves the old config in force.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

# The proxy sees an /etc/hosts of this test's own (a private mount
# namespace), which lists etconly.test.
printf '127.0.0.1 localhost\n10.200.1.2 etconly.test etconly  # the admin knows it\n' >"$WORLD_DIR/hosts"
cat >"$WORLD_DIR/proxy-wrap" <<EOF2
#!/bin/sh
exec unshare -m sh -c 'mount --bind "\$0" /etc/hosts && exec "\$@"' "$WORLD_DIR/hosts" "$top_builddir/postern-proxy" "\$@"
EOF2
chmod +x "$WORLD_DIR/proxy-wrap"
POSTERN_PROXY="$WORLD_DIR/proxy-wrap"

conf="$WORLD_DIR/postern.ini"
write_conf() {
	cat >"$conf" <<EOF2
[proxy]
listen = tcp:127.0.0.1:3128
log = $PROXY_LOG
dns_servers = $WORLD_DNS
[defaults]
allow_hosts = pinned.test:80 private, metapin.test:80, meta.test:80, loopin.test:3128 private
allow_hosts = denied-pin.test:80 private, etconly.test:80 private
deny_hosts = 10.200.1.3
[hosts]
pinned.test = $1
metapin.test = 169.254.169.254
loopin.test = 127.0.0.1
denied-pin.test = 10.200.1.3
$2
EOF2
}
write_conf 10.200.1.2 ""
proxy_start "$conf" || die "no proxy"

out=$(curl_px -x http://127.0.0.1:3128 http://pinned.test/x)
expect_match "^GET /x HTTP/1.1" "$out" "a pinned name reaches its 10.200 address through the proxy"
expect_audit "the allow is logged with the pinned address" event=decision host=pinned.test \
	decision=allow address=10.200.1.2
expect_eq 0 "$(dns_query_count pinned.test)" "without a DNS query"

# A pinned never-reachable address is refused exactly like the same DNS answer.
expect_eq 403 "$(curl_status -x http://127.0.0.1:3128 http://metapin.test/)" "a pin to 169.254.169.254 is refused"
expect_eq 403 "$(curl_status -x http://127.0.0.1:3128 http://meta.test/)" "as is meta.test, which DNS answers so"
pin=$(audit_get detail host=metapin.test event=decision)
dns=$(audit_get detail host=meta.test event=decision)
expect_eq "$(audit_get reason host=meta.test event=decision)" "$(audit_get reason host=metapin.test event=decision)" \
	"with the same reason"
expect_eq "$dns" "$pin" "and the same detail"
expect_match "never-reachable range 169\.254\.0\.0/16" "$pin" "which names the range"
expect_eq 403 "$(curl_status -x http://127.0.0.1:3128 http://loopin.test:3128/)" \
	"a pin to the proxy's own listener is refused even with private"
expect_audit "as its own listener" host=loopin.test reason=private_address detail~"own listener"
expect_eq 403 "$(curl_status -x http://127.0.0.1:3128 http://denied-pin.test/)" "a pin into deny_hosts is refused"
expect_audit "by the deny rule" host=denied-pin.test reason=denied_by_rule

# A name only /etc/hosts knows.
out=$(curl_px -x http://127.0.0.1:3128 http://etconly.test/ 2>&1)
expect_match "could not be resolved: .*/etc/hosts lists it, but /etc/hosts is not read: pin it in \[hosts\] \(etconly\.test = ADDRESS\)" \
	"$out" "a name only /etc/hosts knows: the refusal says /etc/hosts is not read"
expect_audit "in the audit line too" host=etconly.test reason=dns_failure detail~"/etc/hosts is not read"
out=$(in_px "$WORLD_DIR/proxy-wrap" --explain etconly.test:80 --resolve -c "$conf" 2>&1)
expect_match "^deny dns_failure .*/etc/hosts is not read: pin it in \[hosts\] \(etconly\.test = ADDRESS\)" "$out" \
	"and --explain --resolve says so"
out=$(in_px "$WORLD_DIR/proxy-wrap" --explain metapin.test:80 -c "$conf" 2>&1)
expect_match "^deny private_address " "$out" "--explain vets a pin without --resolve"
expect_match "pinned in \[hosts\] \(.*postern\.ini:11\): no DNS lookup" "$out" "and says where it is pinned"

# Reload: a bad [hosts] line is refused with FILE:LINE; the old pin stays.
write_conf 10.200.1.2 "bad.test = 127.1"
proxy_reload
world__poll sh -c "grep -c 'refused: $conf:14' '$WORLD_DIR/proxy.out'" >/dev/null
expect_match "reload \((SIGHUP|inotify)\) refused: $conf:14: \[hosts\] bad\.test: not a canonical IPv4 address \(127\.1\)" \
	"$(cat "$WORLD_DIR/proxy.out")" "a bad [hosts] line refuses the reload, with FILE:LINE"
expect_match "^GET /y HTTP/1.1" "$(curl_px -x http://127.0.0.1:3128 http://pinned.test/y)" "and the old pin stays in force"
# A good reload moves the pin.
write_conf 10.200.1.4 ""
proxy_reload
world__poll sh -c "grep -c 'generation 2 ' '$WORLD_DIR/proxy.out'" >/dev/null
expect_eq 502 "$(curl_status -x http://127.0.0.1:3128 http://pinned.test/)" "a reloaded pin takes effect"
expect_audit "at its new address" host=pinned.test address=10.200.1.4
