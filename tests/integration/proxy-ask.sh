#!/bin/sh
# proxy-ask: mode = ask.  A request the allowlist refuses in a
# session in ask mode is held while the admin socket publishes a question
# (GET /pending); requests for the same host, port, method and path wait
# on one question and are released by one answer (POST /decide): allow
# once, deny once, allow or deny for the session (a runtime grant for the
# host and port, which releases all its questions, GET /grants), or
# ask_timeout.  Allow once never releases a request the admin was not
# shown.  An allowed request is still vetted: a never-reachable
# address stays refused.  Another session is served meanwhile, grants
# survive a reload and are gone after a restart.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

conf="$WORLD_DIR/postern.ini"
# write_conf ASK_TIMEOUT [LINE]: the default session asks; session e
# enforces; LINE goes in [proxy] (grants_file).
# allowed.test:8443 and other.test/api/ are listed (with private, since
# the world's addresses are in 10/8): another port or path of them is
# asked.  priv.test is listed nowhere.
write_conf() {
	{ admin_proxy_section "ask_timeout = $1" ${2:+"$2"}; cat <<EOF; } >"$conf"
[defaults]
allow_hosts = allowed.test:8443 private
allow_hosts = http://other.test/api/ private
deny_hosts = deny.test
mode = ask
[session e]
listen = tcp:127.0.0.1:3129
mode = enforce
allow_hosts = allowed.test private
EOF
}
write_conf 20s

check=$("$POSTERN_PROXY" --check -c "$conf" 2>&1)
expect_match "postern.ini:[0-9]*: session default is in mode = ask: what its allowlist refuses is HELD" \
	"$check" "--check says loudly that the default session asks"

out=$("$POSTERN_PROXY" --explain https://priv.test/ -c "$conf" 2>&1)
expect_match "^ask host_not_allowed \(mode = ask: held until an admin answers" "$out" "--explain says an unlisted host is asked"
out=$("$POSTERN_PROXY" --explain https://deny.test/ -c "$conf" 2>&1)
expect_match "^deny denied_by_rule" "$out" "and a denied one is refused"

proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
expect_eq ask "$(status_get '[x["mode"] for x in s["sessions"] if x["name"] == "default"][0]')" \
	"/status: the default session's mode is ask"

A="-x http://127.0.0.1:3128"
n=0
# held OUT ARGS...: curl_status ARGS in the background, its status in
# $WORLD_DIR/OUT once it ends.
held() {
	local out
	out=$1
	shift
	rm -f "$WORLD_DIR/$out"
	( curl_status "$@" >"$WORLD_DIR/$out.tmp"; mv "$WORLD_DIR/$out.tmp" "$WORLD_DIR/$out" ) &
}
# result OUT: wait (10 s at most) for held's status and print it.
result() {
	local i
	i=0
	while [ ! -e "$WORLD_DIR/$1" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	cat "$WORLD_DIR/$1" 2>/dev/null || echo none
}
# pending EXPR: EXPR with q bound to GET /pending's list.
pending() {
	admin_get /pending | "$WORLD_PYTHON" -c '
import json, sys
q = json.load(sys.stdin)["pending"]
v = eval(sys.argv[1])
print(json.dumps(v) if isinstance(v, (dict, list, bool)) or v is None else v)' "$1"
}
# wait_question HOST PORT WAITING: the id of the question for HOST:PORT once
# WAITING requests wait on it (5 s at most); empty if none.
wait_question() {
	local i id
	i=0
	while [ $i -lt 100 ]; do
		id=$(pending "[x['id'] for x in q if x['host'] == '$1' and x['port'] == $2 and x['waiting'] == $3]" |
			tr -d '[] ')
		[ -n "$id" ] && { echo "$id"; return 0; }
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}
# decide BODY: POST /decide with BODY; prints the status, the answer in
# $WORLD_DIR/decide.json.
decide() {
	admin_curl -o "$WORLD_DIR/decide.json" -w '%{http_code}' -X POST --data "$1" http://postern/decide
}
# pctl ARGS...: postern-proxy ctl on this proxy's admin socket.
pctl() { ctl --admin "$ADMIN_SOCK" "$@"; }
answer() {
	"$WORLD_PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' \
		"$WORLD_DIR/decide.json" "$1"
}

# ---- the bridge's name check never waits: answered as report mode would.
t0=$(date +%s%N)
out=$(in_px curl -sS --max-time 3 -w ' %{http_code}' "http://127.0.0.1:3128/.well-known/postern/name?host=priv.test")
expect_match "200$" "$out" "the name check of an unlisted name is answered 200"
expect_match "ports 22 80 443" "$out" "with the usual ports (the CONNECT that follows is asked)"
expect_eq 1 "$(( ($(date +%s%N) - t0) / 1000000 < 1000 ))" "at once"
out=$(in_px curl -sS --max-time 3 -w ' %{http_code}' "http://127.0.0.1:3128/.well-known/postern/name?host=deny.test")
expect_match "403$" "$out" "a denied name is still refused"
expect_eq 0 "$(pending 'len(q)')" "and no question was asked"

# ---- two CONNECTs for one host wait on one question; allow once.
held a1 $A https://allowed.test/
held a2 $A https://allowed.test/
id=$(wait_question allowed.test 443 2)
expect_ne "" "$id" "two CONNECTs to allowed.test:443 wait on one question"
expect_eq 1 "$(pending 'len(q)')" "and only one question is pending"
expect_eq "CONNECT" "$(pending 'q[0]["method"]')" "the question says CONNECT"
expect_eq "default" "$(pending 'q[0]["session"]')" "and the session"
expect_match "^127\.0\.0\.1" "$(pending 'q[0]["peer"]')" "and the peer"
expect_eq 1 "$(pending '1 if 0 < q[0]["expires_in_ms"] <= 20000 else 0')" "and when it expires"
out=$(pctl pending)
expect_match "^$id +default +allowed\.test:443 +CONNECT +2 " "$out" "ctl pending: one id, waiting 2"
expect_eq 1 "$(printf '%s\n' "$out" | grep -c '^[0-9]')" "and no other question"
expect_match '"waiting":2' "$(pctl pending --json)" "ctl pending --json: the raw answer"
expect_eq 1 "$(status_get '[x["pending"] for x in s["sessions"] if x["name"] == "default"][0]')" \
	"/status: the default session has one question pending"
expect_eq 1 "$(metrics_get postern_asks_pending)" "/metrics: postern_asks_pending 1"
# Meanwhile the proxy serves the other session.
expect_eq 200 "$(curl_status -x http://127.0.0.1:3129 https://allowed.test/)" \
	"session e is served while a request is held"
expect_eq none "$(cat "$WORLD_DIR/a1" 2>/dev/null || echo none)" "the held CONNECT still waits"
out=$(pctl allow "$id" --once)
expect_eq 0 $? "ctl allow ID --once"
expect_match "^question $id: allow once \(2 requests released\)" "$out" "releases both waiters"
expect_eq 200 "$(result a1)" "the first held CONNECT reaches allowed.test"
expect_eq 200 "$(result a2)" "and the second"
expect_audit "the decision line says it was asked, and the answer" event=decision session=default \
	host=allowed.test port=443 decision=allow asked="$id" answer=allow_once
expect_eq 404 "$(decide "id=$id&answer=deny&scope=once")" "a second answer to the question is 404"
out=$(pctl deny "$id" 2>&1)
expect_eq 1 $? "ctl deny of an answered question exits 1"
expect_match "question $id is not pending" "$out" "and says why"
pctl allow "$id" --once --for 1m 2>/dev/null
expect_eq 2 $? "ctl allow --once --for is a usage error"
expect_eq 422 "$(decide "id=$id&answer=maybe")" "a malformed answer is 422"
expect_eq 422 "$(decide "id=$id&answer=deny&scope=once&for=10m")" "for with deny is 422"

# ---- a SOCKS5 CONNECT is asked the same way.
held k1 --socks5-hostname 127.0.0.1:3128 https://allowed.test/
id=$(wait_question allowed.test 443 1)
expect_ne "" "$id" "a SOCKS5 CONNECT to allowed.test:443 is held"
expect_eq "SOCKS5 CONNECT" "$(pending 'q[0]["method"]')" "the question says SOCKS5 CONNECT"
pctl allow "$id" --once >/dev/null
expect_eq 200 "$(result k1)" "allowed once, it reaches allowed.test"

# ---- allow once granted nothing: asked again, denied once.
held d1 $A https://allowed.test/
id=$(wait_question allowed.test 443 1)
expect_ne "" "$id" "allow once left no grant: the next CONNECT is asked again"
pctl deny "$id" --once >/dev/null
expect_eq 0 $? "ctl deny ID --once"
expect_eq 403 "$(result d1)" "the held CONNECT is refused 403"
expect_audit "reason denied_by_admin" event=decision host=allowed.test port=443 decision=deny \
	reason=denied_by_admin asked="$id" answer=deny_once

# ---- allow once releases only what the admin was shown.  A GET asks; a
# POST with a body for the same host and port comes on another
# connection; the GET goes; allow once to the question shown.
# waiting_for HOST N: wait (5 s at most) until N requests for HOST wait,
# on any questions; prints how many do.
waiting_for() {
	local i w
	i=0
	while :; do
		w=$(pending "sum(x['waiting'] for x in q if x['host'] == '$1')")
		[ "$w" = "$2" ] || [ $i -ge 100 ] && break
		sleep 0.05
		i=$((i + 1))
	done
	echo "$w"
}
in_px curl -sS --max-time 3 -o /dev/null $A http://other.test/simple/requests/ 2>/dev/null &
gpid=$!
id=$(wait_question other.test 80 1)
expect_ne "" "$id" "a plain-HTTP GET to other.test is held"
expect_eq "GET /simple/requests/" "$(pending "[x['method'] + ' ' + x['path'] for x in q if x['id'] == $id][0]")" \
	"the admin is shown GET /simple/requests/"
held x1 $A -X POST --data-binary 'stolen=1' http://other.test/upload/exfil
expect_eq 2 "$(waiting_for other.test 2)" "a POST to the same host and port is held too"
expect_eq 1 "$(pending "len([x for x in q if x['host'] == 'other.test' and x['method'] == 'POST' and x['path'] == '/upload/exfil'])")" \
	"on a question of its own, showing POST /upload/exfil"
wait "$gpid"
expect_eq 1 "$(waiting_for other.test 1)" "the GET gives up and goes"
code=$(decide "id=$id&answer=allow&scope=once")
expect_eq 404 "$code" "allow once to the GET's question: it went with the GET"
sleep 1
expect_eq 0 "$(upstream_count target=/upload/exfil)" "the POST never reaches the upstream"
expect_eq none "$(cat "$WORLD_DIR/x1" 2>/dev/null || echo none)" "it still waits"
xid=$(pending "[x['id'] for x in q if x['host'] == 'other.test'][0]")
expect_eq "POST /upload/exfil 1" "$(pending "[' '.join(str(x[k]) for k in ('method', 'path', 'waiting')) for x in q if x['id'] == $xid][0]")" \
	"the question left shows what still waits: POST /upload/exfil"
expect_match "^127\.0\.0\.1" "$(pending "[x['peer'] for x in q if x['id'] == $xid][0]")" "and its peer"
expect_match "^$xid +default +other\.test:80 +POST +1 .*  path /upload/exfil  \(peer " "$(pctl pending)" \
	"ctl pending shows it too"
pctl deny "$xid" --once >/dev/null
expect_eq 403 "$(result x1)" "denied once, the POST is refused"
expect_eq 0 "$(upstream_count target=/upload/exfil)" "and never reached the upstream"

# ---- a query, or bytes past what a question shows, make another question.
held y1 $A "http://other.test/q?a=1"
held y2 $A "http://other.test/q?a=2"
expect_eq 2 "$(waiting_for other.test 2)" "two GETs that differ in their query are held"
expect_eq '["/q?a=1", "/q?a=2"]' "$(pending "sorted(x['path'] for x in q if x['host'] == 'other.test')")" \
	"each on its own question, query shown"
yid=$(pending "[x['id'] for x in q if x['path'] == '/q?a=1'][0]")
pctl allow "$yid" --once >/dev/null
expect_eq 200 "$(result y1)" "allow once releases the one shown"
expect_eq none "$(cat "$WORLD_DIR/y2" 2>/dev/null || echo none)" "and not the other"
expect_eq 0 "$(upstream_count target=/q?a=2)" "which never reached the upstream"
pctl deny "$(pending "[x['id'] for x in q if x['path'] == '/q?a=2'][0]")" --once >/dev/null
expect_eq 403 "$(result y2)" "denied once"
long=$(head -c 1500 /dev/zero | tr '\0' a)
held l1 $A "http://other.test/$long/one"
held l2 $A "http://other.test/$long/two"
expect_eq 2 "$(waiting_for other.test 2)" "two long paths, alike in their first 1024 bytes, are held"
expect_eq "2 1024 481" "$(pending "' '.join(str(v) for v in (len(q), len(q[0]['path']), q[0]['path_cut']))")" \
	"on two questions, each showing 1024 bytes and how many are cut"
expect_match "\(cut: 481 more bytes not shown\)" "$(pctl pending)" "ctl pending says a path is cut"
lid=$(pending 'q[0]["id"]')
pctl allow "$lid" --once >/dev/null
expect_eq 1 "$(waiting_for other.test 1)" "allow once releases one of them"
expect_eq 1 "$(upstream_count target~'/(one|two)$')" "and one reaches the upstream"
pctl deny "$(pending 'q[0]["id"]')" --once >/dev/null
expect_eq "200 403" "$(printf '%s\n' "$(result l1)" "$(result l2)" | sort | tr '\n' ' ' | sed 's/ $//')" \
	"the other is denied"

# ---- plain HTTP: the path is in the question; allow for the session
# releases every question of the host and port.
held h1 $A http://other.test/elsewhere
id=$(wait_question other.test 80 1)
expect_ne "" "$id" "a plain-HTTP GET to another path is held"
expect_eq /elsewhere "$(pending 'q[0]["path"]')" "/pending shows its path"
expect_eq GET "$(pending 'q[0]["method"]')" "and its method"
expect_eq 0 "$(pending 'q[0]["path_cut"]')" "and that none of it is cut"
held h2 $A -X POST --data-binary x=1 http://other.test/elsewhere-too
expect_eq 2 "$(waiting_for other.test 2)" "a POST to another path of the host waits too"
out=$(pctl allow "$id")
expect_eq 0 $? "ctl allow ID (for the session)"
expect_match "^question $id: allow for the session \(2 requests released\), until the proxy restarts" \
	"$out" "ctl says the grant releases both and lasts until a restart"
expect_eq 200 "$(result h1)" "the held GET is answered by upstream"
expect_upstream "upstream saw the held request" target=/elsewhere
expect_eq 200 "$(result h2)" "and the POST of the other question, the host being allowed"
expect_audit "the grant is audited: who and when" event=grant session=default host=other.test \
	port=80 grant=allow uid=0 asked="$id"
t0=$(date +%s%N)
expect_eq 200 "$(curl_status $A http://other.test/again)" "the next request to other.test goes through"
expect_eq 1 "$(( ($(date +%s%N) - t0) / 1000000 < 3000 ))" "without waiting"
expect_audit "its decision line says a grant allowed it" event=decision host=other.test path=/again \
	decision=allow grant=session
expect_eq 0 "$(pending 'len(q)')" "and no question was asked"

# ---- deny for the session: the next request is refused at once.
held s1 $A https://allowed.test/
id=$(wait_question allowed.test 443 1)
pctl deny "$id" >/dev/null
expect_eq 0 $? "ctl deny ID (for the session)"
expect_eq 403 "$(result s1)" "the held CONNECT is refused"
t0=$(date +%s%N)
out=$(printf 'CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n' | raw 127.0.0.1 3128 --timeout 3)
expect_eq 403 "$(status_of "$out")" "the next CONNECT is refused"
expect_eq denied_by_admin "$(reason_of "$out")" "with denied_by_admin"
expect_eq 1 "$(( ($(date +%s%N) - t0) / 1000000 < 2000 ))" "at once"
expect_eq 0 "$(pending 'len(q)')" "without a question"
expect_eq 200 "$(curl_status -x http://127.0.0.1:3129 https://allowed.test/)" \
	"a grant is the session's: session e still reaches allowed.test"

# ---- what stays enforced: a deny rule is never asked; an allowed
# never-reachable address is still refused.
out=$(printf 'CONNECT deny.test:443 HTTP/1.1\r\nHost: deny.test:443\r\n\r\n' | raw 127.0.0.1 3128 --timeout 3)
expect_eq denied_by_rule "$(reason_of "$out")" "a deny rule refuses at once, unasked"
held p1 $A https://priv.test/
id=$(wait_question priv.test 443 1)
expect_ne "" "$id" "an unlisted host is asked"
expect_eq 200 "$(decide "id=$id&answer=allow&scope=once")" "and allowed once"
expect_eq 403 "$(result p1)" "its never-reachable address is still refused"
expect_audit "as private_address" event=decision host=priv.test decision=deny reason=private_address

# ---- the grants, listed; a reload keeps them.
out=$(pctl grants)
expect_match "^default +other\.test:80 +allow +0 " "$out" "ctl grants: allow other.test:80 by uid 0"
expect_match "^default +allowed\.test:443 +deny +0 " "$out" "and deny allowed.test:443"
expect_eq "allow deny" "$(admin_get /grants | "$WORLD_PYTHON" -c '
import json, sys
g = json.load(sys.stdin)["grants"]
print(" ".join(x["grant"] for x in sorted(g, key=lambda x: x["host"], reverse=True)
               if x["session"] == "default" and x["until"] is None))')" \
	"GET /grants: allow other.test:80, deny allowed.test:443, with no end"
sess() { status_get "[x for x in s['sessions'] if x['name'] == '$1'][0]$2"; }
expect_eq 2 "$(sess default '["grants"].__len__()')" "/status: the default session has two grants"
expect_eq 0 "$(sess e '["grants"].__len__()')" "and session e none"
expect_eq 0 "$(sess default '["grants"][0]["uid"]')" "each with who made it"
out=$(pctl status)
expect_match "grant       allow other\.test:80 \(uid 0, until the proxy restarts\)" "$out" \
	"ctl status lists the session's grants"
expect_match "mode        ask \(what the allowlist refuses is HELD" "$out" "and says loudly it asks"
expect_eq 1 "$(metrics_get postern_grants session=default kind=allow)" "/metrics: one allow grant"
expect_eq 1 "$(metrics_get postern_grants session=default kind=deny)" "and one deny grant"
expect_eq 5 "$(metrics_get postern_asks_total answer=allow_once)" "/metrics: five questions allowed once"
expect_eq 1 "$(metrics_get postern_asks_total answer=deny_session)" "one denied for the session"
expect_eq 2 "$(metrics_get postern_asks_total answer=allow_session)" "two settled by one allow for the session"
write_conf 2s
expect_eq 200 "$(admin_curl -X POST -o /dev/null -w '%{http_code}' http://postern/reload)" "reload"
expect_eq 200 "$(curl_status $A http://other.test/after-reload)" "the allow grant survives the reload"
out=$(printf 'CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n' | raw 127.0.0.1 3128 --timeout 3)
expect_eq denied_by_admin "$(reason_of "$out")" "and the deny grant"

# ---- ask_timeout (2 s since the reload): refused with ask_timeout.
held t1 $A https://wild.test/
id=$(wait_question wild.test 443 1)
expect_ne "" "$id" "wild.test is asked"
expect_eq 403 "$(result t1)" "unanswered, it is refused"
expect_audit "with reason ask_timeout" event=decision host=wild.test decision=deny reason=ask_timeout \
	asked="$id" answer=timeout
expect_eq 404 "$(decide "id=$id&answer=allow")" "an expired question cannot be answered"
expect_eq 1 "$(metrics_get postern_asks_total answer=timeout)" "/metrics counts the timeout"
expect_eq 2 "$(sess default '["grants"].__len__()')" "the grants survived the reload in /status too"

# ---- a grant for a time ends.
held g1 $A http://allowed.test/timed
id=$(wait_question allowed.test 80 1)
out=$(pctl allow "$id" --for 2s)
expect_match "^question $id: allow for the session \(1 request released\), until 20" "$out" \
	"ctl allow --for 2s: a grant with an end"
expect_eq 200 "$(result g1)" "the held GET goes through"
expect_eq 200 "$(curl_status $A http://allowed.test/timed2)" "so does the next, unasked"
sleep 2.5
held g2 $A http://allowed.test/timed3
id=$(wait_question allowed.test 80 1)
expect_ne "" "$id" "once the grant has ended, the host is asked again"
pctl deny "$id" --once >/dev/null
expect_eq 403 "$(result g2)" "and denied once"

# ---- a client that goes away leaves its question.
in_px curl -sS --max-time 1 -o /dev/null -x http://127.0.0.1:3128 https://a.wild.test/ 2>/dev/null
id=$(wait_question a.wild.test 443 1)
i=0
while [ "$(pending 'len(q)')" != 0 ] && [ $i -lt 40 ]; do sleep 0.05; i=$((i + 1)); done
expect_eq 0 "$(pending 'len(q)')" "a client gone leaves the question, which goes with its last waiter"
expect_audit "its close line says so" event=close host=a.wild.test why="client gone while asked"

# ---- a restart loses the grants.
proxy_stop >/dev/null
proxy_start "$conf" || die "no proxy after the restart"
admin_wait || die "no admin socket after the restart"
expect_eq 0 "$(admin_get /grants | "$WORLD_PYTHON" -c 'import json,sys; print(len(json.load(sys.stdin)["grants"]))')" \
	"after a restart there is no grant"
held r1 $A http://other.test/restarted
id=$(wait_question other.test 80 1)
expect_ne "" "$id" "and other.test is asked again"
pctl allow "$id" >/dev/null
expect_eq 200 "$(result r1)" "allowed for the session"
out=$(pctl grants --save 2>&1)
expect_eq 1 $? "ctl grants --save without grants_file fails"
expect_match "no grants_file in \[proxy\]" "$out" "and says why"

# ---- grants_file: saved grants come back after a restart.
held r2 $A http://allowed.test/timed
id=$(wait_question allowed.test 80 1)
pctl allow "$id" --for 1h >/dev/null
expect_eq 200 "$(result r2)" "a timed grant for allowed.test:80"
gf="$WORLD_DIR/grants.ini"
write_conf 2s "grants_file = $gf"
expect_eq 200 "$(admin_curl -X POST -o /dev/null -w '%{http_code}' http://postern/reload)" \
	"reload with grants_file (not there yet: no grant)"
out=$(pctl grants --save)
expect_eq 0 $? "ctl grants --save"
expect_match "^saved 1 grant\(s\) to $gf" "$out" "saves the grant with no end"
expect_match "not saved: 1 grant\(s\) with an end" "$out" "and says the timed one is not saved"
expect_eq 600 "$(stat -c %a "$gf")" "grants_file is mode 0600"
expect_match "^allow_hosts = other\.test:80$" "$(cat "$gf")" "it holds allow_hosts = other.test:80"
expect_match "^# allow other\.test:80: by uid 0 at 20[0-9-]*T" "$(cat "$gf")" "with who and when"
expect_match "^# not saved: allow allowed\.test:80 .* ends at " "$(cat "$gf")" \
	"and the timed grant as a comment"
expect_eq 0 "$(ls "$WORLD_DIR" | grep -c 'grants.ini.tmp')" "no temporary file is left"
"$POSTERN_PROXY" --check -c "$conf" >/dev/null 2>&1
expect_eq 0 $? "--check takes the saved grants_file"
proxy_stop >/dev/null
proxy_start "$conf" || die "no proxy after the second restart"
admin_wait || die "no admin socket after the second restart"
t0=$(date +%s%N)
expect_eq 200 "$(curl_status $A http://other.test/saved)" "after a restart the saved grant allows other.test"
expect_eq 1 "$(( ($(date +%s%N) - t0) / 1000000 < 3000 ))" "unasked"
expect_eq grants_file "$(admin_get /grants | "$WORLD_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["grants"][0]["from"])')" \
	"GET /grants says it came from grants_file"
held r3 $A http://allowed.test/timed-again
id=$(wait_question allowed.test 80 1)
expect_ne "" "$id" "the timed grant, not saved, is gone"
pctl deny "$id" --once >/dev/null
expect_eq 403 "$(result r3)" "denied once"

# ---- a bad grants_file refuses the reload; the grants in force stay.
cp "$gf" "$gf.good"
printf '[session nope]\nallow_hosts = x.test:1\n[session default]\nallow_hosts = y.test\n' >"$gf"
out=$(admin_curl -X POST -w '\n%{http_code}' http://postern/reload)
expect_match "422$" "$out" "a reload with a bad grants_file is refused (422)"
expect_match "grants.ini:2: \\[session nope\\]: no such session" "$out" "with FILE:LINE: an unknown session"
expect_match "grants.ini:4: a grant is HOST:PORT \(y.test: no port\)" "$out" "and a grant without a port"
out=$("$POSTERN_PROXY" --check -c "$conf" 2>&1)
expect_eq 2 $? "--check refuses the bad grants_file"
expect_match "grants.ini:2: \\[session nope\\]: no such session" "$out" "with the same FILE:LINE"
expect_eq 200 "$(curl_status $A http://other.test/still)" "the grants in force stay"

proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
