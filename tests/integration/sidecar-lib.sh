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
