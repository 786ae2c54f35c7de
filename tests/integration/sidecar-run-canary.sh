#!/bin/sh
# sidecar-run-canary: postern-sidecar run -c FILE with canaries = gives CMD
# each canary variable, shaped like an Anthropic key, different for each
# variable and for each run; a bad canaries = line is refused with its
# FILE:LINE before anything runs.
: "${top_builddir:=.}"
if [ "$(id -u)" -ne 0 ] && ! unshare -rn true 2>/dev/null; then
	echo "SKIP: needs root or unprivileged user namespaces"
	exit 77
fi
S="$top_builddir/postern-sidecar"
B="$top_builddir/postern-bridge"
n=0 bad=0
check() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; bad=$((bad + 1)); fi; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM HUP

printf '[defaults]\nallow_hosts = a.test\ncanaries = DECOY_KEY, OTHER_DECOY\n' >"$T/run.ini"
run() { "$S" run --bridge "$B" -c "$T/run.ini" -- sh -c 'echo "one=$DECOY_KEY"; echo "two=$OTHER_DECOY"' 2>"$T/err"; }
out=$(run)
rc=$?
check "$([ "$rc" = 0 ]; echo $?)" "the run succeeds (exit $rc: $(head -c 300 "$T/err"))"
one=$(echo "$out" | sed -n 's/^one=//p')
two=$(echo "$out" | sed -n 's/^two=//p')
echo "$one" | grep -Eq '^sk-ant-api03-[A-Za-z0-9]{95}$'
check $? "CMD's DECOY_KEY looks like a key ($one)"
echo "$two" | grep -Eq '^sk-ant-api03-[A-Za-z0-9]{95}$'
check $? "so does OTHER_DECOY"
check "$([ "$one" != "$two" ]; echo $?)" "each canary has its own value"
again=$(run | sed -n 's/^one=//p')
check "$([ -n "$again" ] && [ "$again" != "$one" ]; echo $?)" "another run gets another value"

printf '[defaults]\nallow_hosts = a.test\ncanaries = 9bad\n' >"$T/bad.ini"
"$S" run --bridge "$B" -c "$T/bad.ini" -- true 2>"$T/err"
rc=$?
check "$([ "$rc" != 0 ]; echo $?)" "a bad canaries = is refused (exit $rc)"
grep -q "bad.ini:3: canaries: 9bad is not a variable's name" "$T/err"
check $? "with its FILE:LINE ($(head -c 200 "$T/err"))"

echo "1..$n"
[ "$bad" = 0 ]
