#!/bin/sh
# bridge-forward.sh: --forward PORT makes a port of the proxy host's
# loopback appear on the sandbox's, so that a hook URL works unchanged
# inside and out.  The orchestrator's hook server
# listens on 127.0.0.1:8099 in px, where the real postern-proxy runs; CMD
# runs under the bridge in the agent namespace (only lo), where NO_PROXY
# sends http://127.0.0.1:8099/hooks straight to the sandbox's own loopback.
#
#   - with --forward 8099 and a rule for 127.0.0.1:8099, curl, Python's
#     urllib (which honours HTTP_PROXY and NO_PROXY) and Node's http reach
#     the hook, through the proxy as an allowed CONNECT it logs;
#   - without the rule, the connection is closed and the bridge says why on
#     stderr, once for two attempts: the proxy's reason and the rule to add;
#   - the proxy's own TCP listeners stay refused even with a rule for them,
#     one on 0.0.0.0 included;
#   - without --forward, nothing listens there (as before: refused).
# Fails on a bridge without --forward: it refuses the option.
. "$top_srcdir/tests/integration/lib/world.sh"
BRIDGE="$top_builddir/postern-bridge"
[ -x "$BRIDGE" ] || skip "postern-bridge is not built"
command -v curl >/dev/null 2>&1 || skip "curl is not installed"
world_up --agent

HOOK_PID=
world_cleanup_hook() {
	[ -n "$HOOK_PID" ] && kill "$HOOK_PID" 2>/dev/null
	return 0
}

# The orchestrator's hook endpoint, on the proxy host's loopback only.
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
: >"$WORLD_DIR/hook.log"
in_px "$WORLD_PYTHON" "$WORLD_DIR/hook.py" "$WORLD_DIR/hook.log" &
HOOK_PID=$!
i=0
until in_px curl -s -o /dev/null -d x http://127.0.0.1:8099/ready; do
	i=$((i + 1))
	[ $i -lt 50 ] || die "the hook server did not start"
	sleep 0.1
done
: >"$WORLD_DIR/hook.log"

# The default session allows nothing on loopback; the "hooks" session
# allows the hook's port, and the proxy's own TCP listener (which must stay
# refused all the same).
cat >"$WORLD_DIR/postern.ini" <<EOF
[proxy]
listen = unix:$WORLD_DIR/proxy.sock
listen = tcp:127.0.0.1:4128
listen = tcp:0.0.0.0:4129
log = $PROXY_LOG
dns_servers = $WORLD_DNS
[defaults]
allow_hosts = allowed.test private
[session hooks]
listen = unix:$WORLD_DIR/hooks.sock
allow_hosts = 127.0.0.1:8099, 127.0.0.1:4128, 127.0.0.1:4129
EOF
proxy_start "$WORLD_DIR/postern.ini" || die "no proxy"

# bridge SOCK ARGS... -- CMD: the bridge in the agent namespace.
bridge() {
	local sock
	sock=$1
	shift
	in_agent env -i PATH="$PATH" HOME=/root "$BRIDGE" --connect "$sock" --allow-root "$@"
}

cat >"$WORLD_DIR/callers.sh" <<'EOF'
# The hook callers, each with the URL it would use outside the sandbox.
curl -sS --max-time 10 -H 'Content-Type: application/json' -d '{"by":"curl"}' \
	http://127.0.0.1:8099/hooks
curl -sS --max-time 10 -d '{"by":"curl-localhost"}' http://localhost:8099/hooks
python3 -c '
import urllib.request
r = urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:8099/hooks",
    data=b"{\"by\":\"python\"}"), timeout=10)
print(r.read().decode().strip())'
if command -v node >/dev/null; then
	node -e '
const req = require("http").request("http://127.0.0.1:8099/hooks", { method: "POST" },
  (res) => { let b = ""; res.on("data", (d) => b += d); res.on("end", () => process.stdout.write(b)); });
req.on("error", (e) => console.log("node error " + e.code));
req.end("{\"by\":\"node\"}");'
else
	echo 'hook got {"by":"node"}'
fi
echo "env NO_PROXY=$NO_PROXY HTTP_PROXY=$HTTP_PROXY"
EOF

# 1. --forward and a rule: every caller reaches the hook, URL unchanged.
out=$(bridge "$WORLD_DIR/hooks.sock" --forward 8099 -- sh "$WORLD_DIR/callers.sh" 2>&1)
rc=$?
diag "$out"
expect_eq 0 "$rc" "the callers ran under the bridge"
expect_match '^env NO_PROXY=localhost,127\.0\.0\.1,::1 HTTP_PROXY=http://127\.0\.0\.1:3128$' "$out" \
	"the proxy variables are set and NO_PROXY names loopback (the callers go direct)"
for by in curl curl-localhost python node; do
	expect_match "^hook got \\{\"by\":\"$by\"\\}\$" "$out" "$by reaches the hook through --forward"
done
expect_match '^POST /hooks \{"by":"curl"\}$' "$(cat "$WORLD_DIR/hook.log")" "the hook server saw curl's call"
expect_eq 4 "$(grep -c '^POST /hooks ' "$WORLD_DIR/hook.log")" "the hook server saw every call"
expect_audit "the proxy decided it as a CONNECT to its loopback" \
	session=hooks method=CONNECT host=127.0.0.1 port=8099 decision=allow
# Save the one notice a proxy that gives no session info earns (this
# postern-proxy answers the session request 400 until it does).
expect_no_match '^postern-bridge:' \
	"$(printf '%s\n' "$out" | grep -v '^postern-bridge: .* answers the session request with 400 ')" \
	"the bridge had nothing to complain about"

# 2. No rule for it (the default session): closed, and the bridge says why,
# once for both attempts.
: >"$WORLD_DIR/hook.log"
out=$(bridge "$WORLD_DIR/proxy.sock" --forward 8099 -- sh -c '
	curl -sS --max-time 10 -d x http://127.0.0.1:8099/hooks; echo "curl rc=$?"
	curl -sS --max-time 10 -d x http://127.0.0.1:8099/hooks; echo "curl rc=$?"' 2>&1)
diag "$out"
expect_match '^curl rc=(52|56)$' "$out" "without a rule the client's connection is closed"
expect_no_match '^curl rc=0$' "$out" "and no request succeeds"
expect_match '^postern-bridge: forward to 127\.0\.0\.1:8099: the proxy refused CONNECT 127\.0\.0\.1:8099: 403 host_not_allowed;' \
	"$out" "the bridge says the proxy refused it, and the reason"
expect_match '^postern-bridge:   To allow it, an admin can add to \[defaults\]: allow_hosts = 127\.0\.0\.1:8099$' \
	"$out" "and which rule would allow it"
expect_eq 1 "$(printf '%s\n' "$out" | grep -c 'the proxy refused CONNECT')" \
	"the refusal is said once, not once per attempt"
expect_eq 0 "$(grep -c . "$WORLD_DIR/hook.log")" "nothing reached the hook server"
expect_audit "the refusal is logged" method=CONNECT host=127.0.0.1 port=8099 \
	decision=deny reason=host_not_allowed

# 3. The proxy's own TCP listener: refused even with a rule naming it.
out=$(bridge "$WORLD_DIR/hooks.sock" --forward 4128 -- sh -c '
	curl -sS --max-time 10 http://127.0.0.1:4128/; echo "curl rc=$?"' 2>&1)
diag "$out"
expect_match '^curl rc=(52|56)$' "$out" "the proxy's own listener is not forwarded"
expect_match "^postern-bridge: forward to 127\\.0\\.0\\.1:4128: the proxy refused CONNECT 127\\.0\\.0\\.1:4128: 403 private_address;" \
	"$out" "the bridge says so"
expect_match "^postern-bridge:   .*127\\.0\\.0\\.1 port 4128 is the proxy's own listener" "$out" \
	"with the proxy's words"
expect_no_match "allow_hosts = .*private" "$out" "and suggests no rule: none could allow it"
# Its listener on 0.0.0.0 takes connections to 127.0.0.1 too.
out=$(bridge "$WORLD_DIR/hooks.sock" --forward 4129 -- sh -c '
	curl -sS --max-time 10 http://127.0.0.1:4129/; echo "curl rc=$?"' 2>&1)
diag "$out"
expect_match '^curl rc=(52|56)$' "$out" "the proxy's wildcard listener is not forwarded either"
expect_match "^postern-bridge:   .*127\\.0\\.0\\.1 port 4129 is the proxy's own listener tcp:0\\.0\\.0\\.0:4129" \
	"$out" "and the bridge says why"

# 4. Without --forward the URL goes nowhere, as before.
out=$(bridge "$WORLD_DIR/hooks.sock" -- sh -c '
	curl -sS --max-time 10 -d x http://127.0.0.1:8099/hooks; echo "curl rc=$?"' 2>&1)
diag "$out"
expect_match '^curl rc=7$' "$out" "without --forward nothing listens on the sandbox's 8099"
expect_eq 0 "$(grep -c . "$WORLD_DIR/hook.log")" "nothing reached the hook server"

# 5. Bad specs are refused before anything starts.
for spec in 0 8099: 8099:h 8099:a\ b:80 8099:[x]:80 70000; do
	out=$(bridge "$WORLD_DIR/hooks.sock" --forward "$spec" -- true 2>&1)
	rc=$?
	expect_eq 2 "$rc" "--forward '$spec' is refused"
	expect_match "^postern-bridge: --forward " "$out" "saying which option"
done

proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
