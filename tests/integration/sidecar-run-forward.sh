#!/bin/sh
# sidecar-run-forward.sh: postern-sidecar run --forward PORT.  The orchestrator's hook server listens on the caller's loopback,
# 127.0.0.1:8099 in px; CMD, in run's namespace with only lo, calls
# http://127.0.0.1:8099/hooks, the URL it has outside: with --forward 8099
# and --allow 127.0.0.1:8099 the call reaches the hook; with --forward
# alone it is refused and both the bridge and the engine say why, and with
# which --allow; without --forward it goes nowhere, as before.
# Fails on a sidecar without --forward (it refuses the option).
. "$top_srcdir/tests/integration/sidecar-lib.sh"
sc_world_up
[ -x "$top_builddir/postern-bridge" ] || skip "postern-bridge is not built"
command -v curl >/dev/null 2>&1 || skip "curl is not installed"

XDG="$WORLD_DIR/xdg"
mkdir -m 0711 "$XDG"
run() {
	in_px env XDG_RUNTIME_DIR="$XDG" "$SIDECAR" run "$@"
}

HOOK_PID=
world_cleanup_hook() {
	[ -n "$HOOK_PID" ] && kill "$HOOK_PID" 2>/dev/null
	return 0
}
cat >"$WORLD_DIR/hook.py" <<'EOF'
import http.server, sys
log = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with open(log, "a") as f:
            f.write("%s %s %s\n" % (self.command, self.path, body.decode()))
        out = b"hook got " + body + b"\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", 8099), H).serve_forever()
EOF
in_px "$WORLD_PYTHON" "$WORLD_DIR/hook.py" "$WORLD_DIR/hook.log" &
HOOK_PID=$!
i=0
until in_px curl -s -o /dev/null -d x http://127.0.0.1:8099/ready; do
	i=$((i + 1))
	[ $i -lt 50 ] || die "the hook server did not start"
	sleep 0.1
done
: >"$WORLD_DIR/hook.log"

# 1. The rule and the forward: the hook URL works unchanged.
out=$(run --allow 127.0.0.1:8099 --forward 8099 -- sh -c '
	curl -sS --max-time 10 -d "{\"event\":\"stop\"}" http://127.0.0.1:8099/hooks
	curl -sS --max-time 10 -d "{\"event\":\"v6\"}" "http://[::1]:8099/hooks"' 2>&1)
rc=$?
diag "$out"
expect_eq 0 $rc "CMD ran"
expect_match '^hook got \{"event":"stop"\}$' "$out" "CMD reached the hook on 127.0.0.1:8099"
expect_match '^hook got \{"event":"v6"\}$' "$out" "and through [::1]:8099, the forward's IPv6 listener"
expect_match '^POST /hooks \{"event":"stop"\}$' "$(cat "$WORLD_DIR/hook.log")" "the hook server got the call"
expect_no_match 'refused' "$out" "nothing was refused"

# 2. The forward without the rule: refused, and said.
: >"$WORLD_DIR/hook.log"
out=$(run --forward 8099 -- sh -c '
	curl -sS --max-time 10 -d x http://127.0.0.1:8099/hooks; echo "curl rc=$?"' 2>&1)
diag "$out"
expect_match '^curl rc=(52|56)$' "$out" "without --allow the connection is closed"
expect_match '^postern-bridge: forward to 127\.0\.0\.1:8099: the proxy refused CONNECT 127\.0\.0\.1:8099: 403 host_not_allowed;' \
	"$out" "the bridge says the engine refused it, and why"
expect_match "to allow it: --allow '127\\.0\\.0\\.1:8099'" "$out" "the engine names the --allow that would permit it"
expect_eq 0 "$(grep -c . "$WORLD_DIR/hook.log")" "nothing reached the hook server"

# 3. The rule without the forward: the URL goes nowhere, as before.
out=$(run --allow 127.0.0.1:8099 -- sh -c '
	curl -sS --max-time 10 -d x http://127.0.0.1:8099/hooks; echo "curl rc=$?"' 2>&1)
diag "$out"
expect_match '^curl rc=7$' "$out" "without --forward nothing listens in CMD's namespace"

# 4. A bad spec stops run before anything starts.
out=$(run --forward 8099:a/b:80 -- echo ran 2>&1)
rc=$?
expect_eq 2 $rc "a malformed --forward is a usage error"
expect_match "^postern-sidecar: --forward: '8099:a/b:80': " "$out" "saying why"
expect_no_match '^ran$' "$out" "and CMD did not run"
expect_eq "" "$(ls -A "$XDG")" "no socket directory left"

# 5. A hook limited to a path: a forward is a CONNECT, which no path rule
# admits, so the hook is called by a name pinned to the caller's loopback
# in [hosts], through the proxy as plain HTTP (the documented pattern).
cat >"$WORLD_DIR/hook.ini" <<'INI'
[defaults]
allow_hosts = hooks.internal:8099/hooks/ private
[hosts]
hooks.internal = 127.0.0.1
INI
: >"$WORLD_DIR/hook.log"
out=$(run -c "$WORLD_DIR/hook.ini" -- sh -c '
	curl -sS --max-time 10 -d "{\"event\":\"pinned\"}" http://hooks.internal:8099/hooks/stop
	curl -sS --max-time 10 -o /dev/null -w "admin %{http_code}\n" -d x http://hooks.internal:8099/admin' 2>&1)
diag "$out"
expect_match '^hook got \{"event":"pinned"\}$' "$out" "a pinned name reaches the hook under its path"
expect_match '^admin 403$' "$out" "and nothing outside it"
expect_eq 'POST /hooks/stop {"event":"pinned"}' "$(cat "$WORLD_DIR/hook.log")" "the hook server got only the call"
