#!/bin/sh
# reload-sessions: a reload that adds a session opens its listener, one
# that removes a session closes its listener while that session's open
# tunnel finishes undisturbed, a changed listener address is rebound, and
# a valid file whose new listener cannot be bound is refused (409) with
# the old listeners and rules left as they were.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

conf="$WORLD_DIR/postern.ini"
# write_conf SESSION-LINES...: [proxy] and [defaults], then the lines.
write_conf() {
	{
		admin_proxy_section
		echo "[defaults]"
		echo "allow_hosts = allowed.test private"
		for l in "$@"; do echo "$l"; done
	} >"$conf"
}
# listening PORT: "yes" when something listens on 127.0.0.1:PORT in px.
listening() {
	if in_px "$WORLD_PYTHON" "$WORLD_LIB/world.py" wait --timeout 0.2 --tcp "127.0.0.1:$1" \
		>/dev/null 2>&1; then echo yes; else echo no; fi
}
listeners() { status_get '[l for x in s["sessions"] for l in x["listeners"]]'; }
reload() { admin_curl -X POST -o /dev/null -w '%{http_code}' http://postern/reload; }

write_conf "[session a]" "listen = tcp:127.0.0.1:3130" "allow_hosts = other.test:7 private"
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
expect_eq '["tcp:127.0.0.1:3128", "tcp:127.0.0.1:3130"]' "$(listeners)" "two listeners at the start"

# A tunnel in session a stays open across its session's removal.
in_px "$WORLD_PYTHON" "$ADMIN_LIB/load.py" hold --proxy 127.0.0.1:3130 --target other.test:7 \
	--ready "$WORLD_DIR/hold.ready" --stop "$WORLD_DIR/hold.stop" >"$WORLD_DIR/hold.out" 2>&1 &
hold=$!
i=0
while [ ! -e "$WORLD_DIR/hold.ready" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
[ -e "$WORLD_DIR/hold.ready" ] || die "the held tunnel did not open"

# ---- add session b, remove session a
write_conf "[session b]" "listen = tcp:127.0.0.1:3131" "allow_hosts = other.test private"
expect_eq 200 "$(reload)" "reload: a out, b in"
expect_eq '["tcp:127.0.0.1:3128", "tcp:127.0.0.1:3131"]' "$(listeners)" "b's listener is open, a's is gone"
expect_eq yes "$(listening 3131)" "something listens on b's port"
expect_eq no "$(listening 3130)" "nothing listens on a's port any more"
expect_eq 200 "$(curl_status -x http://127.0.0.1:3131 https://other.test/)" "session b serves its rules"
expect_eq 000 "$(curl_status -x http://127.0.0.1:3130 https://other.test/)" "session a takes no connection"
touch "$WORLD_DIR/hold.stop"
wait "$hold"
expect_eq 0 $? "the tunnel of the removed session a finished undisturbed"
expect_audit "its close is logged in session a" event=close session=a port=7

# ---- a changed listener address is rebound
write_conf "[session b]" "listen = tcp:127.0.0.1:3132" "allow_hosts = other.test private"
expect_eq 200 "$(reload)" "reload: b moves to 3132"
expect_eq yes "$(listening 3132)" "b listens on its new port"
expect_eq no "$(listening 3131)" "and not on the old one"
expect_eq 200 "$(curl_status -x http://127.0.0.1:3132 https://other.test/)" "b serves on the new port"

# ---- a new listener that cannot be bound: 409, nothing changes
gen=$(generation)
in_px "$WORLD_PYTHON" -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 3133)); s.listen(1)
open(sys.argv[1], "w").close()
time.sleep(30)' "$WORLD_DIR/squat.ready" &
squat=$!
i=0
while [ ! -e "$WORLD_DIR/squat.ready" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
write_conf "[session b]" "listen = tcp:127.0.0.1:3132" "allow_hosts = other.test private" \
	"[session c]" "listen = tcp:127.0.0.1:3133" "allow_hosts = deny.test private"
out=$(admin_curl -X POST -w '\n%{http_code}' http://postern/reload)
expect_eq 409 "$(printf '%s\n' "$out" | tail -n 1)" "reload onto a taken port: 409"
expect_match "$conf:12: cannot listen on tcp:127\\.0\\.0\\.1:3133" "$(printf '%s\n' "$out" | sed '$d')" \
	"and the error names the listen line"
expect_eq "$gen" "$(generation)" "the generation stays"
expect_eq '["tcp:127.0.0.1:3128", "tcp:127.0.0.1:3132"]' "$(listeners)" "the listeners stay"
expect_eq 200 "$(curl_status -x http://127.0.0.1:3132 https://other.test/)" "b still serves"
kill "$squat" 2>/dev/null
wait "$squat" 2>/dev/null

proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
