#!/bin/sh
# proxy-logrotate: the audit log rotates with the shipped systemd unit's
# log directory and contrib/logrotate/postern-proxy: the proxy starts as
# root with user = 65532, logrotate (the real one) renames the file and
# creates a new one with the old one's owner, SIGUSR1 reopens it, and the
# next request's line lands in the new file, not in the renamed one.
. "$top_srcdir/tests/integration/lib/world.sh"
command -v logrotate >/dev/null 2>&1 || skip "logrotate is not installed"
[ "$(id -u)" = 0 ] || skip "needs root (the proxy drops from root to user =)"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

UNIT="$top_srcdir/contrib/systemd/postern-proxy.service"
ROT="$top_srcdir/contrib/logrotate/postern-proxy"
[ -f "$ROT" ] || die "no $ROT"
mode=$(sed -n 's/^LogsDirectoryMode=//p' "$UNIT")
[ -n "$mode" ] || die "no LogsDirectoryMode= in $UNIT"

# The log directory as systemd makes it from the unit: root's, its mode.
chmod 0755 "$WORLD_DIR"
LOGS="$WORLD_DIR/log-postern"
mkdir -m "$mode" "$LOGS"
PROXY_LOG="$LOGS/audit.log"
cat >"$WORLD_DIR/postern.ini" <<EOF2
[proxy]
listen = tcp:127.0.0.1:3128
log = $PROXY_LOG
dns_servers = $WORLD_DNS
user = 65532
[defaults]
allow_hosts = allowed.test private
EOF2
proxy_start "$WORLD_DIR/postern.ini" || die "no proxy"

expect_eq 403 "$(curl_status -x http://127.0.0.1:3128 https://first.test/)" "a refusal before rotation"
expect_audit "its line is in the log" event=decision host=first.test

# The shipped logrotate file, pointed at this world's log and proxy.
sed -e "s|/var/log/postern/\\*\\.log|$LOGS/*.log|" \
	-e "s|systemctl kill --kill-whom=main --signal=USR1 postern-proxy.service|kill -USR1 $WORLD_PROXY_PID|" \
	"$ROT" >"$WORLD_DIR/logrotate.conf"
grep -q "kill -USR1 $WORLD_PROXY_PID" "$WORLD_DIR/logrotate.conf" || die "the logrotate file has no postrotate signal to rewrite"
grep -q "^$LOGS/\\*\\.log {" "$WORLD_DIR/logrotate.conf" || die "the logrotate file does not match /var/log/postern/*.log"
out=$(logrotate -f -s "$WORLD_DIR/logrotate.state" "$WORLD_DIR/logrotate.conf" 2>&1)
expect_eq 0 $? "logrotate rotates the log"
[ -z "$out" ] || diag "$out"
[ -f "$PROXY_LOG.1" ] || die "logrotate did not rename the log"

world__poll sh -c "grep -c 'audit log reopened' '$WORLD_DIR/proxy.out'" >/dev/null
expect_no_match "cannot reopen" "$(cat "$WORLD_DIR/proxy.out")" "SIGUSR1 reopens it as uid 65532"
expect_eq 403 "$(curl_status -x http://127.0.0.1:3128 https://second.test/)" "a refusal after rotation"
expect_audit "its line is in the new file" event=decision host=second.test
NEW_LOG=$PROXY_LOG
PROXY_LOG="$NEW_LOG.1"
expect_no_audit "not in the renamed one" host=second.test
expect_audit "which kept the line from before" host=first.test
PROXY_LOG=$NEW_LOG
