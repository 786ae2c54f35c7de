#!/bin/sh
# secret-sigv4: [secret NAME] kind = aws-sigv4 with Debian's aws CLI
# (/usr/bin/aws) against a stand-in for AWS (lib/mock-aws.py, at
# sts.amazonaws.com and s3.amazonaws.com in the world's DNS) that checks
# every signature with the REAL keys through botocore, not postern's code:
#   - the client holds only placeholders (AWS_ACCESS_KEY_ID of AWS's shape,
#     AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, from the session info) and
#     reaches AWS only through the proxy (HTTPS_PROXY), trusting the
#     session CA through AWS_CA_BUNDLE;
#   - aws sts get-caller-identity (the body hashed by the proxy), aws s3 cp
#     of a 50 MB file up (multipart, UNSIGNED-PAYLOAD) and down (ranged
#     GETs), the same bytes back, and a presigned URL (aws s3 presign,
#     then curl through the proxy): each arrives re-signed with the real
#     key id and token, and the mock's check passes;
#   - a request signed with another key id (the real one, another
#     session's) or in signed chunks is refused, 403 secret_signature, and
#     never reaches the mock;
#   - the real secret key, key id and token are in no log and no audit line;
#   - through README's bwrap recipe (postern-bridge on the session's UNIX
#     socket) and inside `postern-sidecar run --secret aws`, the aws CLI
#     gets the placeholders in its environment and not the real keys, and
#     its call is re-signed.
. "$top_srcdir/tests/integration/sidecar-lib.sh"
AWS=/usr/bin/aws
[ -x "$AWS" ] || skip "Debian's aws CLI is not installed (apt-get install awscli)"
/usr/bin/python3 -c 'import botocore' 2>/dev/null || skip "python3-botocore is not installed"
AWS4=10.200.1.11
WORLD_DNS_EXTRA="sts.amazonaws.com=$AWS4 sts.us-east-1.amazonaws.com=$AWS4 s3.amazonaws.com=$AWS4
s3.us-east-1.amazonaws.com=$AWS4"
sc_world_up
ip -n "$WORLD_NS_UP" addr add "$AWS4/24" dev veth-px || die "cannot add $AWS4"
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

REAL_ID="AKIAREAL$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n' | tr a-f A-F)"
REAL_SECRET="RealSecret/$(od -An -N14 -tx1 /dev/urandom | tr -d ' \n')+k"
REAL_TOKEN="RealToken$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')"
export PX_AWS_ID="$REAL_ID" PX_AWS_SECRET="$REAL_SECRET" PX_AWS_TOKEN="$REAL_TOKEN"

MOCK_LOG="$WORLD_DIR/mock.log"
: >"$MOCK_LOG"
# Outside /tmp, /var/tmp and /run (the sandboxes' fresh ones), readable by
# uid 1000: the CLI's home and the session's socket for the bwrap recipe.
HOMEDIR=$(mktemp -d /var/lib/postern-aws.XXXXXX) || die "mktemp"
chmod 755 "$HOMEDIR"
world_cleanup_hook() {
	[ -n "${MOCK_PID:-}" ] && kill "$MOCK_PID" 2>/dev/null
	rm -rf "$HOMEDIR"
}
MOCK_PID=$(world__spawn "$WORLD_DIR/mock.out" ip netns exec "$WORLD_NS_UP" \
	/usr/bin/python3 "$top_srcdir/tests/integration/lib/mock-aws.py" \
	"$AWS4" 443 "$WORLD_CERT" "$WORLD_KEY" "$MOCK_LOG" "$WORLD_DIR/mock.ready" \
	"$REAL_ID" "$REAL_SECRET" "$REAL_TOKEN")
i=0
while [ ! -e "$WORLD_DIR/mock.ready" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
[ -e "$WORLD_DIR/mock.ready" ] || die "the mock did not start: $(cat "$WORLD_DIR/mock.out")"

state="$WORLD_DIR/state"
mkdir -p "$state" && chmod 700 "$state"
conf="$WORLD_DIR/postern.ini"
{
	mkdir -p "$HOMEDIR/s1"
	admin_proxy_section "upstream_ca_file = $WORLD_CA" "state_dir = $state" \
		"listen = unix:$HOMEDIR/s1/proxy.sock mode=666"
	cat <<-EOF
		[defaults]
		allow_hosts = *.amazonaws.com private
		secrets = aws
		[secret aws]
		kind = aws-sigv4
		from_env = PX_AWS_SECRET
		access_key_id_env = PX_AWS_ID
		session_token_env = PX_AWS_TOKEN
		[session other]
		listen = tcp:127.0.0.1:3129
		secrets = aws
	EOF
} >"$conf"
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
CA="$state/ca/default.pem"
[ -s "$CA" ] || die "no session CA"

sess=$(in_px curl -sS --max-time 5 http://127.0.0.1:3128/.well-known/postern/session)
PH_ID=$(printf '%s\n' "$sess" | sed -n 's/^env AWS_ACCESS_KEY_ID //p')
PH_SECRET=$(printf '%s\n' "$sess" | sed -n 's/^env AWS_SECRET_ACCESS_KEY //p')
PH_TOKEN=$(printf '%s\n' "$sess" | sed -n 's/^env AWS_SESSION_TOKEN //p')
OTHER_ID=$(in_px curl -sS --max-time 5 http://127.0.0.1:3129/.well-known/postern/session |
	sed -n 's/^env AWS_ACCESS_KEY_ID //p')
expect_match '^AKIA[A-Z0-9]{16}$' "$PH_ID" "the session info gives AWS_ACCESS_KEY_ID of AWS's shape"
expect_match '^[A-Za-z0-9+/]{40}$' "$PH_SECRET" "and AWS_SECRET_ACCESS_KEY, 40 characters"
expect_match '^FwoGZXIvYXdzE' "$PH_TOKEN" "and AWS_SESSION_TOKEN"
expect_ne "$REAL_SECRET" "$PH_SECRET" "the secret key placeholder is not the real key"
expect_ne "$PH_ID" "$OTHER_ID" "another session has another key id"
expect_no_match "$REAL_ID|$REAL_TOKEN|$REAL_SECRET" "$sess" "the session info holds nothing real"

mkdir -p "$HOMEDIR/.aws"
cat >"$HOMEDIR/.aws/config" <<-EOF
	[default]
	region = us-east-1
	s3 =
	    addressing_style = path
EOF
# awsx CMD...: the aws CLI in px, holding the placeholders only.
awsx() {
	in_px env -i PATH=/usr/bin:/bin HOME="$HOMEDIR" LANG=C.UTF-8 AWS_CA_BUNDLE="$CA" \
		HTTPS_PROXY=http://127.0.0.1:3128 AWS_ACCESS_KEY_ID="$PH_ID" \
		AWS_SECRET_ACCESS_KEY="$PH_SECRET" AWS_SESSION_TOKEN="$PH_TOKEN" AWS_EC2_METADATA_DISABLED=true \
		"$AWS" "$@"
}
mock_count() { grep -c "$1" "$MOCK_LOG"; }

# 1. STS: no x-amz-content-sha256, the body is hashed by the proxy.
out=$(awsx sts get-caller-identity --output text 2>"$WORLD_DIR/aws.err")
expect_eq 0 $? "aws sts get-caller-identity exits 0 ($(head -c 300 "$WORLD_DIR/aws.err"))"
expect_match "arn:aws:iam::123456789012:user/postern-mock" "$out" "and prints the mock's identity"
expect_match '"service": "sts", "form": "header", "verdict": "ok", "key_id": "'"$REAL_ID"'", "token": "'"$REAL_TOKEN"'"' \
	"$(cat "$MOCK_LOG")" "the mock saw the real key id and token and a good signature"
expect_audit "the audit line names the secret that signed it" event=request host~^sts \
	method=POST secret=aws decision=allow status=200

# 2. S3: a 50 MB object up (multipart) and down (ranged GETs).
head -c 52428800 /dev/urandom >"$WORLD_DIR/big.bin"
t0=$(date +%s)
awsx s3 cp "$WORLD_DIR/big.bin" s3://bucket/big.bin >"$WORLD_DIR/up.out" 2>&1
rc=$?
t1=$(date +%s)
expect_eq 0 $rc "aws s3 cp of 50 MB up exits 0 ($(tail -c 300 "$WORLD_DIR/up.out"))"
diag "50 MB up in $((t1 - t0)) s"
expect_match '"method": "POST", "path": "/bucket/big.bin"' "$(cat "$MOCK_LOG")" "it was a multipart upload"
parts=$(grep '"method": "PUT", "path": "/bucket/big.bin"' "$MOCK_LOG" | grep -c '"verdict": "ok"')
expect_match '^([2-9]|[1-9][0-9])$' "$parts" "its $parts parts arrived, each re-signed"
awsx s3 cp s3://bucket/big.bin "$WORLD_DIR/back.bin" >"$WORLD_DIR/down.out" 2>&1
rc=$?
t2=$(date +%s)
expect_eq 0 $rc "aws s3 cp of 50 MB down exits 0 ($(tail -c 300 "$WORLD_DIR/down.out"))"
diag "50 MB down in $((t2 - t1)) s"
expect_eq "$(sha256sum <"$WORLD_DIR/big.bin")" "$(sha256sum <"$WORLD_DIR/back.bin")" "the same bytes came back"
expect_eq 0 "$(grep -vc '"verdict": "ok"' "$MOCK_LOG")" "every request the mock saw so far was signed with the real key"

# A response that carries the real session token back is masked.
out=$(awsx s3 cp s3://bucket/echo-token - 2>"$WORLD_DIR/aws.err")
expect_eq 0 $? "aws s3 cp of an object that echoes the token exits 0 ($(head -c 300 "$WORLD_DIR/aws.err"))"
expect_no_match "$REAL_TOKEN" "$out" "the real token it echoed does not reach the client"
expect_match '^\*{20,}$' "$out" "it is overwritten with '*'"

# 3. A presigned URL, then curl through the proxy.
url=$(awsx s3 presign s3://bucket/big.bin --expires-in 600 2>"$WORLD_DIR/aws.err")
expect_match "^https://s3(\.us-east-1)?\.amazonaws\.com/bucket/big\.bin\?.*X-Amz-Credential=$PH_ID" "$url" \
	"aws s3 presign signs with the placeholder key id"
before=$(mock_count '"form": "query", "verdict": "ok"')
in_px curl -sS --max-time 60 -x http://127.0.0.1:3128 --cacert "$CA" -o "$WORLD_DIR/pre.bin" "$url"
expect_eq "$(sha256sum <"$WORLD_DIR/big.bin")" "$(sha256sum <"$WORLD_DIR/pre.bin")" \
	"the presigned URL fetched through the proxy gets the object"
expect_eq $((before + 1)) "$(mock_count '"form": "query", "verdict": "ok"')" \
	"the mock saw the query form re-signed with the real key"

# A tunnel to a host the secret signs for is not offered h2: its
# requests are re-signed on the HTTP/1.1 path.
v=$(in_px curl -sS --max-time 10 --http2 -x http://127.0.0.1:3128 --cacert "$CA" -o /dev/null \
	-w '%{http_version}' "$url")
expect_eq "1.1" "$v" "curl --http2 to it speaks HTTP/1.1"

# 4. Refusals: another key id never reaches the mock.
n0=$(wc -l <"$MOCK_LOG")
# sign_with KEYID: a request to STS signed (by botocore) with KEYID.
sign_with() {
	/usr/bin/python3 - "$1" "$PH_SECRET" <<-'PY'
		import sys
		from botocore.auth import SigV4Auth
		from botocore.awsrequest import AWSRequest
		from botocore.credentials import Credentials
		r = AWSRequest(method="POST", url="https://sts.amazonaws.com/",
		               data=b"Action=GetCallerIdentity&Version=2011-06-15",
		               headers={"Content-Type": "application/x-www-form-urlencoded"})
		SigV4Auth(Credentials(sys.argv[1], sys.argv[2]), "sts", "us-east-1").add_auth(r)
		print(r.headers["Authorization"])
		print(r.headers["X-Amz-Date"])
	PY
}
for who in real other; do
	if [ $who = real ]; then kid=$REAL_ID; else kid=$OTHER_ID; fi
	s=$(sign_with "$kid")
	auth=$(printf '%s\n' "$s" | sed -n 1p)
	d=$(printf '%s\n' "$s" | sed -n 2p)
	body=$(in_px curl -sS --max-time 10 -x http://127.0.0.1:3128 --cacert "$CA" -D "$WORLD_DIR/h.txt" \
		-H "Authorization: $auth" -H "X-Amz-Date: $d" -H "Content-Type: application/x-www-form-urlencoded" \
		--data 'Action=GetCallerIdentity&Version=2011-06-15' https://sts.amazonaws.com/)
	expect_match "^HTTP/1.1 403" "$(grep '^HTTP/1.1 [0-9]' "$WORLD_DIR/h.txt" | tail -1)" \
		"signed with the $who key id: 403"
	expect_match "X-Postern-Reason: secret_signature" "$(cat "$WORLD_DIR/h.txt")" "  reason secret_signature"
	expect_match "not this session's placeholder" "$body" "  the body says why"
done
# The signed chunked form cannot be re-signed here: refused, saying so.
s=$(sign_with "$PH_ID")
body=$(in_px curl -sS --max-time 10 -x http://127.0.0.1:3128 --cacert "$CA" -D "$WORLD_DIR/h.txt" -X PUT \
	-H "Authorization: $(printf '%s\n' "$s" | sed -n 1p)" -H "X-Amz-Date: $(printf '%s\n' "$s" | sed -n 2p)" \
	-H "x-amz-content-sha256: STREAMING-AWS4-HMAC-SHA256-PAYLOAD" --data 'x' https://s3.amazonaws.com/bucket/c)
expect_match "^HTTP/1.1 403" "$(grep '^HTTP/1.1 [0-9]' "$WORLD_DIR/h.txt" | tail -1)" \
	"the signed chunked form: 403"
expect_match "signed chunks" "$body" "  saying postern does not re-sign chunks"
expect_eq "$n0" "$(wc -l <"$MOCK_LOG")" "no refused request reached the mock"
expect_audit "a refusal is audited with its reason" event=decision host=sts.amazonaws.com \
	decision=deny reason=secret_signature

# A body without x-amz-content-sha256 that comes after its head is held,
# hashed and the request re-signed; one over 1 MiB is refused, 413.
# slow_sts BODYLEN: POST to STS signed with the placeholders (botocore),
# the head first, the body 0.5 s later; prints the status.
slow_sts() {
	in_px /usr/bin/python3 - "$PH_ID" "$PH_SECRET" "$PH_TOKEN" "$CA" "$1" <<-'PY'
		import socket, ssl, sys, time
		from botocore.auth import SigV4Auth
		from botocore.awsrequest import AWSRequest
		from botocore.credentials import Credentials
		kid, sk, tok, ca, n = sys.argv[1:6]
		body = b"Action=GetCallerIdentity&Version=2011-06-15"
		body += b"&Pad=" + b"x" * (int(n) - len(body) - 5) if int(n) > len(body) else b""
		r = AWSRequest(method="POST", url="https://sts.amazonaws.com/", data=body,
		               headers={"Content-Type": "application/x-www-form-urlencoded"})
		SigV4Auth(Credentials(kid, sk, tok), "sts", "us-east-1").add_auth(r)
		s = socket.create_connection(("127.0.0.1", 3128), timeout=20)
		s.sendall(b"CONNECT sts.amazonaws.com:443 HTTP/1.1\r\nHost: sts.amazonaws.com:443\r\n\r\n")
		s.recv(4096)
		t = ssl.create_default_context(cafile=ca).wrap_socket(s, server_hostname="sts.amazonaws.com")
		head = "POST / HTTP/1.1\r\nHost: sts.amazonaws.com\r\nContent-Length: %d\r\n" % len(body)
		head += "".join("%s: %s\r\n" % (k, v) for k, v in r.headers.items()) + "\r\n"
		t.sendall(head.encode())
		time.sleep(0.5)
		try:
		    t.sendall(body)
		except OSError:
		    pass
		print(t.recv(4096).split(b"\r\n")[0].decode())
	PY
}
n0=$(mock_count '"service": "sts", "form": "header", "verdict": "ok"')
expect_match "^HTTP/1.1 200" "$(slow_sts 43)" "a body sent after its head is held, hashed and re-signed: 200"
expect_eq $((n0 + 1)) "$(mock_count '"service": "sts", "form": "header", "verdict": "ok"')" \
	"  the mock found the signature good"
expect_match "^HTTP/1.1 413" "$(slow_sts 1100000)" "a body over 1 MiB to hash: 413"

# 5. The real keys are in no log: the proxy's output and audit log.
for f in "$PROXY_LOG" "$WORLD_DIR/proxy.out" "$WORLD_DIR"/proxy*.log; do
	[ -f "$f" ] || continue
	if grep -qF -e "$REAL_SECRET" -e "$REAL_TOKEN" -e "$REAL_ID" "$f"; then
		fail "a real key is in $f"
	else
		ok "no real key in $(basename "$f")"
	fi
done

# 6. The bwrap recipe of README.md: the aws CLI in a sandbox with no
# network but the session's socket, through postern-bridge, which gives it
# the placeholders, the session CA and HTTPS_PROXY.
. "$top_srcdir/tests/integration/lib/recipe.sh"
if recipe_ok; then
	n0=$(wc -l <"$MOCK_LOG")
	RECIPE_DIR=$HOMEDIR
	cp "$top_builddir/postern-bridge" "$HOMEDIR/postern-bridge"
	out=$(recipe_run env HOME="$HOMEDIR" sh -c \
		'env | grep "^AWS_\|^PX_"; /usr/bin/aws sts get-caller-identity --output text' \
		2>"$WORLD_DIR/bwrap.err")
	rc=$?
	expect_eq 0 $rc "bwrap recipe: aws sts get-caller-identity exits 0 ($(tail -c 400 "$WORLD_DIR/bwrap.err"))"
	expect_match "user/postern-mock" "$out" "  and prints the mock's identity"
	expect_match "^AWS_ACCESS_KEY_ID=$PH_ID$" "$out" "  with the session's placeholder key id"
	printf '%s\n' "$out" | grep -qF -e "$REAL_SECRET" -e "$REAL_TOKEN" -e "$REAL_ID" &&
		fail "  a real key is in CMD's environment" || ok "  no real key in CMD's environment"
	expect_eq $((n0 + 1)) "$(wc -l <"$MOCK_LOG")" "  the mock saw one request"
	expect_eq 0 "$(grep -vc '"verdict": "ok"' "$MOCK_LOG")" "  re-signed with the real key"
else
	diag "bwrap, postern-bridge or user namespaces for uid 1000 are missing: the bwrap recipe is not tried"
fi

# 7. Inside postern-sidecar run: the aws CLI holds the placeholders.
if [ -x "$top_builddir/postern-bridge" ]; then
	cp "$WORLD_CA" "$HOMEDIR/ca.pem"
	chmod -R a+rX "$HOMEDIR"
	cat >"$WORLD_DIR/sc.ini" <<-EOF
		[defaults]
		allow_hosts = *.amazonaws.com private
		[secret aws]
		kind = aws-sigv4
		from_env = PX_AWS_SECRET
		access_key_id_env = PX_AWS_ID
		session_token_env = PX_AWS_TOKEN
	EOF
	n0=$(wc -l <"$MOCK_LOG")
	out=$(in_px env -i PATH=/usr/bin:/bin HOME="$HOMEDIR" LANG=C.UTF-8 SSL_CERT_FILE="$HOMEDIR/ca.pem" \
		PX_AWS_ID="$REAL_ID" PX_AWS_SECRET="$REAL_SECRET" PX_AWS_TOKEN="$REAL_TOKEN" \
		"$SIDECAR" run --config "$WORLD_DIR/sc.ini" --secret aws -- sh -c \
		'env | grep "^AWS_\|^PX_"; /usr/bin/aws sts get-caller-identity --output text' \
		</dev/null 2>"$WORLD_DIR/sc.err")
	rc=$?
	expect_eq 0 $rc "aws sts get-caller-identity inside postern-sidecar run exits 0 ($(tail -c 400 "$WORLD_DIR/sc.err"))"
	expect_match "user/postern-mock" "$out" "  and prints the mock's identity"
	expect_match "^AWS_ACCESS_KEY_ID=AKIA[A-Z0-9]{16}$" "$out" "  CMD's AWS_ACCESS_KEY_ID is a placeholder"
	expect_match "^AWS_SECRET_ACCESS_KEY=" "$out" "  CMD has AWS_SECRET_ACCESS_KEY"
	expect_match "^AWS_SESSION_TOKEN=FwoGZXIvYXdzE" "$out" "  CMD's AWS_SESSION_TOKEN is a placeholder"
	printf '%s\n' "$out" | grep -qF -e "$REAL_SECRET" -e "$REAL_TOKEN" -e "$REAL_ID" &&
		fail "  a real key is in CMD's environment" || ok "  no real key in CMD's environment"
	expect_eq $((n0 + 1)) "$(wc -l <"$MOCK_LOG")" "  the mock saw one request"
	expect_eq 0 "$(grep -vc '"verdict": "ok"' "$MOCK_LOG")" "  re-signed with the real key"
else
	diag "postern-bridge is not built: the sidecar run is not tried"
fi
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
