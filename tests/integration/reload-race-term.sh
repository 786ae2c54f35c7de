#!/bin/sh
# reload-race-term: reloads in a tight loop with workers = 2 while
# terminated tunnels carry requests.  Six HTTP/1.1 keep-alive tunnels and
# two HTTP/2 ones (curl --http2 to nghttpd, one multiplexed, one serial)
# ask for a bound host every few ms while the config flips 280 times, by
# SIGHUP and POST /reload, between two files whose secret takes its value
# from two variables (the second also adds a session with its listener
# and CA, and a rule), and now and then a broken one (refused, FILE:LINE,
# the config in force stays).  No tunnel drops, every request is answered
# 200, the upstreams saw exactly the requests sent, each with the value of
# the snapshot its audit line names (never a placeholder), the audit's
# generation only grows, and the proxy still answers; afterwards a new
# request gets the value of the config in force.
POSTERN_TEST_WORKERS=2; export POSTERN_TEST_WORKERS
. "$top_srcdir/tests/integration/lib/world.sh"
for c in nghttpd curl; do
	command -v "$c" >/dev/null 2>&1 || skip "$c is not installed (Debian: nghttp2-server, curl)"
done
curl -V | grep -q '^Features:.* HTTP2' || skip "this curl has no HTTP/2"
WORLD_TIMEOUT=150
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

RACE="$top_srcdir/tests/integration/lib-tls/race.py"
VAL_A="tsk-$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')"
VAL_B="tsk-$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')"
export PX_VAL_A="$VAL_A" PX_VAL_B="$VAL_B"
state="$WORLD_DIR/state"
mkdir -p "$state"
chmod 700 "$state"

# The h2 upstream: nghttpd on allowed.test:8443, logging every header it
# receives (-v).  Its documents are empty, so that curl's output is its -w
# lines only: /h2/C/K/N for client C's K-th connection, N up to 300 (a
# directory link per K).
docs="$WORLD_DIR/docs"
mkdir -p "$docs/f"
"$WORLD_PYTHON" -c '
import os, sys
d = sys.argv[1]
for n in range(1, 301):
    open(os.path.join(d, "f", str(n)), "w").close()
for c in (1, 2):
    os.makedirs(os.path.join(d, "h2", str(c)))
    for k in range(1, 201):
        os.symlink("../../f", os.path.join(d, "h2", str(c), str(k)))
open(os.path.join(d, "h2", "last"), "w").close()' "$docs"
H2LOG="$WORLD_DIR/nghttpd.log"
ip netns exec "$WORLD_NS_UP" nghttpd -v -d "$docs" \
	-a "$WORLD_UP4" 8443 "$WORLD_KEY" "$WORLD_CERT" </dev/null >"$H2LOG" 2>&1 &

# conf VAR [DEFAULTS-LINE [MORE]]: a config whose secret k takes its value
# from VAR (its placeholder stays: same session, same variable for it).
conf() {
	admin_proxy_section "upstream_ca_file = $WORLD_CA" "state_dir = $state"
	cat <<-EOF
		[defaults]
		allow_hosts = allowed.test private, allowed.test:8443 private
		${2:-}
		secrets = k
		[secret k]
		from_env = $1
		placeholder_env = PX_KEY
		inject = allowed.test header x-api-key
		inject = allowed.test:8443 header x-api-key
		${3:-}
	EOF
}
conf PX_VAL_A >"$WORLD_DIR/a.ini"
extra="[session extra]
listen = tcp:127.0.0.1:3131
allow_hosts = api.example.test private"
conf PX_VAL_B "allow_hosts = other.test private" "$extra" >"$WORLD_DIR/b.ini"
conf PX_VAL_B "allow_hosts = other.test private
this is not a key" "$extra" >"$WORLD_DIR/bad.ini"
bad_line=$(grep -nxF "this is not a key" "$WORLD_DIR/bad.ini" | cut -d: -f1)
HASH_A=$(sha12 "$WORLD_DIR/a.ini")
HASH_B=$(sha12 "$WORLD_DIR/b.ini")
for f in a b; do
	"$POSTERN_PROXY" --check -c "$WORLD_DIR/$f.ini" >/dev/null 2>&1 ||
		die "$f.ini should be a valid config"
done
"$POSTERN_PROXY" --check -c "$WORLD_DIR/bad.ini" >/dev/null 2>&1 && die "bad.ini should be refused"

conf="$WORLD_DIR/conf.d/postern.ini"
mkdir -p "$WORLD_DIR/conf.d"
cp "$WORLD_DIR/a.ini" "$conf"
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
in_up "$WORLD_PYTHON" -c '
import socket, sys, time
for i in range(100):
    try:
        socket.create_connection((sys.argv[1], 8443), timeout=1).close()
        break
    except OSError:
        time.sleep(0.05)' "$WORLD_UP4"

CA="$state/ca/default.pem"
[ -s "$CA" ] || die "the session CA is not in $CA"
PH=$(in_px curl -sS --max-time 5 http://127.0.0.1:3128/.well-known/postern/session |
	sed -n 's/^env PX_KEY //p')
[ -n "$PH" ] || die "no placeholder"
h2c() { in_px curl -sS --no-progress-meter --max-time 30 --http2 -x http://127.0.0.1:3128 --cacert "$CA" "$@"; }
# h2_got PATH: the x-api-key nghttpd received on the stream for PATH.
h2_got() {
	"$WORLD_PYTHON" -c '
import re, sys
want, got = sys.argv[2], {}
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"^\[id=(\d+)\].*recv \(stream_id=(\d+)(?:, sensitive)?\) (:?[^:\s]+): (.*)$", line)
    if m:
        got.setdefault(m.group(1, 2), {})[m.group(3)] = m.group(4)
for s in got.values():
    if s.get(":path") == want:
        print(s.get("x-api-key", "-"))' "$H2LOG" "$1"
}

# Before the race: both protocols are terminated and injected.
out=$(curl_px -x http://127.0.0.1:3128 --cacert "$CA" -H "x-api-key: $PH" \
	-o /dev/null -w '%{http_code}' https://allowed.test/first)
expect_eq 200 "$out" "HTTP/1.1 through the terminated tunnel: 200"
expect_upstream "HTTP/1.1: the upstream received A's value" target=/first "head~x-api-key: $VAL_A"
out=$(h2c -H "x-api-key: $PH" -o /dev/null -w '%{http_version} %{http_code}' \
	https://allowed.test:8443/h2/last)
expect_eq "2 200" "$out" "HTTP/2 through the terminated tunnel: 200"
expect_eq "$VAL_A" "$(h2_got /h2/last)" "HTTP/2: nghttpd received A's value"
gen0=$(generation)

# The HTTP/1.1 tunnels.
in_px "$WORLD_PYTHON" "$RACE" h1 --port 3128 --ca "$CA" --ph "$PH" --conns 6 \
	--ready "$WORLD_DIR/h1.ready" --stop "$WORLD_DIR/stop" --out "$WORLD_DIR/h1.json" \
	>"$WORLD_DIR/h1.out" 2>&1 &
h1pid=$!
# The HTTP/2 tunnels: client C opens connection after connection (300
# requests each) until told to stop; one multiplexes 8 streams at a time.
h2loop() {
	local c k
	c=$1
	shift
	k=0
	while [ ! -e "$WORLD_DIR/stop" ] && [ $k -lt 200 ]; do
		k=$((k + 1))
		h2c "$@" -H "x-api-key: $PH" -w '%{http_code} %{num_connects} %{http_version}\n' \
			"https://allowed.test:8443/h2/$c/$k/[1-300]" >>"$WORLD_DIR/h2.$c.out" 2>>"$WORLD_DIR/h2.$c.err"
		echo "$?" >>"$WORLD_DIR/h2.$c.rc"
	done
}
h2loop 1 --parallel --parallel-max 8 &
h2a=$!
h2loop 2 &
h2b=$!
i=0
while [ ! -e "$WORLD_DIR/h1.ready" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
[ -e "$WORLD_DIR/h1.ready" ] || fail "the HTTP/1.1 tunnels did not open"

# The reloads.
diag "secure heap before: $(status_get 's["memory"]["secure_heap_bytes"]')"
t0=$(date +%s)
"$WORLD_PYTHON" "$RACE" reload --conf "$conf" --a "$WORLD_DIR/a.ini" --b "$WORLD_DIR/b.ini" \
	--bad "$WORLD_DIR/bad.ini" --bad-line "$bad_line" --pid "$WORLD_PROXY_PID" \
	--admin "$ADMIN_SOCK" --count 280 --out "$WORLD_DIR/reload.json" >"$WORLD_DIR/reload.out" 2>&1
expect_eq 0 $? "the reloader ran to the end"
t1=$(date +%s)
diag "secure heap after reloads: $(status_get 's["memory"]["secure_heap_bytes"]')"
touch "$WORLD_DIR/stop"
wait "$h1pid"
wait "$h2a"
wait "$h2b"
diag "secure heap after tunnels: $(status_get 's["memory"]["secure_heap_bytes"]')"
[ -s "$WORLD_DIR/reload.json" ] || die "no reload summary: $(cat "$WORLD_DIR/reload.out")"
diag "reloads: $(cat "$WORLD_DIR/reload.json")"
# field FILE KEY: one field of a JSON summary.
field() {
	"$WORLD_PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}
R="$WORLD_DIR/reload.json"
expect_eq 280 "$(field "$R" reloads)" "280 reloads asked for"
expect_eq "[]" "$(field "$R" post_wrong)" "every POST /reload: 422 with FILE:LINE for the broken file, 200 taken else"
n=$(field "$R" post_refused_bad)
[ "$n" -gt 0 ] && ok "$n broken files refused by POST /reload" || fail "no broken file was POSTed"
taken=$(field "$R" post_taken)
gen1=$(generation)
diag "generation $gen0 -> $gen1, $taken POSTs taken, in $((t1 - t0)) s"
[ $((gen1 - gen0)) -ge "$taken" ] && [ "$taken" -ge 80 ] &&
	ok "$((gen1 - gen0)) reloads taken ($taken by POST)" ||
	fail "only $((gen1 - gen0)) generations for $taken POSTs taken"
out=$(grep -E "reload \((SIGHUP|admin|inotify)\) refused: " "$WORLD_DIR/proxy.out" |
	grep -v "refused: generation [0-9]* stays in force")
expect_match "reload \\(SIGHUP\\) refused: $conf:$bad_line: " "$out" "SIGHUP refused the broken file, FILE:LINE logged"
# A SIGHUP whose read meets the next rename is refused too: the file it
# opened is no longer the one at its path (the watch reloads the new one).
odd=$(printf '%s\n' "$out" | grep -vF "refused: $conf:$bad_line: " |
	grep -vF "refused: $conf: changed while being checked; try again")
[ -z "$odd" ] || diag "other refusals: $odd"
expect_eq 0 "$(printf '%s' "$odd" | grep -c .)" \
	"every refusal names $conf:$bad_line (or the rename that met a SIGHUP's read)"
bad=$(sed -n 's/.*reloaded .*(sha256 \([0-9a-f]*\)).*/\1/p' "$WORLD_DIR/proxy.out" |
	grep -cvx -e "$HASH_A" -e "$HASH_B")
expect_eq 0 "$bad" "every config taken was A or B, never the broken file"

# The clients.
[ -s "$WORLD_DIR/h1.json" ] || die "no HTTP/1.1 summary: $(cat "$WORLD_DIR/h1.out")"
H="$WORLD_DIR/h1.json"
diag "HTTP/1.1: sent $(field "$H" sent), answered $(field "$H" answered), errors $(field "$H" errors)"
expect_eq 0 "$(field "$H" dropped)" "no HTTP/1.1 tunnel dropped"
expect_eq 0 "$(field "$H" not_200)" "every HTTP/1.1 request answered 200"
h1sent=$(field "$H" sent)
expect_eq "$h1sent" "$(field "$H" answered)" "every HTTP/1.1 request answered"
[ "$h1sent" -ge 600 ] && ok "$h1sent HTTP/1.1 requests during the reloads" ||
	fail "only $h1sent HTTP/1.1 requests during the reloads"
for c in 1 2; do
	rcs=$(sort -u "$WORLD_DIR/h2.$c.rc" | tr '\n' ' ')
	expect_eq "0 " "$rcs" "HTTP/2 client $c: every curl exited 0"
	conns=$(wc -l <"$WORLD_DIR/h2.$c.rc")
	lines=$(wc -l <"$WORLD_DIR/h2.$c.out")
	expect_eq $((conns * 300)) "$lines" "HTTP/2 client $c: $conns connections, 300 answers each"
	expect_eq 0 "$(grep -cvx '200 [01] 2' "$WORLD_DIR/h2.$c.out")" "HTTP/2 client $c: every answer HTTP/2 200"
	expect_eq "$conns" "$(grep -c '^200 1 2$' "$WORLD_DIR/h2.$c.out")" \
		"HTTP/2 client $c: one connection each, none dropped and opened again"
	[ -s "$WORLD_DIR/h2.$c.err" ] && fail "HTTP/2 client $c: $(head -n 3 "$WORLD_DIR/h2.$c.err")"
done
h2sent=$(cat "$WORLD_DIR/h2.1.out" "$WORLD_DIR/h2.2.out" | grep -c .)
[ "$h2sent" -ge 600 ] && ok "$h2sent HTTP/2 requests during the reloads" ||
	fail "only $h2sent HTTP/2 requests during the reloads"

# What the upstreams received, request by request, against the audit.
# nghttpd's log is written as it goes: wait until it holds every stream.
i=0
while [ "$(grep -c 'recv (stream_id=[0-9]*) :path: /h2/[12]/' "$H2LOG")" -lt "$h2sent" ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
"$WORLD_PYTHON" "$RACE" judge --audit "$PROXY_LOG" --upstream "$WORLD_UPSTREAM_LOG" \
	--h2log "$H2LOG" --hash-a "$HASH_A" --hash-b "$HASH_B" --val-a "$VAL_A" --val-b "$VAL_B" \
	--ph "$PH" --out "$WORLD_DIR/judge.json" || fail "the judge failed"
J="$WORLD_DIR/judge.json"
diag "judge: $(cat "$J")"
expect_eq "$h1sent" "$(field "$J" h1_upstream)" "the upstream received every HTTP/1.1 request, once"
expect_eq "$h2sent" "$(field "$J" h2_upstream)" "nghttpd received every HTTP/2 request, once"
expect_eq 0 "$(field "$J" placeholder)" "no placeholder reached an upstream"
expect_eq 0 "$(field "$J" no_value)" "every request carried a value"
expect_eq 0 "$(field "$J" other_value)" "every value was A's or B's"
"$WORLD_PYTHON" -c 'import json,sys; v = json.load(open(sys.argv[1]))["values"]; sys.exit(not (v["a"] and v["b"]))' "$J" &&
	ok "both values were injected during the race" || fail "only one value was ever injected"
expect_eq 0 "$(field "$J" no_audit)" "every request has its audit line"
expect_eq 0 "$(field "$J" duplicate_path)" "and only one"
expect_eq 0 "$(field "$J" unknown_hash)" "every request line names A's or B's hash"
expect_eq 0 "$(field "$J" wrong_snapshot)" "each request got the value of the snapshot its audit line names"
expect_eq 0 "$(field "$J" gen_back)" "on no connection does the audit's generation go back"
[ "$(field "$J" gen_last)" -gt "$(field "$J" gen_first)" ] &&
	ok "the audit's generation grows ($(field "$J" gen_first) -> $(field "$J" gen_last))" ||
	fail "the audit's generation did not grow"

# The proxy is alive and answers; a new request gets the value in force.
kill -0 "$WORLD_PROXY_PID" 2>/dev/null && ok "the proxy is alive" || die "the proxy died"
expect_eq 1 "$(admin_curl -o /dev/null -w '%{http_code}' http://postern/status | grep -c '^200$')" \
	"the admin socket answers /status"
now=$(status_get 's["config"]["hash"]')
case $now in
"$HASH_A") want=$VAL_A ;;
"$HASH_B") want=$VAL_B ;;
*) want=; fail "the config in force ($now) is neither file" ;;
esac
out=$(curl_px -x http://127.0.0.1:3128 --cacert "$CA" -H "x-api-key: $PH" \
	-o /dev/null -w '%{http_code}' https://allowed.test/last)
expect_eq 200 "$out" "after the race: HTTP/1.1 200"
expect_eq 1 "$(upstream_count target=/last "head~(?mi)^x-api-key: $want\r\$")" \
	"after the race: HTTP/1.1 gets the value of the config in force"
h2c -H "x-api-key: $PH" -o /dev/null https://allowed.test:8443/h2/last
i=0
while [ "$(h2_got /h2/last | wc -l)" -lt 2 ] && [ $i -lt 30 ]; do sleep 0.1; i=$((i + 1)); done
expect_eq "$want" "$(h2_got /h2/last | tail -n 1)" "after the race: HTTP/2 gets the value of the config in force"
workers_spread
[ $((t1 - t0)) -le 30 ] && ok "the reloads took $((t1 - t0)) s" || fail "the reloads took $((t1 - t0)) s"

expect_no_match "ERROR: AddressSanitizer|runtime error:|ThreadSanitizer" "$(cat "$WORLD_DIR/proxy.out")" \
	"no sanitizer report"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
