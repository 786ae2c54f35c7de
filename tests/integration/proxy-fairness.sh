#!/bin/sh
# proxy-fairness: no session can take every connection.  Session "default"
# holds its whole share of idle tunnels (by default a quarter of [proxy]
# max_connections); its next connections are answered at once with 503
# session_connection_limit (audited, counted in /metrics) while session b
# keeps working.  A reload that lowers the share keeps the open tunnels and
# refuses only new ones.  On a shared UNIX socket, one peer uid cannot take
# the share of another (503 uid_connection_limit).
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

H="$top_srcdir/tests/integration/lib-proxy/hold.py"
conf="$WORLD_DIR/conf.d/postern.ini"
mkdir -p "$WORLD_DIR/conf.d"

# write_conf [DEFAULTS LINE] [EXTRA SECTION LINES...]: the config.  Global
# max_connections = 8: without shares, 8 idle tunnels of one session leave
# nobody else an answer.
write_conf() {
	local d
	d=$1
	shift
	{
		admin_proxy_section "max_connections = 8"
		echo "[defaults]"
		echo "allow_hosts = allowed.test:7 private, allowed.test private"
		[ -n "$d" ] && echo "$d"
		echo "[session b]"
		echo "listen = tcp:127.0.0.1:3129"
		for l in "$@"; do echo "$l"; done
	} >"$WORLD_DIR/next.ini"
	write_by_rename "$WORLD_DIR/next.ini" "$conf"
}

# count FILE LINE: how many of hold.py's answers are exactly LINE.
count() {
	grep -cx "$1" "$2"
}

# connect_once PORT: the status and reason of one CONNECT to the echo port
# (an open tunnel ends after 1 s of silence).
connect_once() {
	local out
	out=$(printf 'CONNECT allowed.test:7 HTTP/1.1\r\nHost: allowed.test:7\r\n\r\n' | raw 127.0.0.1 "$1" --timeout 1)
	echo "$(status_of "$out") $(reason_of "$out")"
}

write_conf ""
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"

# Session default asks for 8 tunnels, every connection the proxy has: its
# share is 2 (8 / 4); the other 6 are answered at once.
in_px "$WORLD_PYTHON" "$H" 127.0.0.1:3128 allowed.test:7 8 "$WORLD_DIR/a.out" "$WORLD_DIR/go-a" --timeout 30 &
ha=$!
wait_ready "$WORLD_DIR/a.out"
expect_eq 2 "$(count 200 "$WORLD_DIR/a.out")" "session default opens its share of 2 tunnels"
expect_eq 6 "$(count "503 session_connection_limit" "$WORLD_DIR/a.out")" \
	"the other 6 get 503 session_connection_limit at once"
expect_eq "503 session_connection_limit" "$(connect_once 3128)" \
	"the next connection of session default is refused with the reason"
out=$(curl_px --max-time 5 -x http://127.0.0.1:3129 https://allowed.test/b)
expect_match "^sni=allowed\.test$" "$out" "session b still gets its tunnel and data through"
expect_eq "200 " "$(connect_once 3129)" "and a CONNECT of session b is answered 200"
expect_audit "the refusal is audited" session=default decision=deny reason=session_connection_limit \
	detail~"holds 2 connections"
expect_eq 7 "$(metrics_get postern_decisions_total session=default reason=session_connection_limit)" \
	"/metrics counts the 7 refusals by reason"

# A reload lowers the share below what session default holds: its two
# tunnels stay, new ones are refused until they close.
g=$(generation)
write_conf "max_connections = 1"
wait_generation $((g + 1)) 3 >/dev/null || fail "the reload to max_connections = 1 was not taken"
expect_eq "503 session_connection_limit" "$(connect_once 3128)" \
	"after the reload, a new connection over the lower share is refused"
touch "$WORLD_DIR/go-a"
wait "$ha"
expect_eq 0 $? "the reload dropped none of the tunnels it found"
expect_eq "echoed 2 of 2" "$(tail -1 "$WORLD_DIR/a.out")" "both still carry bytes"
i=0
while [ "$(connect_once 3128)" != "200 " ] && [ $i -lt 30 ]; do sleep 0.1; i=$((i + 1)); done
expect_eq "200 " "$(connect_once 3128)" "once they closed, session default is served again"

# A UNIX socket shared by two uids: each may hold 2 of the session's 4.
write_conf "" "[session u]" "listen = unix:$WORLD_DIR/u.sock mode=0666" \
	"max_connections = 4" "max_connections_per_uid = 2"
wait_generation $((g + 2)) 3 >/dev/null || fail "the reload adding session u was not taken"
for u in 65534 65533; do
	touch "$WORLD_DIR/u$u.out"
	chown "$u:$u" "$WORLD_DIR/u$u.out"
done
in_px "$WORLD_PYTHON" "$H" "unix:$WORLD_DIR/u.sock" allowed.test:7 4 "$WORLD_DIR/u65534.out" "$WORLD_DIR/go-u" \
	--timeout 30 --uid 65534 &
h1=$!
wait_ready "$WORLD_DIR/u65534.out"
expect_eq 2 "$(count 200 "$WORLD_DIR/u65534.out")" "uid 65534 opens its 2 tunnels"
expect_eq 2 "$(count "503 uid_connection_limit" "$WORLD_DIR/u65534.out")" \
	"and its other 2 connections get 503 uid_connection_limit"
in_px "$WORLD_PYTHON" "$H" "unix:$WORLD_DIR/u.sock" allowed.test:7 2 "$WORLD_DIR/u65533.out" "$WORLD_DIR/go-u" \
	--timeout 30 --uid 65533 &
h2=$!
wait_ready "$WORLD_DIR/u65533.out"
expect_eq 2 "$(count 200 "$WORLD_DIR/u65533.out")" "uid 65533 on the same socket still opens its 2"
touch "$WORLD_DIR/go-now"
in_px "$WORLD_PYTHON" "$H" "unix:$WORLD_DIR/u.sock" allowed.test:7 1 "$WORLD_DIR/u0.out" "$WORLD_DIR/go-now" \
	--timeout 30
expect_eq 1 "$(count "503 session_connection_limit" "$WORLD_DIR/u0.out")" \
	"a third uid finds the session's 4 taken: 503 session_connection_limit"
expect_audit "the uid refusal is audited with the uid" session=u uid=65534 decision=deny \
	reason=uid_connection_limit
touch "$WORLD_DIR/go-u"
wait "$h1"
expect_eq 0 $? "uid 65534's tunnels work"
wait "$h2"
expect_eq 0 $? "uid 65533's tunnels work"

workers_spread
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
