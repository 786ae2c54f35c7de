#!/bin/sh
# bridge-dns-ede: the bridge's DNS stub says why a name does not resolve.
# dig, run inside the sandbox against 127.0.0.1:53 with the real proxy,
# reads an Extended DNS Error (RFC 8914) "15 (Blocked)" on the NXDOMAIN for
# a name never allowed, over UDP and TCP, whose text names postern, the
# reason and what would allow the name; an allowed name still gets its
# 198.18.x.x answer; a query without EDNS gets no OPT record; a name that
# is no host name gets the stub's own words, never its bytes back; a long
# name's answer stays within 512 bytes, its text cut instead.
. "$top_srcdir/tests/integration/lib/world.sh"
command -v dig >/dev/null 2>&1 || skip "dig is not installed (bind9-dnsutils)"
command -v unshare >/dev/null 2>&1 || skip "unshare is not installed"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

S="$WORLD_DIR/sock"
D="$WORLD_DIR/dig"
mkdir -p "$S" "$D"
conf="$WORLD_DIR/postern.ini"
{
	admin_proxy_section
	cat <<-EOF2
		[session agent]
		listen = unix:$S/agent.sock
		allow_hosts = allowed.test private
	EOF2
} >"$conf"
proxy_start "$conf" || die "no proxy"
root=
[ "$(id -u)" = 0 ] && root=--allow-root
# 253 bytes, the longest name: 63.63.63.56 and "test".
l63=$(printf '%063d' 0 | tr 0 d)
long="$l63.$l63.$l63.$(printf '%056d' 0 | tr 0 d).test"
# dig reads \DDD in a name as that byte: ESC [ 3 1 m, a terminal's colour.
CMD='q="dig @127.0.0.1 +tries=1 +time=3"
	$q denied.test A >"$1/udp"
	$q +tcp denied.test A >"$1/tcp"
	$q +noedns denied.test A >"$1/noedns"
	$q allowed.test A >"$1/allowed"
	$q "\027[31mevil.test" A >"$1/hostile"
	$q +bufsize=512 "$2" A >"$1/long"'
unshare -n "${POSTERN_BRIDGE:-$top_builddir/postern-bridge}" $root --connect "$S/agent.sock" -- \
	sh -c "$CMD" sh "$D" "$long" 2>"$WORLD_DIR/br.err"

for f in udp hostile long; do
	diag "dig, $f: $(grep -E 'status:|EDE:|MSG SIZE' "$D/$f" | tr '\n' ' ')"
done
out=$(cat "$D/udp")
expect_match "status: NXDOMAIN" "$out" "UDP: a denied name is NXDOMAIN"
expect_match "^; EDE: 15 \(Blocked\): \(postern: refused denied\.test: host_not_allowed; to allow it, add to \[session agent\]: allow_hosts = denied\.test\)$" \
	"$out" "UDP: with EDE 15 (Blocked) naming postern, the reason and the rule"
out=$(cat "$D/tcp")
expect_match "status: NXDOMAIN" "$out" "TCP: NXDOMAIN"
expect_match "^; EDE: 15 \(Blocked\): \(postern: refused denied\.test: host_not_allowed; " "$out" \
	"TCP: the same EDE"
out=$(cat "$D/noedns")
expect_match "status: NXDOMAIN" "$out" "without EDNS: NXDOMAIN"
expect_no_match "OPT PSEUDOSECTION|EDE" "$out" "without EDNS: no OPT record, no EDE"
out=$(cat "$D/allowed")
expect_match "status: NOERROR" "$out" "an allowed name: NOERROR"
expect_match "^allowed\.test\.[[:space:]]+5[[:space:]]+IN[[:space:]]+A[[:space:]]+198\.1[89]\.[0-9]+\.[0-9]+$" \
	"$out" "an allowed name still gets its 198.18.x.x answer"
expect_match "OPT PSEUDOSECTION" "$out" "with an OPT record, as EDNS asks"
expect_no_match "EDE" "$out" "and no error"
out=$(cat "$D/hostile")
expect_match "^; EDE: 15 \(Blocked\): \(postern: refused: not a host name any rule can allow" \
	"$out" "a name that is no host name: the stub's own words"
expect_no_match "EDE:.*(evil|31m|\\\\027)" "$out" "and none of the query's bytes"
out=$(cat "$D/long")
expect_match "^; EDE: 15 \(Blocked\): \(postern: refused d+\.d+" "$out" "a long name: its EDE"
size=$(printf '%s\n' "$out" | sed -n 's/^;; MSG SIZE  rcvd: \([0-9]*\)$/\1/p')
expect_eq 512 "$size" "cut to fill 512 bytes exactly"
expect_match "status: NXDOMAIN" "$out" "and the answer whole"
expect_audit "the proxy still audits the refused name" event=decision decision=deny \
	host=denied.test reason=host_not_allowed method=DNS
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
