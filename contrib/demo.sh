#!/bin/sh
# contrib/demo.sh: postern's main job on its built-in default, offline.
#
# `postern-sidecar run -- CMD` runs CMD in a fresh network namespace whose
# only way out is postern-proxy (the built-in default: the common model
# APIs on 443).  The demo starts a local upstream on the host's loopback,
# lets one command reach it with --allow, and shows another being refused.
# Exits 0 only if the allowed request got 200 and the refused one 403.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${POSTERN_BIN:-$top}
sidecar="$bin/postern-sidecar"
proxy="$bin/postern-proxy"
work=$(mktemp -d /tmp/postern-demo.XXXXXX)
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

# The upstream listens on 127.0.0.2: the sandbox's NO_PROXY lists
# 127.0.0.1, so a client inside would not use the proxy for that one.
up=127.0.0.2
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.2",0)); print(s.getsockname()[1])')
echo "hello from the local upstream" >"$work/index.html"
(cd "$work" && exec python3 -m http.server "$port" --bind "$up") >/dev/null 2>&1 &
pids="$pids $!"
i=0
until curl -s -o /dev/null "http://$up:$port/" 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 100 ] && { echo "demo: the upstream did not start" >&2; exit 1; }
	sleep 0.1
done

echo "== the built-in default"
"$proxy" --default-config | sed 's/^/  /'

echo
echo "== allowed: postern-sidecar run --allow $up:$port -- curl http://$up:$port/"
# The command runs as nobody with an empty /tmp of its own: its output
# comes back on stdout, not through a file in our $work.
"$sidecar" run --allow "$up:$port" -- curl -sS -w '\n%{http_code}\n' "http://$up:$port/" \
	>"$work/allowed.out"
code=$(tail -n 1 "$work/allowed.out")
sed '$d; s/^/  /' "$work/allowed.out"
echo "  -> HTTP $code"
[ "$code" = 200 ] || { echo "demo: expected 200" >&2; exit 1; }

echo
echo "== refused: postern-sidecar run -- curl https://example.com/"
set +e
"$sidecar" run -- curl -sS https://example.com/ >/dev/null 2>"$work/refused.err"
rc=$?
set -e
sed 's/^/  /' "$work/refused.err"
grep -q "CONNECT tunnel failed, response 403" "$work/refused.err" ||
	{ echo "demo: expected the CONNECT to be refused with 403" >&2; exit 1; }
grep -q "to allow it: --allow 'example.com'" "$work/refused.err" ||
	{ echo "demo: expected the refusal to say how to allow it" >&2; exit 1; }
echo "  -> curl exit $rc: the sandbox has no other way out"

echo
echo "== refused, with the proxy's text/plain explanation: curl -i http://example.com/"
"$sidecar" run -- curl -sS -i http://example.com/ 2>/dev/null | tr -d '\r' | sed 's/^/  /'

echo
echo "== no way around it: direct TCP and DNS inside the sandbox"
set +e
"$sidecar" run -- sh -c 'curl -sS --noproxy "*" --max-time 3 http://'"$up:$port"'/ 2>&1; getent hosts example.com || echo "getent: no DNS"' 2>/dev/null | sed 's/^/  /'
set -e

echo
echo "== who the command is: not root, its own processes only, no host socket"
"$sidecar" run -- sh -c 'echo "uid $(id -u), $(grep CapEff /proc/self/status)"
	echo "processes it sees: $(ls /proc | grep -c "^[0-9]")"
	ls /run /tmp' 2>/dev/null | sed 's/^/  /'

echo
echo "== the model APIs are allowed by the built-in default (postern-proxy --explain, no lookup):"
"$proxy" --explain api.anthropic.com:443 | sed 's/^/  /'
echo
echo "demo: ok"
