#!/bin/sh
# contrib/demo.sh: postern's main job on the built-in default, offline.
#
# Starts a local upstream on loopback, starts postern-proxy with its
# built-in default (the model APIs on 443) plus one --allow for that
# upstream, then makes a real allowed request and a real refused one
# through it.  Exits 0 only if the proxy allowed the first and refused the
# second with 403.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
proxy=${POSTERN_PROXY:-$top/postern-proxy}
work=$(mktemp -d /tmp/postern-demo.XXXXXX)
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
up_port=$(free_port)
px_port=$(free_port)

echo "hello from the local upstream" > "$work/index.html"
(cd "$work" && exec python3 -m http.server "$up_port" --bind 127.0.0.1) >/dev/null 2>&1 &
pids="$pids $!"

echo "== postern-proxy --check (built-in default + --allow 127.0.0.1:$up_port)"
"$proxy" --allow "127.0.0.1:$up_port" --listen "tcp:127.0.0.1:$px_port" --check

"$proxy" --allow "127.0.0.1:$up_port" --listen "tcp:127.0.0.1:$px_port" 2>"$work/proxy.log" &
pids="$pids $!"
i=0
until curl -s -o /dev/null "http://127.0.0.1:$px_port/" 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 50 ] && { cat "$work/proxy.log"; echo "demo: proxy did not start" >&2; exit 1; }
	sleep 0.1
done
until curl -s -o /dev/null "http://127.0.0.1:$up_port/" 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 100 ] && { echo "demo: upstream did not start" >&2; exit 1; }
	sleep 0.1
done

echo
echo "== allowed: curl -x http://127.0.0.1:$px_port http://127.0.0.1:$up_port/"
code=$(curl -sS -o "$work/allowed.out" -w '%{http_code}' -x "http://127.0.0.1:$px_port" "http://127.0.0.1:$up_port/")
cat "$work/allowed.out"
echo "-> HTTP $code"
[ "$code" = 200 ] || { echo "demo: expected 200" >&2; exit 1; }

echo
echo "== refused: curl -x http://127.0.0.1:$px_port https://example.com/"
set +e
curl -sS -o /dev/null -x "http://127.0.0.1:$px_port" https://example.com/ 2>"$work/refused.err"
set -e
printf '%s\n' "$(cat "$work/refused.err")"
grep -q 'CONNECT tunnel failed, response 403' "$work/refused.err" ||
	{ echo "demo: expected the CONNECT to be refused with 403" >&2; exit 1; }
echo
echo "== refused, with the proxy's explanation: curl -i -x http://127.0.0.1:$px_port http://example.com/"
curl -s -i -x "http://127.0.0.1:$px_port" http://example.com/ | sed 's/^/  /'
code=$(curl -s -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:$px_port" http://example.com/)
echo "-> HTTP $code"
[ "$code" = 403 ] || { echo "demo: expected 403" >&2; exit 1; }

echo
echo "== the audit log (JSON lines)"
grep '"event"' "$work/proxy.log" | sed 's/^/  /'
echo
echo "demo: ok"
