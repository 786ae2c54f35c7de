#!/bin/sh
# admin-routes: every route of the admin socket answers a method it does
# not take with 405, the route's Allow: and a JSON error, and takes HEAD
# where it takes GET; a path off the table is 404 whatever the method;
# a route's wrong arguments get that route's own status.  Nothing a
# refused request asks for is done (the generation stays).
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

conf="$WORLD_DIR/postern.ini"
{ admin_proxy_section; cat <<EOF2; } >"$conf"
[defaults]
allow_hosts = allowed.test
EOF2
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"

# answer METHOD PATH: "CODE|ALLOW|BODY" of METHOD PATH (HEAD with -I).
answer() {
	local m p
	m=$1
	p=$2
	if [ "$m" = HEAD ]; then
		admin_curl -I -o "$WORLD_DIR/ans.body" -D "$WORLD_DIR/ans.head" -w '%{http_code}' \
			"http://postern$p" >"$WORLD_DIR/ans.code"
		: >"$WORLD_DIR/ans.body"
	else
		admin_curl -X "$m" -o "$WORLD_DIR/ans.body" -D "$WORLD_DIR/ans.head" -w '%{http_code}' \
			"http://postern$p" >"$WORLD_DIR/ans.code"
	fi
	printf '%s|%s|%s' "$(cat "$WORLD_DIR/ans.code")" \
		"$(sed -n 's/^Allow: \(.*\)\r$/\1/p' "$WORLD_DIR/ans.head")" \
		"$(tr -d '\n' <"$WORLD_DIR/ans.body")"
}

notallowed='{"error":"Method Not Allowed"}'
for p in /status /metrics /learn /pending /grants; do
	for m in POST PUT DELETE OPTIONS PATCH; do
		expect_eq "405|GET, HEAD|$notallowed" "$(answer $m $p)" "$m $p: 405, Allow: GET, HEAD"
	done
done
for p in /reload /decide /grants/save; do
	for m in GET PUT DELETE OPTIONS PATCH; do
		expect_eq "405|POST|$notallowed" "$(answer $m $p)" "$m $p: 405, Allow: POST"
	done
	expect_eq "405|POST|" "$(answer HEAD $p)" "HEAD $p: 405, Allow: POST"
done
for p in /status /metrics /pending /grants; do
	expect_eq "200||" "$(answer HEAD $p)" "HEAD $p: 200"
done
expect_eq "400||" "$(answer HEAD /learn)" "HEAD /learn without a session: 400"
expect_eq '400||{"error":"GET /learn needs ?session=NAME"}' "$(answer GET '/learn?x=1')" \
	"GET /learn without a session: 400"
expect_eq '422||{"error":"id is the question'"'"'s number (GET /pending)"}' \
	"$(answer POST /decide)" "POST /decide without a body: 422"

notfound='{"error":"Not Found"}'
for p in / /nope /status/ /STATUS /status/x /grants/ /grants/save/x /reloads /decide/1 //status; do
	for m in GET POST PUT DELETE; do
		expect_eq "404||$notfound" "$(answer $m $p)" "$m $p: 404"
	done
	expect_eq "404||" "$(answer HEAD $p)" "HEAD $p: 404"
done
expect_eq 1 "$(generation)" "no refused request reloaded"

# The runtime sessions' routes: GET /sessions, PUT and DELETE
# /sessions/NAME (a name, never a deeper path), and the body limit, raised
# for PUT /sessions/NAME only.
for m in POST PUT DELETE OPTIONS PATCH; do
	expect_eq "405|GET, HEAD|$notallowed" "$(answer $m /sessions)" "$m /sessions: 405, Allow: GET, HEAD"
done
expect_eq "200||" "$(answer HEAD /sessions)" "HEAD /sessions: 200"
for m in GET POST OPTIONS PATCH; do
	expect_eq "405|PUT, DELETE|$notallowed" "$(answer $m /sessions/x)" \
		"$m /sessions/x: 405, Allow: PUT, DELETE"
done
expect_eq "405|PUT, DELETE|" "$(answer HEAD /sessions/x)" "HEAD /sessions/x: 405"
for m in GET PUT DELETE; do
	expect_eq "404||$notfound" "$(answer $m /sessions/)" "$m /sessions/: 404"
done
badname='{"error":"a session'"'"'s name is letters, digits, '"'"'-'"'"', '"'"'_'"'"', '"'"'.'"'"', at most 64, not \"default\""}'
for p in /sessions/a/b /sessions/a%2Fb /sessions/.hidden /sessions/default; do
	expect_eq "400||$badname" "$(answer DELETE $p)" "DELETE $p: 400, not a session's name"
done
expect_eq '400||{"error":"PUT /sessions/NAME takes the lines of its [session NAME] section as its body"}' \
	"$(answer PUT /sessions/x)" "PUT /sessions/x without a body: 400"
expect_eq 1 "$(generation)" "no refused session request reloaded"

# body_code PATH BYTES: the status of PUT PATH with a body of BYTES bytes
# of allow_hosts lines (POST for /decide).
body_code() {
	"$WORLD_PYTHON" -c '
import sys
n = int(sys.argv[1])
sys.stdout.write("listen = tcp:127.0.0.1:3199\n")
left = n - len("listen = tcp:127.0.0.1:3199\n")
i = 0
while left > 0:
    line = "allow_hosts = host%05d.test\n" % i
    if len(line) > left:
        line = ";" * (left - 1) + "\n"
    sys.stdout.write(line)
    left -= len(line)
    i += 1' "$2" >"$WORLD_DIR/big.body"
	# A reload of 2000 rules takes seconds in a sanitizer build.
	admin_curl --max-time 60 -X "$3" --data-binary @"$WORLD_DIR/big.body" -o /dev/null \
		-w '%{http_code}' "http://postern$1"
}
# over_code PATH LENGTH METHOD: the status of a request that announces a
# LENGTH-byte body over the socket's 64 KiB and waits for the answer
# before sending it (as curl does with Expect: 100-continue, but without
# its 1 s guess): the head alone is refused, with no body in flight to
# race the close.
over_code() {
	"$WORLD_PYTHON" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
s.sendall(("%s %s HTTP/1.1\r\nHost: postern\r\nContent-Length: %s\r\n"
           "Expect: 100-continue\r\n\r\n" % (sys.argv[4], sys.argv[2], sys.argv[3])).encode())
print(s.recv(4096).split()[1].decode())' "$ADMIN_SOCK" "$1" "$2" "$3"
}
expect_eq 413 "$(body_code /decide 5000 POST)" "POST /decide with 5000 bytes: 413, the small limit"
expect_eq 413 "$(over_code /sessions/big 70000 PUT)" "PUT /sessions/NAME announcing over 64 KiB: 413"
expect_eq 1 "$(generation)" "neither reloaded"
expect_eq 200 "$(body_code /sessions/big 60000 PUT)" "PUT /sessions/NAME with 60000 bytes of rules: 200"
expect_eq 2 "$(generation)" "and it was taken"
expect_eq 200 "$(admin_curl -X DELETE -o /dev/null -w '%{http_code}' http://postern/sessions/big)" \
	"DELETE /sessions/big: 200"
