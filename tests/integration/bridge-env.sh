#!/bin/sh
# bridge-env.sh: CMD's environment is built from the fixed list plus --env,
# never inherited wholesale: a fake API key in the bridge's environment does
# not reach CMD, not even through /proc/1/environ when the bridge is PID 1
# (the bridge wipes its own environment block, as read from outside, and CMD,
# with no capability, cannot read it at all); the proxy variables are set,
# NODE_USE_ENV_PROXY=1 beside them, the certificate-bundle paths pass, and
# --no-env leaves the proxy ones out.
. "$top_srcdir/tests/integration/lib-bridge.sh"
br_init
$BR_PIDNS true 2>/dev/null ||
	br_skip "cannot create a PID namespace with its own /proc here"
br_start_proxy "$BR_T/proxy.sock"
KEY=sk-ant-fake-postern-test-0123456789

cat > "$BR_T/show.sh" <<'EOF2'
echo "comm=$(cat /proc/1/comm)"
env | sort
echo ---
# CMD has no capability to read a non-dumpable bridge's environ.
if cat /proc/1/environ >/dev/null 2>&1; then
	echo "environ_readable=yes"
else
	echo "environ_readable=no"
fi
# With a directory: wait there, for the test to read the bridge from outside.
if [ -n "${1:-}" ]; then
	: > "$1/ready"
	while [ ! -e "$1/go" ]; do sleep 0.05; done
fi
EOF2

# The bridge as PID 1 of a new PID namespace, with its own /proc.
pid1() {
	env -i PATH="$PATH" HOME=/root LC_ALL=C TERM=dumb \
		POSTERN_TEST_API_KEY=$KEY ANTHROPIC_API_KEY=$KEY-2 \
		KEEPME=kept HTTP_PROXY=http://launcher.invalid:1 NODE_USE_ENV_PROXY=0 \
		SSL_CERT_FILE=/etc/pki/ca.pem SSL_CERT_DIR=/etc/pki NODE_EXTRA_CA_CERTS=/etc/pki/x.pem \
		REQUESTS_CA_BUNDLE=/etc/pki/r.pem CURL_CA_BUNDLE=/etc/pki/c.pem \
		GIT_SSL_CAINFO=/etc/pki/g.pem PIP_CERT=/etc/pki/p.pem \
		$BR_PIDNS "$BRIDGE" --connect "$BR_T/proxy.sock" $BR_ROOT "$@"
}

pid1 -- sh "$BR_T/show.sh" "$BR_T" > "$BR_T/pid1.out" 2>&1 &
runner=$!
BR_PIDS="$BR_PIDS $runner"
br_wait_file "$BR_T/ready" || br_fail "CMD did not start: $(cat "$BR_T/pid1.out")"
# The bridge's own environment block, read from outside (where the test
# may): the very bytes /proc/PID/environ shows, wiped.
bpid=$(pgrep -f "^$BRIDGE --connect $BR_T/proxy.sock")
environ=$(tr '\0' '\n' < "/proc/$bpid/environ" | grep -v '^$')
bytes=$(wc -c < "/proc/$bpid/environ")
: > "$BR_T/go"
wait $runner || br_fail "run failed: $(cat "$BR_T/pid1.out")"
out=$(cat "$BR_T/pid1.out")
echo "$out"
echo "bridge pid $bpid: environ_bytes=$bytes: $environ"
echo "$out" | grep -q '^comm=postern-bridge$' || br_fail "the bridge is not PID 1"
[ "${bytes:-0}" -gt 100 ] || br_fail "the bridge's environ was not readable, the test proves nothing"
[ -z "$environ" ] || br_fail "the bridge's environment block is not wiped: $environ"
echo "$out" | grep -q '^environ_readable=no$' || br_fail "CMD can read the bridge's environ"
case "$out" in
*"$KEY"*) br_fail "the fake API key reached CMD" ;;
esac
echo "$out" | grep -q '^KEEPME=' && br_fail "KEEPME leaked without --env"
for v in HTTP_PROXY HTTPS_PROXY http_proxy https_proxy; do
	echo "$out" | grep -qx "$v=http://127.0.0.1:3128" || br_fail "$v not set to the bridge"
done
for v in ALL_PROXY all_proxy; do
	echo "$out" | grep -qx "$v=socks5h://127.0.0.1:3128" || br_fail "$v not set to the bridge's SOCKS5"
done
for v in NO_PROXY no_proxy; do
	echo "$out" | grep -qx "$v=localhost,127.0.0.1,::1" || br_fail "$v not set"
done
echo "$out" | grep -qx 'NODE_USE_ENV_PROXY=1' || br_fail "NODE_USE_ENV_PROXY not set to 1"
echo "$out" | grep -qx "GIT_SSH_COMMAND=ssh -o ProxyCommand='$(readlink -f "$BRIDGE") connect --via 127.0.0.1:3128 %h %p'" ||
	br_fail "GIT_SSH_COMMAND does not use the bridge as ssh's ProxyCommand"
for v in SSL_CERT_FILE=/etc/pki/ca.pem SSL_CERT_DIR=/etc/pki NODE_EXTRA_CA_CERTS=/etc/pki/x.pem \
    REQUESTS_CA_BUNDLE=/etc/pki/r.pem CURL_CA_BUNDLE=/etc/pki/c.pem GIT_SSL_CAINFO=/etc/pki/g.pem \
    PIP_CERT=/etc/pki/p.pem; do
	echo "$out" | grep -qx "$v" || br_fail "certificate-bundle variable ${v%%=*} not kept"
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
echo "$out" | grep -q '^NODE_USE_ENV_PROXY=' && br_fail "--no-env still set NODE_USE_ENV_PROXY: $out"
echo "$out" | grep -q '^GIT_SSH_COMMAND=' && br_fail "--no-env still set GIT_SSH_COMMAND: $out"
br_pass "--no-env sets no proxy variable"

out=$(pid1 --env "A=B" -- true 2>&1) && br_fail "--env with '=' accepted"
br_pass "--env refuses a non-name: $out"
exit 0
