#!/bin/sh
# proxy-audit-batch: the audit log's promises while the proxy gathers the
# lines nothing waits on (close lines, refusals) into one write(2) a loop
# pass (proxy/core/audit.h): an allow is in the file before its first byte
# reaches the upstream, every connection has its decision and its close
# line in that order, and the close lines of the connections a stopping
# proxy closes are written before it exits.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

port=7108
conf=$(proxy_conf "[defaults]" "allow_hosts = 127.0.0.1:$port")
proxy_start "$conf" || die "no proxy"

order() { # N FIRST-PORT: N tunnels and N refusals from 8 threads, from
	# source ports FIRST-PORT up; the upstream reads the log as each
	# tunnel's first bytes arrive.
	in_px "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/auditorder.py" 3128 $port \
		"$PROXY_LOG" "$1" "$2"
}

# The proxy held 50 ms after each writev(2) and sendto(2) it makes (a
# tunnel's first bytes go upstream by one of them), so that a line
# written only as the loop pass ends would be missing when the upstream
# looks.
if command -v strace >/dev/null 2>&1; then
	strace -f -qq -o /dev/null -e trace=writev,sendto -e inject=writev,sendto:delay_exit=50000 \
		-p "$WORLD_PROXY_PID" &
	tracer=$!
	sleep 0.5
	if kill -0 $tracer 2>/dev/null; then
		out=$(order 16 12000)
		rc=$?
		kill $tracer
		wait $tracer 2>/dev/null
		diag "$out"
		expect_eq 0 "$rc" "held after each send, every allow line was in the file when the tunnel's bytes reached the upstream"
	else
		diag "strace cannot attach to the proxy here: the held round is left out"
	fi
else
	diag "no strace: the held round is left out"
fi

out=$(order 400 13000)
rc=$?
diag "$out"
expect_eq 0 "$rc" "under load, every allow line was in the file when the tunnel's bytes reached the upstream"
expect_match "^tunnels 400 refused 400 missing 0 errors 0$" "$out" "400 tunnels and 400 refusals"

# Each connection: one decision line, then one close line (polled for, 3 s
# at most: the last close lines are written as the proxy's loop pass
# ends, after the client saw its connection end).
check_lines() {
	"$WORLD_PYTHON" - "$PROXY_LOG" "$1" <<'EOF'
import json, sys
log, want = sys.argv[1], int(sys.argv[2])
seen = {}
bad = []
for raw in open(log, "rb"):
    l = json.loads(raw)
    if l.get("method") != "CONNECT":
        continue
    s = seen.setdefault(l["peer"], [])
    s.append(l["event"])
for peer, ev in seen.items():
    if ev != ["decision", "close"]:
        bad.append("%s: %s" % (peer, " ".join(ev)))
print("connections %d bad %d" % (len(seen), len(bad)))
for b in bad[:5]:
    print("# " + b)
sys.exit(0 if len(seen) == want and not bad else 1)
EOF
}
i=0
until res=$(check_lines 832) || [ $i -ge 30 ]; do
	sleep 0.1
	i=$((i + 1))
done
diag "$res"
expect_match "^connections 832 bad 0$" "$res" "each of the 832 connections: its decision line, then its close line"

# 20 tunnels held open when the proxy stops: their close lines come from
# the stopping loop, and are in the file when the proxy has exited.
rm -f "$WORLD_DIR/go"
in_px "$WORLD_PYTHON" "$WORLD_LIB/world.py" serve --log "$WORLD_DIR/sink.log" \
	--ready "$WORLD_DIR/sink.ready" --echo "127.0.0.1:$port" >"$WORLD_DIR/sink.out" 2>&1 &
sink=$!
i=0
while [ ! -s "$WORLD_DIR/sink.ready" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
in_px "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/hold.py" 127.0.0.1:3128 \
	"127.0.0.1:$port" 20 "$WORLD_DIR/held.out" "$WORLD_DIR/go" --timeout 10 >/dev/null 2>&1 &
holder=$!
wait_ready "$WORLD_DIR/held.out"
expect_eq 20 "$(grep -c '^200$' "$WORLD_DIR/held.out")" "20 tunnels are open"
before=$(audit_count event=close method=CONNECT)
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
after=$(audit_count event=close method=CONNECT)
expect_eq 20 "$((after - before))" "the 20 tunnels the stopping proxy closed each have a close line"
: >"$WORLD_DIR/go"
kill $sink $holder 2>/dev/null
wait $holder 2>/dev/null || :
