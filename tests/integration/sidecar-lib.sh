# sidecar-lib.sh: helpers shared by the sidecar-*.sh scenarios, on top of
# lib/world.sh.  Sourced, never run on its own.
. "$top_srcdir/tests/integration/lib/world.sh"

SIDECAR="${POSTERN_SIDECAR:-$top_builddir/postern-sidecar}"
# An ordinary uid for "the agent", and the proxy uid the rules let out.
AGENT_UID=1000
PROXY_UID=65532

# sc_world_up: world_up, plus default routes in px towards up, so that the
# lock-down has a real gateway to close (the world itself only has the
# connected /24 and /64).
sc_world_up() {
	[ -x "$SIDECAR" ] || skip "$SIDECAR is not built"
	command -v setpriv >/dev/null 2>&1 || skip "setpriv is not installed"
	world_up "$@"
	in_px ip route add default via "$WORLD_UP4" || die "v4 default route"
	in_px ip -6 route add default via "$WORLD_UP6" || die "v6 default route"
	cat >"$WORLD_DIR/conn.py" <<-'PY'
		# conn.py tcp|udp HOST PORT: print OK, or the errno name of the
		# failure (ENETUNREACH, ...).  udp sends one DNS query for
		# allowed.test and waits for the answer.
		import errno, socket, struct, sys
		proto, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
		fam = socket.AF_INET6 if ":" in host else socket.AF_INET
		try:
		    if proto == "tcp":
		        s = socket.socket(fam, socket.SOCK_STREAM)
		        s.settimeout(3)
		        s.connect((host, port))
		    else:
		        s = socket.socket(fam, socket.SOCK_DGRAM)
		        s.settimeout(3)
		        q = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
		        for label in b"allowed.test".split(b"."):
		            q += bytes([len(label)]) + label
		        q += b"\0" + struct.pack(">HH", 1, 1)
		        s.sendto(q, (host, port))
		        s.recv(512)
		    print("OK")
		except OSError as e:
		    print(errno.errorcode.get(e.errno, "E%s" % e.errno) if e.errno else "TIMEOUT")
	PY
}

# sc_claude_world MOCK ARG...: skip without a working Claude Code (CLAUDE);
# bring the world up with api.anthropic.com at API4, answered by
# tests/integration/lib/MOCK (ADDR PORT CERT KEY LOG READY ARG...), which
# logs to MOCK_LOG.  HOMEDIR, outside /tmp, /var/tmp, /run and /dev/shm
# (the jail's fresh ones), is a home for CMD (nobody, for a root caller)
# and holds the world's CA as ca.pem.
sc_claude_world() {
	_mock=$1
	shift
	CLAUDE=$(command -v claude) ||
		skip "Claude Code (claude) is not installed: contrib/install-deps.sh installs it from npm"
	"$CLAUDE" --version >/dev/null 2>&1 || skip "$CLAUDE does not run here"
	API4=10.200.1.9
	WORLD_DNS_EXTRA="api.anthropic.com=$API4"
	sc_world_up
	[ -x "$top_builddir/postern-bridge" ] || skip "postern-bridge is not built"
	ip -n "$WORLD_NS_UP" addr add "$API4/24" dev veth-px || die "cannot add $API4"
	HOMEDIR=$(mktemp -d /var/lib/postern-claude.XXXXXX) || die "mktemp"
	chmod 1777 "$HOMEDIR"
	cp "$WORLD_CA" "$HOMEDIR/ca.pem" && chmod 0644 "$HOMEDIR/ca.pem" || die "cannot copy the CA"
	world_cleanup_hook() {
		[ -n "${MOCK_PID:-}" ] && kill "$MOCK_PID" 2>/dev/null
		rm -rf "$HOMEDIR"
	}
	MOCK_LOG="$WORLD_DIR/mock.log"
	: >"$MOCK_LOG"
	MOCK_PID=$(world__spawn "$WORLD_DIR/mock.out" ip netns exec "$WORLD_NS_UP" \
		"$WORLD_PYTHON" "$top_srcdir/tests/integration/lib/$_mock" \
		"$API4" 443 "$WORLD_CERT" "$WORLD_KEY" "$MOCK_LOG" "$WORLD_DIR/mock.ready" "$@")
	_i=0
	while [ ! -e "$WORLD_DIR/mock.ready" ] && [ $_i -lt 100 ]; do sleep 0.05; _i=$((_i + 1)); done
	[ -e "$WORLD_DIR/mock.ready" ] || die "the mock API did not start: $(cat "$WORLD_DIR/mock.out")"
}

# as_uid UID CMD...: run CMD in px as UID with no groups and no
# capabilities at all (bounding set emptied), like a container under the
# "restricted" profile.
as_uid() {
	local u
	u=$1
	shift
	in_px setpriv --reuid "$u" --regid "$u" --clear-groups \
		--inh-caps=-all --bounding-set=-all --no-new-privs "$@"
}

# conn UID tcp|udp HOST PORT: what conn.py says as UID in px.
conn() {
	local u
	u=$1
	shift
	as_uid "$u" "$WORLD_PYTHON" "$WORLD_DIR/conn.py" "$@" 2>&1
}

# rule_count PRIORITY [-6]: how many rules px has at PRIORITY.
rule_count() {
	in_px ip ${2:-} rule show priority "$1" 2>/dev/null | grep -c .
}

# sc_escape_tools: write escape.py and capture.py into $WORLD_DIR.
#
#   escape.py NONCE IFNAME V4DST V6DST BCAST KIND...
#     tries to get a packet out of IFNAME by each KIND, with "NONCE KIND"
#     as payload where there is one; TCP SYNs leave from fixed source ports
#     (47001 v4, 47002 v6), group joins name 239.77.77.77 and ff05::7777.
#     Prints "KIND sent" or "KIND ERRNO" per attempt.
#   capture.py IFNAME OUT READY
#     captures every frame arriving on IFNAME and appends one line per
#     frame of interest to OUT: "nonce NONCE KIND", "tcp-syn SPORT",
#     "igmp HEX" or "mld HEX" (the report's body), "frame ETHERTYPE".
sc_escape_tools() {
	cat >"$WORLD_DIR/escape.py" <<-'PY'
		import errno, socket, struct, sys, time
		nonce, ifname, v4, v6, bcast = sys.argv[1:6]
		ifindex = socket.if_nametoindex(ifname)
		dev = ifname.encode()
		SOL_PACKET, PACKET_QDISC_BYPASS = 263, 20
		IP_UNICAST_IF, IPV6_UNICAST_IF = 50, 76
		def udp(kind, fam, dst, port, opts=(), scope=0):
		    s = socket.socket(fam, socket.SOCK_DGRAM)
		    for lvl, opt, val in opts:
		        s.setsockopt(lvl, opt, val)
		    addr = (dst, port) if fam == socket.AF_INET else (dst, port, 0, scope)
		    s.sendto(("%s %s" % (nonce, kind)).encode(), addr)
		def tcp(kind, fam, dst, sport):
		    s = socket.socket(fam, socket.SOCK_STREAM)
		    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
		    s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, dev)
		    s.bind(("0.0.0.0" if fam == socket.AF_INET else "::", sport))
		    s.settimeout(1)
		    try:
		        s.connect((dst, 80))
		        s.send(("%s %s" % (nonce, kind)).encode())
		    except socket.timeout:
		        pass
		def join(fam):
		    s = socket.socket(fam, socket.SOCK_DGRAM)
		    if fam == socket.AF_INET:
		        s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
		            struct.pack("=4s4si", socket.inet_aton("239.77.77.77"), b"\0" * 4, ifindex))
		    else:
		        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP,
		            socket.inet_pton(socket.AF_INET6, "ff05::7777") + struct.pack("=I", ifindex))
		    time.sleep(0.5)
		def packet(kind, bypass):
		    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
		    if bypass:
		        s.setsockopt(SOL_PACKET, PACKET_QDISC_BYPASS, 1)
		    s.bind((ifname, 0))
		    s.send(b"\xff" * 6 + b"\x02\0\0\0\0\x01\x88\xb5" + ("%s %s" % (nonce, kind)).encode() + b"\0" * 30)
		m4 = [(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, struct.pack("=4s4si", b"\0" * 4, b"\0" * 4, ifindex))]
		m6 = [(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, ifindex)]
		bind = [(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, dev)]
		brd = [(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)]
		A4, A6 = socket.AF_INET, socket.AF_INET6
		table = {
		    "tcp-bind4": lambda k: tcp(k, A4, v4, 47001),
		    "tcp-bind6": lambda k: tcp(k, A6, v6, 47002),
		    "udp-bind4": lambda k: udp(k, A4, v4, 9, bind),
		    "udp-bind6": lambda k: udp(k, A6, v6, 9, bind),
		    "udp-unicast-if4": lambda k: udp(k, A4, v4, 9, [(socket.IPPROTO_IP, IP_UNICAST_IF, struct.pack("!I", ifindex))]),
		    "udp-unicast-if6": lambda k: udp(k, A6, v6, 9, [(socket.IPPROTO_IPV6, IPV6_UNICAST_IF, struct.pack("!I", ifindex))]),
		    "udp4": lambda k: udp(k, A4, v4, 9),
		    "udp6": lambda k: udp(k, A6, v6, 9),
		    "bcast-directed": lambda k: udp(k, A4, bcast, 9, brd),
		    "bcast-limited": lambda k: udp(k, A4, "255.255.255.255", 9, brd + bind),
		    "mcast-224.0.0.251": lambda k: udp(k, A4, "224.0.0.251", 5353, m4),
		    "mcast-239.1.2.3": lambda k: udp(k, A4, "239.1.2.3", 5353, m4),
		    "mcast-ff02::1": lambda k: udp(k, A6, "ff02::1", 5353, m6, ifindex),
		    "mcast-ff0e::1234": lambda k: udp(k, A6, "ff0e::1234", 5353, m6, ifindex),
		    "join4": lambda k: join(A4),
		    "join6": lambda k: join(A6),
		    "packet": lambda k: packet(k, False),
		    "packet-bypass": lambda k: packet(k, True),
		}
		for kind in sys.argv[6:]:
		    try:
		        table[kind](kind)
		        print(kind, "sent")
		    except OSError as e:
		        print(kind, errno.errorcode.get(e.errno, str(e.errno)))
		    sys.stdout.flush()
	PY
	cat >"$WORLD_DIR/capture.py" <<-'PY'
		import re, socket, sys
		s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
		s.bind((sys.argv[1], 0))
		out = open(sys.argv[2], "a")
		open(sys.argv[3], "w").close()
		tag = re.compile(rb"(pn-[0-9a-z]+) ([a-z0-9.:-]+)")
		while True:
		    try:
		        f = s.recv(65535)
		    except OSError:
		        break  # the world is going away
		    et = int.from_bytes(f[12:14], "big")
		    p = f[14:]
		    lines = ["nonce %s %s" % (m.group(1).decode(), m.group(2).decode()) for m in tag.finditer(f)]
		    if et == 0x0800 and len(p) >= 20:
		        ihl = (p[0] & 15) * 4
		        if p[9] == 6 and len(p) >= ihl + 14 and p[ihl + 13] & 2:
		            lines.append("tcp-syn %d" % int.from_bytes(p[ihl:ihl + 2], "big"))
		        if p[9] == 2:
		            lines.append("igmp " + p[ihl:].hex())
		    elif et == 0x86dd and len(p) >= 40:
		        if p[6] == 6 and len(p) >= 54 and p[53] & 2:
		            lines.append("tcp-syn %d" % int.from_bytes(p[40:42], "big"))
		        if p[6] == 0:
		            lines.append("mld " + p[40:].hex())
		    elif et not in (0x0800, 0x86dd, 0x0806):
		        lines.append("frame %04x" % et)
		    for l in lines:
		        out.write(l + "\n")
		    out.flush()
	PY
}

# sc_capture_start: capture.py on up's end of the veth into
# $WORLD_DIR/far.txt, the far side of the pod's only interface.
sc_capture_start() {
	: >"$WORLD_DIR/far.txt"
	rm -f "$WORLD_DIR/cap.ready"
	in_up "$WORLD_PYTHON" "$WORLD_DIR/capture.py" veth-px "$WORLD_DIR/far.txt" \
		"$WORLD_DIR/cap.ready" &
	SC_CAPTURE_PID=$!
	i=0
	while [ ! -e "$WORLD_DIR/cap.ready" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	[ -e "$WORLD_DIR/cap.ready" ] || die "the far-side capture did not start"
}

# far_seen PATTERN: how many captured lines match PATTERN (extended regexp),
# after letting the last frames arrive.
far_seen() {
	sleep 0.3
	grep -cE "$1" "$WORLD_DIR/far.txt"
}
