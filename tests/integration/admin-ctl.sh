#!/bin/sh
# admin-ctl: postern-proxy ctl status|reload|metrics, readable for a
# person, with the admin socket from --admin or from the config (-c), and
# a non-zero exit on every failure.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

conf="$WORLD_DIR/postern.ini"
write_conf() {
	{
		admin_proxy_section
		cat <<-EOF
			[defaults]
			allow_hosts = allowed.test private
			[session build]
			listen = tcp:127.0.0.1:3129
			allow_hosts = other.test private
			$1
		EOF
	} >"$conf"
}
write_conf ""

# Before the proxy runs: a clear error, exit 1.
out=$(ctl status --admin "$ADMIN_SOCK" 2>&1)
expect_eq 1 $? "ctl status with no proxy exits 1"
expect_match "^postern-proxy ctl: $ADMIN_SOCK: No such file or directory" "$out" "and says the socket is missing"

proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
expect_eq 200 "$(curl_status -x http://127.0.0.1:3128 https://allowed.test/)" "one allowed request"
expect_eq 403 "$(curl_status -x http://127.0.0.1:3129 https://deny.test/)" "one refused request in build"

# ---- status, for a person
out=$(ctl status --admin "$ADMIN_SOCK")
expect_eq 0 $? "ctl status --admin PATH exits 0"
diag "$out"
expect_no_match '[{}]' "$out" "ctl status is not JSON"
expect_match "^postern-proxy [0-9]" "$out" "status: version line"
expect_match "^config +$conf\$" "$out" "status: config path"
expect_match "^generation +1 \\(sha256 $(sha12 "$conf")\\)\$" "$out" "status: generation and hash"
expect_match "^last reload +never\$" "$out" "status: no reload yet"
expect_match "^session default\$" "$out" "status: session default"
expect_match "^session build\$" "$out" "status: session build"
expect_match "^  listen +tcp:127\\.0\\.0\\.1:3129\$" "$out" "status: build's listener"
expect_match "^  rules +2 \\(2 allow, 0 deny\\)\$" "$out" "status: build's rule count"
expect_match "^  connections +0 open, 1 total\$" "$out" "status: connection counts"
out2=$(ctl status -c "$conf")
expect_eq 0 $? "ctl status -c FILE finds the socket in the config"
# The version line and the memory figures may differ between two calls.
expect_eq "$(printf '%s\n' "$out" | grep -Ev '^(postern-proxy|memory) ')" \
	"$(printf '%s\n' "$out2" | grep -Ev '^(postern-proxy|memory) ')" \
	"and prints the same"
out2=$(ctl -c "$conf" status)
expect_eq 0 $? "options may come before the command"

# ---- metrics, as served
ctl metrics --admin "$ADMIN_SOCK" >"$WORLD_DIR/m.txt"
expect_eq 0 $? "ctl metrics exits 0"
out=$("$WORLD_PYTHON" "$ADMIN_LIB/prom.py" check "$WORLD_DIR/m.txt")
expect_eq 0 $? "ctl metrics prints valid Prometheus text ($out)"
admin_get /metrics >"$WORLD_DIR/m2.txt"
expect_eq "$(cat "$WORLD_DIR/m2.txt")" "$(cat "$WORLD_DIR/m.txt")" "exactly what /metrics serves"
expect_eq 1 "$("$WORLD_PYTHON" "$ADMIN_LIB/prom.py" get "$WORLD_DIR/m.txt" postern_decisions_total session=build reason=host_not_allowed)" \
	"metrics: the refusal in build is counted"

# ---- reload: taken
write_conf "allow_hosts = deny.test private"
out=$(ctl reload -c "$conf")
expect_eq 0 $? "ctl reload exits 0 when taken"
expect_match "^taken: generation [0-9]+ \\(sha256 $(sha12 "$conf")\\)\$" "$out" "ctl reload says taken, with the hash"
expect_eq 200 "$(curl_status -x http://127.0.0.1:3129 https://deny.test/)" "the new rule is in force"
out=$(ctl status -c "$conf")
expect_match "^last reload +20[0-9-]+T[0-9:]+Z, taken\$" "$out" "status: the last reload was taken"
expect_match "^  rules +3 \\(3 allow, 0 deny\\)\$" "$out" "status: build has the new rule"

# ---- reload: refused, errors printed, and the proxy's socket still found
# from the broken file.
write_conf "allow_hosts = foo.*.test"
gen=$(generation)
out=$(ctl reload -c "$conf")
expect_eq 1 $? "ctl reload exits 1 when refused"
expect_match "^refused: generation $gen \\(sha256 [0-9a-f]{12}\\) stays in force\$" "$out" "ctl reload says refused"
expect_match "^$conf:11: " "$out" "ctl reload prints the FILE:LINE error"
out=$(ctl status -c "$conf")
expect_match "REFUSED" "$out" "status: the last reload was refused"
expect_match "^ +$conf:11: " "$out" "status: with its error"

# ---- usage and transport errors
ctl frobnicate --admin "$ADMIN_SOCK" >/dev/null 2>&1
expect_eq 2 $? "an unknown command exits 2"
ctl >/dev/null 2>&1
expect_eq 2 $? "no command exits 2"
ctl status --admin "$ADMIN_SOCK" extra >/dev/null 2>&1
expect_eq 2 $? "an extra argument exits 2"
ctl status --admin "$WORLD_DIR/nope.sock" >/dev/null 2>&1
expect_eq 1 $? "a missing socket exits 1"
printf '[proxy]\nlisten = tcp:127.0.0.1:1\n' >"$WORLD_DIR/noadmin.ini"
out=$(ctl status -c "$WORLD_DIR/noadmin.ini" 2>&1)
expect_eq 1 $? "a config without admin exits 1"
expect_match "has no admin = unix:PATH" "$out" "and says so"
# Something that is not postern on the socket: no hang, a clear error.
in_px "$WORLD_PYTHON" -c '
import socket, sys, os
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1]); s.listen(1)
open(sys.argv[2], "w").close()
c, _ = s.accept(); c.recv(1000); c.sendall(b"SSH-2.0-OpenSSH_9.2\r\n"); c.close()
c, _ = s.accept(); c.recv(1000); c.sendall(b"HTTP/1.1 500 Oops\r\n\r\n\x1b[2Jboom"); c.close()
' "$WORLD_DIR/fake.sock" "$WORLD_DIR/fake.ready" &
fake=$!
i=0
while [ ! -e "$WORLD_DIR/fake.ready" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
out=$(ctl status --admin "$WORLD_DIR/fake.sock" 2>&1)
expect_eq 1 $? "a socket that does not speak HTTP exits 1"
expect_match "not an HTTP response" "$out" "and says so"
out=$(ctl status --admin "$WORLD_DIR/fake.sock" 2>&1)
expect_eq 1 $? "an HTTP error status exits 1"
expect_match "answered 500: \.\[2Jboom" "$out" "and shows the answer, escape bytes replaced"
wait "$fake"

proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
