#!/bin/sh
# tests/load/soak.sh [MINUTES]: the soak test, run by hand as root
# (not by make check): for MINUTES (default 30), rounds of mixed load —
# 200 held tunnels, new CONNECTs, plain-HTTP requests (also keep-alive),
# refusals — while the config is rewritten (reloads) every 0.25 s; after
# each round the proxy's descriptors and RSS are recorded once it is idle.
# Prints one line per round and a verdict: no growth in RSS or descriptors,
# and every round with zero failures.
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
MIN=${1:-30}
WORLD_TIMEOUT=$((MIN * 60 + 600)); export WORLD_TIMEOUT
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

reload_pair_up
idle() { i=0; while [ $i -lt 200 ] && [ "$(status_get 's["connections_open"]')" != 0 ]; do sleep 0.05; i=$((i + 1)); done; }
end=$(( $(date +%s) + MIN * 60 ))
round=0 bad=0
first_rss= first_fd=
while [ "$(date +%s)" -lt "$end" ]; do
	round=$((round + 1))
	# Each round starts from allowlist A, in force.
	if ! cmp -s "$WORLD_DIR/a.ini" "$conf"; then
		cp "$WORLD_DIR/a.ini" "$conf.tmp" && mv "$conf.tmp" "$conf"
		sleep 1.5
	fi
	in_px "$WORLD_PYTHON" "$ADMIN_LIB/load.py" load --proxy 127.0.0.1:3128 \
		--config "$conf" --a "$WORLD_DIR/a.ini" --b "$WORLD_DIR/b.ini" --audit "$PROXY_LOG" \
		--tunnels 200 --rewrites 100 --interval 0.25 --out "$WORLD_DIR/r.json" >"$WORLD_DIR/r.out" 2>&1 ||
		{ bad=$((bad + 1)); tail -5 "$WORLD_DIR/r.out"; }
	fails=$("$WORLD_PYTHON" -c 'import json,sys
d = json.load(open(sys.argv[1]))
keys = ("tunnel_open_failed", "tunnels_dropped", "failed_permitted", "failed_other",
    "refused_never_allowed", "audit_no_generation", "audit_unknown_hash",
    "audit_wrong_decision", "audit_stale", "gen_hash_conflicts", "reconcile_mismatch")
print(sum(d.get(k, 0) for k in keys), d["requests"])' "$WORLD_DIR/r.json")
	mv "$WORLD_DIR/r.json" "$WORLD_DIR/r.json.kept"
	idle
	f=$(proxy_fds); r=$(proxy_rss_kb)
	[ -z "$first_rss" ] && first_rss=$r first_fd=$f
	echo "round $round: $(echo "$fails" | cut -d' ' -f2) requests, $(echo "$fails" | cut -d' ' -f1) failures; idle: $f fds, RSS $r kB, generation $(generation)"
	if [ "$(echo "$fails" | cut -d' ' -f1)" != 0 ]; then
		bad=$((bad + 1))
		# Keep the summary of a failed round: it says which check failed.
		cp "$WORLD_DIR/r.json.kept" "/tmp/postern-soak-round$round.json" 2>/dev/null
		echo "  (summary kept in /tmp/postern-soak-round$round.json)"
	fi
done
echo "first round: $first_fd fds, RSS $first_rss kB; last: $f fds, RSS $r kB; rounds with failures: $bad"
expect_eq 0 "$bad" "no round had a failure"
expect_eq "$first_fd" "$f" "no descriptor growth"
[ "$r" -le $((first_rss + first_rss / 10 + 2048)) ] && ok "no RSS growth ($first_rss -> $r kB)" || fail "RSS grew $first_rss -> $r kB"
