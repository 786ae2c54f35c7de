#!/bin/sh
# sidecar-run-bind.sh: postern-sidecar run --bind DIR, a work tree under
# /tmp (which run otherwise replaces with a fresh tmpfs), as root with
# --uid 1000:
#   - CMD sees DIR at its path, reads and writes a file in it, and the
#     change is in DIR on the host;
#   - a host socket listening in DIR (and one in a directory below) is
#     still covered: connect fails;
#   - --socket PATH under DIR lets that one through;
#   - --bind of /, or under /run, is refused before anything starts.
. "$top_srcdir/tests/integration/sidecar-lib.sh"
sc_world_up
[ -x "$(dirname "$SIDECAR")/postern-bridge" ] || skip "postern-bridge is not built"

WORK="$WORLD_DIR/work"
mkdir -p "$WORK/sub"
echo hello >"$WORK/data.txt"
chown -R $AGENT_UID:$AGENT_UID "$WORK"
SERVER_PID=
world_cleanup_hook() {
	[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null
}
cat >"$WORLD_DIR/server.py" <<-'PY'
	import os, socket, sys, threading
	def serve(s, name):
	    while True:
	        c, _ = s.accept()
	        c.sendall(b"hello " + name.encode() + b"\n")
	        c.close()
	for p in sys.argv[1:]:
	    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
	    s.bind(p)
	    os.chmod(p, 0o666)
	    s.listen(16)
	    threading.Thread(target=serve, args=(s, os.path.basename(p)), daemon=True).start()
	print("ready", flush=True)
	threading.Event().wait()
PY
cat >"$WORLD_DIR/probe.py" <<-'PY'
	import errno, socket, sys
	for p in sys.argv[1:]:
	    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
	    s.settimeout(3)
	    try:
	        s.connect(p)
	        print("sock", p, "REACHED", s.recv(64).decode().strip())
	    except OSError as e:
	        print("sock", p, "refused", errno.errorcode.get(e.errno, e.errno))
	PY
SOCKS="$WORK/agent.sock $WORK/sub/deep.sock $WORK/keep.sock"
in_px "$WORLD_PYTHON" "$WORLD_DIR/server.py" $SOCKS >"$WORLD_DIR/server.out" 2>&1 &
SERVER_PID=$!
i=0
until [ -S "$WORK/keep.sock" ] || [ $i -gt 100 ]; do sleep 0.05; i=$((i + 1)); done
out=$(in_px "$WORLD_PYTHON" "$WORLD_DIR/probe.py" $SOCKS 2>&1)
expect_eq 3 "$(echo "$out" | grep -c REACHED)" "outside the sandbox every socket answers"

CMD='cat "$1/data.txt" && echo there >>"$1/data.txt" && echo wrote
shift
python3 /dev/fd/4 "$@"'
out=$(in_px "$SIDECAR" run --uid $AGENT_UID --bind "$WORK" --socket "$WORK/keep.sock" -- \
	sh -c "$CMD" sh "$WORK" $SOCKS 2>&1 4<"$WORLD_DIR/probe.py")
diag "CMD: $out"
expect_match "^hello$" "$out" "CMD reads a file in DIR"
expect_match "^wrote$" "$out" "and writes it"
expect_eq "hello
there" "$(cat "$WORK/data.txt")" "the change is in DIR on the host"
expect_match "^sock $WORK/agent.sock refused" "$out" "a host socket in DIR is covered"
expect_match "^sock $WORK/sub/deep.sock refused" "$out" "one below it too"
expect_match "^sock $WORK/keep.sock REACHED" "$out" "--socket under DIR lets that one through"

out=$(in_px "$SIDECAR" run --bind / -- true 2>&1)
expect_eq 2 $? "--bind / is refused with exit 2"
expect_match "^postern-sidecar: --bind /: .*the sandbox's own$" "$out" "saying why"
out=$(in_px "$SIDECAR" run --bind /run -- true 2>&1)
expect_eq 2 $? "--bind /run is refused with exit 2"
expect_match "^postern-sidecar: --bind /run: .*the sandbox's own$" "$out" "saying why"
