#!/bin/sh
# proxy-auditfull: the audit log's disk is full (log = /dev/full): the proxy
# keeps serving, says so once in the operational log, and counts the lost
# lines.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

conf=$(proxy_conf "[defaults]" "allow_hosts = allowed.test private")
sed -i 's|^log = .*|log = /dev/full|' "$conf"
sed -i "s|^\[defaults\]|admin = unix:$WORLD_DIR/admin.sock\n[defaults]|" "$conf"
proxy_start "$conf" || die "no proxy"
i=0
good=0
while [ $i -lt 10 ]; do
	out=$(curl_px -x http://127.0.0.1:3128 "https://allowed.test/full$i")
	printf '%s\n' "$out" | grep -q "^sni=allowed.test" && good=$((good + 1))
	i=$((i + 1))
done
expect_eq 10 "$good" "every request is served while no audit line can be written"
expect_eq 1 "$(grep -c 'audit log /dev/full: a line could not be written' "$WORLD_DIR/proxy.out")" \
	"the operational log says so exactly once"
lost=$(in_px "$top_builddir/postern-proxy" ctl metrics --admin "$WORLD_DIR/admin.sock" | sed -n 's/^postern_audit_lines_lost_total //p')
[ "${lost:-0}" -ge 20 ] && ok "postern_audit_lines_lost_total counts the lost lines ($lost)" ||
	fail "lost lines not counted: '$lost'"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
