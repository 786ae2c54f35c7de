#!/bin/sh
# ca-tls.sh: the session CA of proxy/tls/ca.c judged by real TLS clients, on
# loopback only.  tests/integration/ca-files writes a CA for two hosts, the
# leaf it makes for the first, and two leaves signed with the CA key the
# way a thief would (one for a host outside the name constraints, one with
# an IP address).  openssl s_server presents the leaf; curl trusting only
# the CA must accept it for its host and refuse it for any other name, and
# openssl verify must refuse both forged leaves by the name constraints.
set -u
: "${top_builddir:=.}"
skip() { echo "SKIP: $*"; exit 77; }
n=0 nfail=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); nfail=$((nfail + 1)); echo "not ok $n - $*"; }
for c in openssl curl; do
	command -v "$c" >/dev/null 2>&1 || skip "$c is not installed"
done
files="$top_builddir/tests/integration/ca-files"
[ -x "$files" ] || skip "$files is not built"

T=$(mktemp -d /tmp/postern-ca-tls.XXXXXX) || exit 1
srv=
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$T"' EXIT
"$files" "$T" api.example.test git.example.test || { echo "FATAL: ca-files failed"; exit 1; }

# A free loopback port: try a few at random until s_server stays up.
port=
for try in 1 2 3 4 5 6 7 8; do
	p=$(( 20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 40000 ))
	openssl s_server -accept "127.0.0.1:$p" -cert "$T/leaf.pem" \
		-key "$T/leaf.key" -www >"$T/s_server.log" 2>&1 &
	srv=$!
	i=0
	while [ $i -lt 50 ]; do
		if ! kill -0 "$srv" 2>/dev/null; then break; fi
		if grep -q '^ACCEPT' "$T/s_server.log"; then
			port=$p
			break
		fi
		sleep 0.1
		i=$((i + 1))
	done
	[ -n "$port" ] && break
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	srv=
done
[ -n "$port" ] || { cat "$T/s_server.log"; echo "FATAL: s_server did not start"; exit 1; }

get() { # get HOST [curl options]: curl's exit status, fetching from s_server
	h=$1
	shift
	curl -sS -o "$T/body" --max-time 10 --noproxy '*' "$@" \
		--resolve "$h:$port:127.0.0.1" "https://$h:$port/" 2>"$T/curl.err"
}

if get api.example.test --cacert "$T/ca.pem"; then
	ok "curl --cacert CA: the leaf for api.example.test is trusted"
else
	notok "curl --cacert CA refused api.example.test: $(cat "$T/curl.err")"
fi
if get git.example.test --cacert "$T/ca.pem"; then
	notok "curl accepted the api.example.test leaf for git.example.test"
else
	ok "the same leaf under another name: refused ($(head -n 1 "$T/curl.err"))"
fi
if get api.example.test --capath /nonexistent --cacert /etc/ssl/certs/ca-certificates.crt; then
	notok "the system roots alone trusted the session CA's leaf"
else
	ok "without the session CA: refused"
fi

out=$(openssl verify -CAfile "$T/ca.pem" -verify_hostname api.example.test "$T/leaf.pem" 2>&1)
if [ $? = 0 ]; then ok "openssl verify: the leaf is good"; else notok "openssl verify leaf: $out"; fi
out=$(openssl verify -CAfile "$T/ca.pem" "$T/evil.pem" 2>&1)
rc=$?
if [ $rc != 0 ] && printf '%s' "$out" | grep -q "permitted subtree violation"; then
	ok "a leaf for evil.test signed with the CA key: permitted subtree violation"
else
	notok "openssl verify on the out-of-constraint leaf (rc $rc): $out"
fi
out=$(openssl verify -CAfile "$T/ca.pem" "$T/ip.pem" 2>&1)
rc=$?
if [ $rc != 0 ] && printf '%s' "$out" | grep -q "excluded subtree violation"; then
	ok "a leaf with IP:127.0.0.1 signed with the CA key: excluded subtree violation"
else
	notok "openssl verify on the IP leaf (rc $rc): $out"
fi
out=$(openssl x509 -in "$T/ca.pem" -noout -ext basicConstraints,keyUsage,nameConstraints 2>&1)
echo "$out" | sed 's/^/# /'
echo "1..$n"
[ $nfail = 0 ]
