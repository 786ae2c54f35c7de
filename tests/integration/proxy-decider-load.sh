#!/bin/sh
# proxy-decider-load: 1,000 decisions a second for 10 s through one UNIX
# decider (lib-proxy/decider.py), across three sessions, none kept
# (decider_cache_max = 0), while a fourth session's questions each take
# 5 s.  Every request is decided by the decider (a CONNECT to a port of
# dead.test the allowlist does not list; allowed, it ends as the
# connect_failure dead.test gives), none is refused, and the slow session
# holds nobody else up: the others' p99 stays far below its 5 s.
# Timings are asserted with generous bounds only (the machine may be
# shared); the figures are printed.  With
# POSTERN_TEST_WORKERS=N it runs over N workers, each with its own
# connection to the decider.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

SOCK="$WORLD_DIR/decider.sock"
QLOG="$WORLD_DIR/questions.log"
L="$top_srcdir/tests/integration/lib-proxy/decload.py"

conf="$WORLD_DIR/postern.ini"
{
	admin_proxy_section "max_connections = 20000"
	echo "[defaults]"
	echo "allow_hosts = dead.test:1 private"
	echo "decider = unix:$SOCK"
	echo "decider_cache_max = 0"
	echo "max_connections = 5000"
	echo "[session b]"
	echo "listen = tcp:127.0.0.1:3129"
	echo "[session c]"
	echo "listen = tcp:127.0.0.1:3130"
	echo "[session slow]"
	echo "listen = tcp:127.0.0.1:3131"
	echo "decider_timeout = 10s"
} >"$conf"
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"

SLOW=5 ip netns exec "$WORLD_NS_PX" "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/decider.py" \
	"unix:$SOCK" "$QLOG" >"$WORLD_DIR/decider.out" 2>&1 &
i=0
while ! grep -q ready "$WORLD_DIR/decider.out" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done

# The slow session: 5 questions a second, each answered after 5 s.
in_px "$WORLD_PYTHON" "$L" --ports 3131 --target slow.test:443 --rate 5 --seconds 10 >"$WORLD_DIR/slow.json" &
slow=$!
in_px "$WORLD_PYTHON" "$L" --ports 3128,3129,3130 --target dead.test:2 --unique --rate 1000 --seconds 10 \
	>"$WORLD_DIR/load.json"
wait $slow
diag "load: $(cat "$WORLD_DIR/load.json")"
diag "slow: $(cat "$WORLD_DIR/slow.json")"

# j FILE EXPR: EXPR over the JSON object r in FILE.
j() {
	"$WORLD_PYTHON" -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
expect_eq 10000 "$(j "$WORLD_DIR/load.json" 'r["sent"]')" "10,000 requests were sent"
expect_eq "{'502': 10000}" "$(j "$WORLD_DIR/load.json" 'r["status"]')" \
	"every one was allowed by the decider (then dead.test refused the connect): no refusal"
expect_eq True "$(j "$WORLD_DIR/load.json" 'r["rate"] >= 400')" "at up to 1,000 a second (400 at least)"
for p in 3128 3129 3130; do
	expect_eq True "$(j "$WORLD_DIR/load.json" 'r["ports"]["'$p'"]["sent"] > 3000')" "session on $p had its share"
done
expect_eq "{'502': 50}" "$(j "$WORLD_DIR/slow.json" 'r["status"]')" "the slow session's requests were all answered by the decider"
expect_eq True "$(j "$WORLD_DIR/slow.json" 'r["p50"] >= 4900')" "each waited its 5 s on the decider"
expect_eq True "$(j "$WORLD_DIR/load.json" 'r["p99"] < 2500')" \
	"meanwhile the other sessions' p99 stayed far below those 5 s"
expect_eq True "$(j "$WORLD_DIR/load.json" 'r["max"] < 4900')" "and none of theirs waited on a slow one"
n=$(wc -l <"$QLOG")
expect_eq True "$([ "$n" -ge 10050 ] && echo True || echo "False ($n)")" "the decider was asked each time"
for r in timeout bad_answer down; do
	expect_eq 0 "$(metrics_get postern_decider_answers_total result=$r)" "no $r answers"
done
expect_eq 10050 "$(metrics_get postern_decider_answers_total result=allow)" "10,050 allows counted"
