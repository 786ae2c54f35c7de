#!/bin/sh
# admin-examples: every config in contrib/examples/ passes
# "postern-proxy --check", and the host-proxy example decides its three
# sessions' typical requests as its comments say.  No namespaces needed:
# --check and --explain make no DNS query.
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
bin="${POSTERN_PROXY:-$top_builddir/postern-proxy}"
ex="$top_srcdir/contrib/examples"
n=0
nfail=0

ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); nfail=$((nfail + 1)); echo "not ok $n - $*"; }

[ -x "$bin" ] || { echo "FATAL: $bin is not built"; exit 1; }

# The examples are judged in a private copy: the proxy refuses a config
# that anyone but root or its own user could change (postern.ini(5)), and
# the source tree may belong to another user than the one running this, or
# sit in a group-writable directory.  What is tested here is their content.
umask 022
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM HUP
mkdir "$tmp/examples"
cp "$ex"/*.ini "$tmp/examples/" || exit 1
ex="$tmp/examples"

count=0
for f in "$ex"/*.ini; do
	[ -e "$f" ] || continue
	count=$((count + 1))
	if out=$("$bin" --check -c "$f" 2>&1); then
		ok "$(basename "$f") passes --check"
	else
		not_ok "$(basename "$f") passes --check"
		printf '%s\n' "$out" | sed 's/^/#   /'
	fi
done
[ "$count" -ge 3 ] && ok "$count example configs" || not_ok "only $count example configs"

# explain TARGET SESSION WANT: the first word of --explain's answer.
explain() {
	got=$("$bin" --explain "$1" --session "$2" -c "$ex/host-proxy.ini" 2>&1 | head -n 1)
	case $got in
	"$3 "*) ok "host-proxy: $1 in session $2: $3" ;;
	*) not_ok "host-proxy: $1 in session $2: want $3, got: $got" ;;
	esac
}
explain api.anthropic.com:443 model allow
explain registry.npmjs.org:443 model deny
explain http://control.internal:8080/hooks/stop hooks allow
explain http://control.internal:8080/admin hooks deny
explain control.internal:8080 hooks deny
explain registry.npmjs.org:443 packages allow
explain raw.githubusercontent.com:443 packages allow
explain gist.githubusercontent.com:443 packages deny
explain api.anthropic.com:443 packages deny
explain uploads.example.com:443 model deny

# The systemd unit, when systemd-analyze is here to judge it.  "verify"
# also checks that ExecStart's binary exists, so it is pointed at the one
# just built.
unit="$top_srcdir/contrib/systemd/postern-proxy.service"
if [ -f "$unit" ] && command -v systemd-analyze >/dev/null 2>&1; then
	sed "s|/usr/local/bin/postern-proxy|$bin|g; s|/usr/bin/postern-proxy|$bin|g" "$unit" \
		>"$tmp/postern-proxy.service"
	if out=$(systemd-analyze verify --man=no "$tmp/postern-proxy.service" 2>&1) && [ -z "$out" ]; then
		ok "systemd-analyze verify accepts the unit"
	else
		not_ok "systemd-analyze verify accepts the unit"
		printf '%s\n' "$out" | sed 's/^/#   /'
	fi
	sec=$(systemd-analyze security --offline=true "$tmp/postern-proxy.service" 2>/dev/null |
		sed -n 's/^.*Overall exposure level for .*: \([0-9.]*\).*$/\1/p')
	echo "# systemd-analyze security: exposure ${sec:-unknown}"
else
	echo "# systemd-analyze not installed: the unit is not verified"
fi

if [ "$nfail" -gt 0 ]; then
	echo "# FAIL: $nfail of $n checks failed"
	exit 1
fi
echo "# PASS: $n checks"
exit 0
