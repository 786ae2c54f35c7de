#!/bin/sh
# sidecar-run-ux: what a person at a terminal sees from `postern-sidecar
# run`: a refusal is one plain line on stderr naming the host, the reason
# and the --allow that would permit it, in the session named by
# --session-name; no JSON audit lines are mixed into CMD's output.
: "${top_builddir:=.}"
if [ "$(id -u)" -ne 0 ] && ! unshare -rn true 2>/dev/null; then
	echo "SKIP: needs root or unprivileged user namespaces"
	exit 77
fi
S="$(cd "$top_builddir" && pwd)/postern-sidecar"
n=0 bad=0
check() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; bad=$((bad + 1)); fi; }
err=$(mktemp)
out=$("$S" run --session-name agent-7 -- curl -sS https://example.com/ 2>"$err")
rc=$?
check "$([ "$rc" = 56 ]; echo $?)" "CMD's exit status comes back (curl 56, got $rc)"
grep -q "^postern: refused CONNECT example.com:443: host_not_allowed (no rule matches example.com:443 in session agent-7); to allow it: --allow 'example.com'$" "$err"
check $? "one plain line names host, reason, session and the --allow that would permit it"
grep -q '^{' "$err"; check "$([ $? -ne 0 ]; echo $?)" "no JSON audit line on the terminal"
grep -q 'listening on\|serving' "$err"; check "$([ $? -ne 0 ]; echo $?)" "no start-up chatter"
# From /, which the sandbox has: a working directory under /tmp (a
# checkout there) earns its own, rightful, warning.
out=$(cd / && "$S" run --allow 'example.com' -- sh -c 'exit 3' 2>"$err")
check "$([ $? = 3 ]; echo $?)" "with --allow the command runs and its status comes back"
[ ! -s "$err" ]; check $? "a run that nothing refuses prints nothing on the terminal: $(cat "$err")"
"$S" run --allow '*' -- true 2>"$err"
rc=$?
check "$([ "$rc" = 2 ]; echo $?)" "a bad --allow is refused before anything runs (exit $rc)"
grep -q "a bare \* would allow everything" "$err"; check $? "and says why"
cat "$err"
rm -f "$err"
echo "1..$n"
[ $bad -eq 0 ]
