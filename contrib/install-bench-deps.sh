#!/bin/sh
# contrib/install-bench-deps.sh: the optional dependencies of
# tests/bench/bench-sandbox.sh ("make bench-sandbox"), which measures the
# whole sandbox path against Anthropic's sandbox-runtime.  Not CI's: CI
# runs contrib/install-deps.sh, and no test needs what this installs (the
# bench skips, saying why, without it).  Run as root on Debian 12.
#
#   ripgrep    sandbox-runtime refuses to start without rg
#   npm        to fetch sandbox-runtime (node comes with it)
#   sandbox-runtime, pinned (the version bench-sandbox was measured with),
#              into $POSTERN_BENCH_CACHE/srt (/var/cache/postern-bench/srt):
#              not the source tree, not npm's global prefix; the bench looks
#              there first
#
# bubblewrap, socat and wrk come from contrib/install-deps.sh.  sandbox-
# runtime declares node >= 22.12; 0.0.83 runs on Debian 12's node 20 for
# what the bench does (npm warns EBADENGINE).
set -eu

SRT_PKG="@anthropic-ai/sandbox-runtime@0.0.83"
DIR=${POSTERN_BENCH_CACHE:-/var/cache/postern-bench}/srt

if [ "$(id -u)" -ne 0 ]; then
	echo "install-bench-deps: run as root (apt-get install needs it)" >&2
	exit 1
fi
# By command, not by package: node and npm may come from elsewhere
# (NodeSource's nodejs carries its own npm, and conflicts with Debian's).
missing=""
for c in rg:ripgrep npm:npm bwrap:bubblewrap socat:socat wrk:wrk; do
	command -v "${c%%:*}" >/dev/null 2>&1 || missing="$missing ${c#*:}"
done
if [ -n "$missing" ]; then
	echo "install-bench-deps: installing$missing"
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing >/dev/null 2>&1 || {
		apt-get update -q >/dev/null
		apt-get install -y -q --no-install-recommends $missing >/dev/null
	}
fi
want=${SRT_PKG##*@}
have=$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' \
	"$DIR/node_modules/@anthropic-ai/sandbox-runtime/package.json" 2>/dev/null | head -n 1)
if [ "$have" = "$want" ] && [ -x "$DIR/node_modules/.bin/srt" ]; then
	echo "install-bench-deps: sandbox-runtime $have present in $DIR"
	exit 0
fi
mkdir -p "$DIR"
[ -f "$DIR/package.json" ] || echo '{ "private": true }' > "$DIR/package.json"
(cd "$DIR" && npm install --no-audit --no-fund --fetch-retries=1 "$SRT_PKG")
echo "install-bench-deps: installed $SRT_PKG in $DIR"
