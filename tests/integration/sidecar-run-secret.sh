#!/bin/sh
# sidecar-run-secret: `postern-sidecar run --secret ANTHROPIC_API_KEY --
# CMD` gives CMD a placeholder in ANTHROPIC_API_KEY (the vendor's prefix,
# then random characters, nothing else of the key) and
# the session CA in its certificate variables, and the real key to no
# process CMD can look at: not in its environment, not in any
# /proc/PID/environ or cmdline it can read, not in the bundle, not on the
# terminal.  A --secret no secret answers to, or given with --env too, is
# refused before anything runs.
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
MARK=$(od -An -N10 -tx1 /dev/urandom | tr -d ' \n')
KEY="sk-ant-api03-REAL${MARK}real-0123456789abcdefghij"

# The part of the key to look for comes base64-encoded, so that it is in
# no command line itself.
cat >"$T/cmd.sh" <<'EOF'
m=$(echo "$1" | base64 -d)
echo "key=$ANTHROPIC_API_KEY"
for v in SSL_CERT_FILE NODE_EXTRA_CA_CERTS REQUESTS_CA_BUNDLE CURL_CA_BUNDLE GIT_SSL_CAINFO \
    PIP_CERT CARGO_HTTP_CAINFO AWS_CA_BUNDLE; do
	eval "echo var $v=\${$v:-}"
done
echo "bundle_certs=$(grep -c 'BEGIN CERTIFICATE' "$SSL_CERT_FILE" 2>/dev/null)"
# The last certificate of the bundle: the session CA.
awk '/BEGIN CERTIFICATE/ { c = "" } { c = c $0 "\n" } END { printf "%s", c }' "$SSL_CERT_FILE" \
	>"${TMPDIR:-/tmp}/last.pem" 2>/dev/null
openssl x509 -in "${TMPDIR:-/tmp}/last.pem" -noout -ext nameConstraints 2>/dev/null |
	sed -n 's/^ *\(DNS:.*\)/nc=\1/p'
# Every environment and command line CMD can read.
for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do
	cat "$f" 2>/dev/null
done | tr '\0' '\n' >"${TMPDIR:-/tmp}/procs.txt"
echo "procs_lines=$(wc -l <"${TMPDIR:-/tmp}/procs.txt")"
echo "procs_real=$(grep -c "$m" "${TMPDIR:-/tmp}/procs.txt")"
echo "bundle_real=$(grep -c "$m" "$SSL_CERT_FILE")"
EOF

out=$(ANTHROPIC_API_KEY="$KEY" "$S" run --bridge "$B" --secret ANTHROPIC_API_KEY -- \
	sh -c "$(cat "$T/cmd.sh")" cmd "$(printf 'REAL%s' "$MARK" | base64)" 2>"$T/err")
rc=$?
check "$([ "$rc" = 0 ]; echo $?)" "the run succeeds (exit $rc: $(head -c 300 "$T/err"))"
ph=$(echo "$out" | sed -n 's/^key=//p')
check "$([ -n "$ph" ] && [ "$ph" != "$KEY" ]; echo $?)" "CMD's ANTHROPIC_API_KEY is not the real key ($ph)"
case $ph in sk-ant-api03-*) r=0 ;; *) r=1 ;; esac
check $r "the placeholder keeps the key's vendor prefix"
echo "$ph" | grep -Eqx 'sk-ant-api03-[A-Za-z0-9]{95}'
check $? "then 95 random letters and digits, not the key's length ${#KEY} nor its shape"
bundle=$(echo "$out" | sed -n 's/^var SSL_CERT_FILE=//p')
check "$([ -n "$bundle" ]; echo $?)" "SSL_CERT_FILE names a bundle"
for v in NODE_EXTRA_CA_CERTS REQUESTS_CA_BUNDLE CURL_CA_BUNDLE GIT_SSL_CAINFO PIP_CERT \
    CARGO_HTTP_CAINFO AWS_CA_BUNDLE; do
	echo "$out" | grep -qx "var $v=$bundle"
	check $? "$v names the same bundle"
done
nc=$(echo "$out" | sed -n 's/^nc=//p')
check "$([ "$nc" = "DNS:api.anthropic.com" ]; echo $?)" \
	"the bundle ends with the session CA, constrained to api.anthropic.com ($nc)"
certs=$(echo "$out" | sed -n 's/^bundle_certs=//p')
check "$([ "${certs:-0}" -gt 1 ]; echo $?)" "the bundle keeps the system roots ($certs certificates)"
check "$([ "$(echo "$out" | sed -n 's/^procs_lines=//p')" -gt 0 ]; echo $?)" \
	"CMD can read some /proc environments and command lines"
check "$([ "$(echo "$out" | sed -n 's/^procs_real=//p')" = 0 ]; echo $?)" \
	"none of them holds the real key"
check "$([ "$(echo "$out" | sed -n 's/^bundle_real=//p')" = 0 ]; echo $?)" "nor does the bundle"
grep -q "REAL$MARK" "$T/err"; check "$([ $? -ne 0 ]; echo $?)" "nor the terminal"

ANTHROPIC_API_KEY="$KEY" "$S" run --bridge "$B" --secret NO_SUCH_KEY -- true 2>"$T/err"
rc=$?
check "$([ "$rc" = 2 ]; echo $?)" "an unknown --secret is refused before anything runs (exit $rc)"
grep -q "\-\-secret NO_SUCH_KEY: no secret is named so or reads \$NO_SUCH_KEY (the built-in ones read ANTHROPIC_API_KEY" "$T/err"
check $? "and the refusal lists the variables the built-ins read: $(head -n 1 "$T/err")"

env -u ANTHROPIC_API_KEY "$S" run --bridge "$B" --secret ANTHROPIC_API_KEY -- true 2>"$T/err"
rc=$?
check "$([ "$rc" = 2 ]; echo $?)" "a --secret whose variable is not set is refused (exit $rc)"
grep -q "ANTHROPIC_API_KEY" "$T/err"; check $? "naming the variable: $(head -n 1 "$T/err")"

ANTHROPIC_API_KEY="$KEY" "$S" run --bridge "$B" --env ANTHROPIC_API_KEY --secret ANTHROPIC_API_KEY \
	-- true 2>"$T/err"
rc=$?
check "$([ "$rc" = 2 ]; echo $?)" "--env and --secret of one variable are refused (exit $rc)"
grep -q "would get the real value" "$T/err"; check $? "and say why"
grep -q "REAL$MARK" "$T/err"; check "$([ $? -ne 0 ]; echo $?)" "no refusal shows the key"

echo "1..$n"
[ "$bad" = 0 ]
