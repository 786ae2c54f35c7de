#!/bin/sh
# audit-ocsf: with audit_format = ocsf the proxy writes each event as an
# OCSF 1.1.0 record: tunnels as Network Activity (4001), plain HTTP
# requests as HTTP Activity (4002), allowed and refused; every record
# passes the schema of the fields postern emits (lib-proxy/ocsf-schema.json,
# checked field by field), and the hash chain and its checkpoints verify
# as in the JSON format.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

conf=$(proxy_conf "audit_format = ocsf" "audit_signing_key = $WORLD_DIR/audit.key" \
	"[defaults]" "allow_hosts = allowed.test private" "allow_hosts = allowed.test:8080 private")
proxy_start "$conf" || die "no proxy"

expect_eq 403 "$(curl_status -x http://127.0.0.1:3128 https://refused.test/)" "a tunnel refused"
out=$(curl_px -x http://127.0.0.1:3128 https://allowed.test/t)
expect_match "^sni=allowed\.test$" "$out" "a tunnel allowed"
expect_eq 200 "$(curl_status -x http://127.0.0.1:3128 http://allowed.test:8080/get)" "a plain request allowed"
expect_eq 403 "$(curl_status -x http://127.0.0.1:3128 http://refused.test/x)" "a plain request refused"
proxy_stop >/dev/null

diag "$(head -n 3 "$PROXY_LOG")"
out=$("$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/ocsfcheck.py" \
	"$top_srcdir/tests/integration/lib-proxy/ocsf-schema.json" "$PROXY_LOG")
expect_eq 0 $? "every record passes the OCSF schema"
diag "$out"
for k in 4001/5/deny 4001/1/allow 4001/2/close 4002/3/allow 4002/3/deny 4002/3/close; do
	expect_match "(^| )$k=[0-9]+" "$out" "a record of class/activity/decision $k"
done
expect_match '"class_uid":4001,.*"unmapped":\{"event":"decision",.*"reason":"host_not_allowed"' \
	"$(cat "$PROXY_LOG")" "postern's own fields are in unmapped"
expect_match '"rule":"allowed\.test:8080 private","rule_at":"[^"]*postern\.ini:[0-9]+"' \
	"$(cat "$PROXY_LOG")" "... the rule with its FILE:LINE"
out=$("$top_builddir/postern-proxy" audit verify -c "$conf" "$PROXY_LOG" 2>&1)
expect_eq 0 $? "the chain and its checkpoint verify in the OCSF format"
diag "$out"
