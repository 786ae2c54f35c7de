#!/bin/sh
# audit-chain: the audit log proves itself.  A real proxy with an
# audit_signing_key serves traffic, its log is rotated twice (mv and
# SIGUSR1, as logrotate does) and the proxy restarted; `postern-proxy audit
# verify` accepts the three files as written, then names, with its exit
# status, each way to tamper with them: a byte edited, a line deleted, two
# lines swapped, the file cut, a rotated file dropped, the chain rebuilt
# and re-signed with another key.  A proxy killed without its last
# checkpoint leaves an unsigned tail, a warning.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

P="$top_builddir/postern-proxy"
KEY="$WORLD_DIR/audit.key"
L="$PROXY_LOG"
conf=$(proxy_conf "audit_signing_key = $KEY" "audit_checkpoint = 1h" \
	"[defaults]" "allow_hosts = allowed.test private")
proxy_start "$conf" || die "no proxy"

traffic() { # TAG: a refusal and an allowed request
	expect_eq 403 "$(curl_status -x http://127.0.0.1:3128 "https://$1.test/")" "$1: refused"
	out=$(curl_px -x http://127.0.0.1:3128 "https://allowed.test/$1")
	expect_match "^sni=allowed\.test$" "$out" "$1: allowed"
	expect_audit "$1: its line is in the log" event=decision host="$1.test"
}
reopened() { # N: 1 once the proxy said it reopened its log N times
	[ "$(grep -c 'audit log reopened' "$WORLD_DIR/proxy.out")" -ge "$1" ] && echo 1
}
rotate() { # N: the log renamed (the older ones shifted), SIGUSR1, the N-th reopen
	[ -f "$L.1" ] && mv "$L.1" "$L.2"
	mv "$L" "$L.1"
	kill -USR1 "$WORLD_PROXY_PID"
	world__poll reopened "$1" || fail "the proxy did not reopen its log"
}

traffic one
expect_eq 600 "$(stat -c %a "$KEY")" "the signing key is made on first start, mode 0600"
# The chain's keys are read at start: a reload that changes one says so.
cp "$conf" "$conf.kept"
sed -i 's/^audit_checkpoint = 1h$/audit_checkpoint = 2h/' "$conf"
proxy_reload
expect_warn() { grep -c "a changed audit_signing_key, audit_checkpoint or audit_format takes effect at the next restart" "$WORLD_DIR/proxy.out"; }
world__poll expect_warn && ok "a reload that changes audit_checkpoint says it waits for a restart" ||
	fail "a reload that changes audit_checkpoint says it waits for a restart"
cp "$conf.kept" "$conf"
proxy_reload
rotate 1
traffic two
rotate 2
traffic three
proxy_stop >/dev/null
expect_eq 0 $? "the proxy stops cleanly"
proxy_start "$conf" || die "no proxy after the restart"
traffic four
proxy_stop >/dev/null

expect_match '"event":"checkpoint"' "$(tail -n 1 "$L.2")" "a rotated file ends with a checkpoint"
first1=$(head -n 1 "$L.1")
expect_match '"event":"audit_open","chain":"continue","seq":1,' "$first1" \
	"the next file's first line continues the chain"
last2=$(tail -n 1 "$L.2" | tr -d '\n' | sha256sum | cut -d' ' -f1)
expect_match "\"prev\":\"$last2\"" "$first1" "... naming the hash of the previous file's last line"
expect_eq 1 "$(grep '"event":"audit_open","chain":"continue"' "$L" | grep -vc '"seq":1,')" \
	"the restart continues the chain in the same file"
expect_eq 0 "$(cat "$L.1" "$L" | grep -c '"chain":"new"')" "one chain across two rotations and a restart"
expect_match "^$(grep -c . "$L")\$" "$(tail -n 1 "$L" | sed -n 's/.*"seq":\([0-9]*\),.*/\1/p')" \
	"the last line's seq counts the lines of its file"

"$P" audit pubkey -c "$conf" >"$WORLD_DIR/pub.pem"
expect_eq 0 $? "audit pubkey prints the public key"
expect_match "BEGIN PUBLIC KEY" "$(cat "$WORLD_DIR/pub.pem")" "... in PEM"

# verify NAME FILE...: audit verify's output for the files (in the
# tampering copy T) and its status in $rc.
T="$WORLD_DIR/t"
fresh() { rm -rf "$T"; mkdir "$T"; cp "$L.2" "$T/a.2"; cp "$L.1" "$T/a.1"; cp "$L" "$T/a"; }
verify() {
	out=$("$P" audit verify --pubkey "$WORLD_DIR/pub.pem" "$@" 2>&1)
	rc=$?
	diag "$out"
}

fresh
verify "$T/a.2" "$T/a.1" "$T/a"
expect_eq 0 "$rc" "the untouched set verifies (exit 0)"
expect_match "^3 file\\(s\\), .* checkpoint\\(s\\), key [0-9a-f]*: ok$" "$out" "... and says so"
verify -c "$conf" "$T/a.2" "$T/a.1" "$T/a"
expect_eq 0 "$rc" "... with the key from the config too"

# A byte edited: the next line's prev no longer matches.
fresh
sed -i '2s/two\.test/twX.test/' "$T/a.1"
verify "$T/a.2" "$T/a.1" "$T/a"
expect_eq 3 "$rc" "a byte edited: exit 3"
expect_match "a\.1:3: prev is not the hash of the line before" "$out" "... named at the next line"

# A line deleted: a gap in seq.
fresh
sed -i '3d' "$T/a.1"
verify "$T/a.2" "$T/a.1" "$T/a"
expect_eq 3 "$rc" "a line deleted: exit 3"
expect_match "a\.1:3: seq 4 where 3 was expected: 1 line\\(s\\) removed" "$out" "... named where it was"

# Two lines swapped.
fresh
sed -i '2{h;d};3{G}' "$T/a.1"
verify "$T/a.2" "$T/a.1" "$T/a"
expect_eq 3 "$rc" "two lines swapped: exit 3"
expect_match "a\.1:2: seq 3 where 2 was expected" "$out" "... the first one named"
expect_match "a\.1:3: seq 2 where 4 was expected: lines reordered" "$out" "... and the second"

# Cut in a line, then cut at a line's end (the last checkpoint gone).
fresh
truncate -s -20 "$T/a"
verify "$T/a.2" "$T/a.1" "$T/a"
expect_eq 3 "$rc" "the last file cut in a line: exit 3"
expect_match "a:[0-9]*: the last line is cut" "$out" "... said so"
fresh
n=$(grep -c . "$T/a")
head -n $((n - 1)) "$L" >"$T/a"
verify "$T/a.2" "$T/a.1" "$T/a"
expect_eq 1 "$rc" "the last checkpoint cut off: exit 1, a warning"
expect_match "a:[0-9]*: warning: this line and the [0-9]* after it come after the last checkpoint" \
	"$out" "... the unsigned tail named"
# A rotated file cut: the next file no longer follows it.
fresh
n=$(grep -c . "$T/a.2")
head -n $((n - 1)) "$L.2" >"$T/a.2"
verify "$T/a.2" "$T/a.1" "$T/a"
expect_eq 4 "$rc" "a rotated file cut: exit 4"

# A rotated file dropped, or the files out of order.
fresh
verify "$T/a.2" "$T/a"
expect_eq 4 "$rc" "a rotated file dropped: exit 4"
expect_match "a:1: the file does not follow the file before it" "$out" "... named at the next file's first line"
verify "$T/a.1" "$T/a.2" "$T/a"
expect_eq 4 "$rc" "the files out of order: exit 4"

# The whole chain rebuilt after an edit and re-signed with another key.
openssl genpkey -algorithm ed25519 -out "$WORLD_DIR/other.key" 2>/dev/null || die "openssl genpkey"
openssl pkey -in "$WORLD_DIR/other.key" -pubout -out "$WORLD_DIR/other.pub" 2>/dev/null
fresh
sed -i '2s/two\.test/twX.test/' "$T/a.1"
"$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/auditforge.py" "$WORLD_DIR/other.key" \
	"$T/a.2" "$T/a.1" "$T/a" || die "auditforge.py"
out=$("$P" audit verify --pubkey "$WORLD_DIR/other.pub" "$T/a.2" "$T/a.1" "$T/a" 2>&1)
expect_eq 0 $? "the forged set is a whole chain under the other key (the forger is sound)"
verify "$T/a.2" "$T/a.1" "$T/a"
expect_eq 5 "$rc" "re-signed with another key: exit 5"
expect_match "a\.2:[0-9]*: checkpoint signed by key [0-9a-f]*, not by the key given" "$out" \
	"... its first checkpoint named"
fresh
sed -i '2s/two\.test/twX.test/' "$T/a.1"
"$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/auditforge.py" "$WORLD_DIR/other.key" \
	--keep-keyid "$T/a.2" "$T/a.1" "$T/a" || die "auditforge.py"
verify "$T/a.2" "$T/a.1" "$T/a"
expect_eq 5 "$rc" "re-signed with another key under the right key's id: exit 5"
expect_match "checkpoint signature does not verify" "$out" "... a bad signature"

# Hostile bytes: a line that is not a chained line at all.
fresh
printf '{"time":"x","seq":1\001\n' >>"$T/a"
verify "$T/a.2" "$T/a.1" "$T/a"
expect_eq 3 "$rc" "a line of garbage appended: exit 3"
expect_match "not a chained audit line" "$out" "... named"

# A proxy killed (no last checkpoint), then started again: a new chain
# starts, the lines before it are an unsigned tail.
proxy_start "$conf" || die "no proxy"
traffic five
kill -KILL "$WORLD_PROXY_PID"
wait "$WORLD_PROXY_PID" 2>/dev/null
WORLD_PROXY_PID=
proxy_start "$conf" || die "no proxy after the kill"
traffic six
proxy_stop >/dev/null
expect_eq 1 "$(grep -c '"chain":"new"' "$L")" "after a kill the proxy starts a new chain"
verify "$L.2" "$L.1" "$L"
expect_eq 1 "$rc" "the lines before the kill are an unsigned tail: exit 1"
expect_match "warning: a new chain starts here" "$out" "... named where the new chain starts"

# Two workers under load (auditorder.py: 200 tunnels and 200 refusals
# from 8 threads): each line is chained where it reaches the file, so
# the chain is the file's order and verifies.
cat >"$WORLD_DIR/load.ini" <<EOF2
[proxy]
listen = tcp:127.0.0.1:3128
log = $WORLD_DIR/load.log
dns_servers = $WORLD_DNS
workers = 2
audit_signing_key = $KEY
[defaults]
allow_hosts = 127.0.0.1:7108
EOF2
proxy_start "$WORLD_DIR/load.ini" || die "no proxy with two workers"
out=$(in_px "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/auditorder.py" 3128 7108 \
	"$WORLD_DIR/load.log" 200 14000)
expect_match "^tunnels 200 refused 200 missing 0 errors 0$" "$out" "two workers serve the load"
proxy_stop >/dev/null
verify "$WORLD_DIR/load.log"
expect_eq 0 "$rc" "two workers' lines under load verify"
expect_match "^1 file\\(s\\), (8[0-9][0-9]|9[0-9][0-9]) line\\(s\\)" "$out" "... all of them"

# The key is refused when others may read it.
chmod 0644 "$KEY"
out=$(in_px timeout 5 "$P" -c "$conf" 2>&1)
expect_eq 1 $? "a signing key others may read is refused"
expect_match "audit_signing_key .*mode 644" "$out" "... saying why"
