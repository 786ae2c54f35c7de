#!/bin/sh
# bridge-env.sh: CMD's environment is built from the fixed list plus --env,
# never inherited wholesale: a fake API key in the bridge's environment does
# not reach CMD, not even through /proc/1/environ when the bridge is PID 1
# (the bridge wipes its own environment block); the proxy variables are set,
# and --no-env leaves them out.
. "$top_srcdir/tests/integration/lib-bridge.sh"
br_init
$BR_PIDNS true 2>/dev/null ||
	br_skip "cannot create a PID namespace with its own /proc here"
br_start_proxy "$BR_T/proxy.sock"
KEY=sk-ant-fake-postern-test-0123456789

cat > "$BR_T/show.sh" <<'EOF2'
echo "comm=$(cat /proc/1/comm)"
echo "environ_bytes=$(wc -c < /proc/1/environ)"
env | sort
echo ---
tr '\0' '\n' < /proc/1/environ | grep -v '^$'
echo "environ_read=$?"
EOF2

# The bridge as PID 1 of a new PID namespace, with its own /proc.
pid1() {
	env -i PATH="$PATH" HOME=/root LC_ALL=C TERM=dumb \
		POSTERN_TEST_API_KEY=$KEY ANTHROPIC_API_KEY=$KEY-2 \
		KEEPME=kept HTTP_PROXY=http://launcher.invalid:1 \
		$BR_PIDNS "$BRIDGE" --connect "$BR_T/proxy.sock" "$@"
}

out=$(pid1 -- sh "$BR_T/show.sh" 2>&1) || br_fail "run failed: $out"
echo "$out"
echo "$out" | grep -q '^comm=postern-bridge$' || br_fail "the bridge is not PID 1"
bytes=$(echo "$out" | sed -n 's/^environ_bytes=//p')
[ "${bytes:-0}" -gt 100 ] || br_fail "/proc/1/environ was not readable, the test proves nothing"
case "$out" in
*"$KEY"*) br_fail "the fake API key reached CMD" ;;
esac
echo "$out" | grep -q '^KEEPME=' && br_fail "KEEPME leaked without --env"
for v in HTTP_PROXY HTTPS_PROXY http_proxy https_proxy ALL_PROXY all_proxy; do
	echo "$out" | grep -qx "$v=http://127.0.0.1:3128" || br_fail "$v not set to the bridge"
done
for v in NO_PROXY no_proxy; do
	echo "$out" | grep -qx "$v=localhost,127.0.0.1,::1" || br_fail "$v not set"
done
echo "$out" | grep -qx 'LC_ALL=C' || br_fail "LC_ALL (an LC_* variable) not kept"
echo "$out" | grep -qx "PATH=$PATH" || br_fail "PATH not kept"
br_pass "fake key absent from CMD's environment and from /proc/1/environ"

out=$(pid1 --env KEEPME -- sh "$BR_T/show.sh" 2>&1) || br_fail "run failed: $out"
echo "$out" | grep -qx 'KEEPME=kept' || br_fail "--env KEEPME did not pass KEEPME"
case "$out" in
*"$KEY"*) br_fail "the fake API key reached CMD with --env KEEPME" ;;
esac
br_pass "--env NAME passes exactly NAME"

out=$(pid1 --no-env -- sh "$BR_T/show.sh" 2>&1) || br_fail "run failed: $out"
echo "$out" | grep -qi '_proxy=' && br_fail "--no-env still set a proxy variable: $out"
br_pass "--no-env sets no proxy variable"

out=$(pid1 --env "A=B" -- true 2>&1) && br_fail "--env with '=' accepted"
br_pass "--env refuses a non-name: $out"
exit 0
