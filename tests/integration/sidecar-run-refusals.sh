#!/bin/sh
# sidecar-run-refusals: in `postern-sidecar run`, the command reads why its
# requests were refused in the file $POSTERN_REFUSALS names: the lines the
# person sees on the terminal, each once, never a raw control byte, and no
# more than 64 lines or 16 KiB, the last saying that more were left out.
# The command can read it, not write, remove or replace it, and nothing it
# does makes the outside write anywhere else.
. "$top_srcdir/tests/integration/sidecar-lib.sh"
sc_world_up
[ -x "$top_builddir/postern-bridge" ] || skip "postern-bridge is not built"

XDG="$WORLD_DIR/xdg"
mkdir -m 0711 "$XDG"
err="$WORLD_DIR/run.err"

# What CMD tries against the file; each success is a line.
ATTACK='
	f=$POSTERN_REFUSALS
	(echo x >>"$f") 2>/dev/null && echo "attack: wrote"
	(: >"$f") 2>/dev/null && echo "attack: truncated"
	chmod 0666 "$f" 2>/dev/null && echo "attack: chmod"
	rm -f "$f" 2>/dev/null && echo "attack: removed"
	mv "$f" "$f.old" 2>/dev/null && echo "attack: moved"
	ln -sf /etc/passwd "$f" 2>/dev/null && echo "attack: linked"
	umount "$f" 2>/dev/null && echo "attack: unmounted"
	[ -L "$f" ] && echo "attack: a link now"'

# The refusal lines on the terminal, without the summary at the end.
told() {
	grep '^postern: refused ' "$err" | grep -v '^postern: refused [0-9]* requests\{0,1\} in this run:$'
}

# 1. The terminal's lines, in the file the variable names, each once.
out=$(in_px env XDG_RUNTIME_DIR="$XDG" "$SIDECAR" run --allow 'allowed.test private' -- sh -c '
	echo "var=$POSTERN_REFUSALS"
	curl -sS --max-time 10 https://refused.test/ 2>&1
	curl -sS --max-time 10 https://refused.test/ >/dev/null 2>&1
	curl -sS --max-time 10 -o /dev/null http://allowed.test:8080/x
	'"$ATTACK"'
	echo "--- file"
	cat "$POSTERN_REFUSALS"' 2>"$err")
diag "$out"
diag "$(cat "$err")"
expect_match "^var=/run/postern/refusals$" "$out" "CMD is told where the file is: POSTERN_REFUSALS"
expect_match "^curl: \(56\) CONNECT tunnel failed, response 403$" "$out" \
	"what the client alone says does not tell policy from an outage"
file=$(printf '%s\n' "$out" | sed -n '/^--- file$/,$p' | sed 1d)
expect_match "^postern: refused CONNECT refused\.test:443: host_not_allowed \(.*\); to allow it: --allow 'refused\.test'$" \
	"$file" "the file says what was refused, why, and the --allow that would allow it"
expect_match "^postern: refused GET allowed\.test:8080 path /x: port_not_allowed .*--allow 'allowed\.test:8080 private'$" \
	"$file" "a refused port is in it too"
expect_eq 2 "$(printf '%s\n' "$file" | grep -c .)" "each refusal once: a retry adds no line"
expect_eq "$(told)" "$file" "the file holds the very lines the person saw"
expect_no_match "^attack:" "$out" "CMD cannot write, truncate, remove, move or replace the file"
expect_eq "" "$(ls "$XDG")" "the file goes with the run on the host"

# 2. Bounded: 100 refused hosts, 64 lines, the last says more were left out.
out=$(in_px env XDG_RUNTIME_DIR="$XDG" "$SIDECAR" run -- sh -c '
	curl -s --max-time 30 -o /dev/null "http://h[1-100].test/"
	wc -c <"$POSTERN_REFUSALS"
	cat "$POSTERN_REFUSALS"' 2>"$err")
expect_eq 100 "$(grep -c '^postern: refused GET h[0-9]*\.test' "$err")" "the terminal told all 100"
bytes=$(printf '%s\n' "$out" | head -n 1)
file=$(printf '%s\n' "$out" | sed 1d)
expect_eq 64 "$(printf '%s\n' "$file" | wc -l)" "the file keeps 64 lines"
expect_eq "postern: more refusals were left out (this file keeps the first ones only)" \
	"$(printf '%s\n' "$file" | tail -n 1)" "and its last says more were left out"
expect_match "^postern: refused GET h63\.test:80 path /: host_not_allowed" \
	"$(printf '%s\n' "$file" | tail -n 2 | head -n 1)" "the first 63 refusals are kept, in order"
[ "$bytes" -le 16384 ] && ok=yes || ok=no
expect_eq yes "$ok" "the file stays within 16 KiB ($bytes bytes)"

# 3. Long paths: the byte bound comes first.
long=$(printf 'p%.0s' $(seq 1 200))
out=$(in_px env XDG_RUNTIME_DIR="$XDG" "$SIDECAR" run -- sh -c '
	curl -s --max-time 30 -o /dev/null "http://b[1-80].test/'"$long"'"
	wc -c <"$POSTERN_REFUSALS"
	tail -n 1 "$POSTERN_REFUSALS"' 2>"$err")
bytes=$(printf '%s\n' "$out" | head -n 1)
[ "$bytes" -le 16384 ] && [ "$bytes" -gt 15000 ] && ok=yes || ok=no
expect_eq yes "$ok" "long lines: the file fills up to 16 KiB, no more ($bytes bytes)"
expect_eq "postern: more refusals were left out (this file keeps the first ones only)" \
	"$(printf '%s\n' "$out" | tail -n 1)" "and says that more were left out"

# 4. Hostile bytes in what is refused (a path, a host, a Host header, a
# SOCKS5 name): refused, and the file holds only printable text, line by
# line the person's.
cat >"$WORLD_DIR/hostile.py" <<'PY'
import os, socket, struct
h, p = os.environ["HTTP_PROXY"].split("//")[1].rsplit(":", 1)
def send(b, socks=None):
    s = socket.create_connection((h, int(p)))
    if socks is not None:
        s.sendall(b"\x05\x01\x00")
        s.recv(2)
        b = b"\x05\x01\x00\x03" + bytes([len(socks)]) + socks + struct.pack(">H", 443)
    s.sendall(b)
    s.recv(100)
    s.close()
send(b"GET http://evil.test/a\x1b]0;x\x07\nb HTTP/1.1\r\nHost: evil.test\r\n\r\n")
send(b"GET http://evil.test/\xc3\xa9\xff HTTP/1.1\r\nHost: evil.test\r\n\r\n")
send(b"CONNECT ev\x1b[2Jil.test:443 HTTP/1.1\r\n\r\n")
send(b"GET http://evil.test/ HTTP/1.1\r\nHost: ev\x1bil.test\r\n\r\n")
send(b"GET http://evil.test/ok HTTP/1.1\r\nHost: other.test\r\n\r\n")
send(b"", socks=b"so\x1b[2Jcks\n.test")
send(b"", socks=b"evil\xff.test")
PY
out=$(in_px env HOSTILE="$(cat "$WORLD_DIR/hostile.py")" XDG_RUNTIME_DIR="$XDG" \
	"$SIDECAR" run --env HOSTILE -- sh -c 'python3 -c "$HOSTILE" && od -An -c "$POSTERN_REFUSALS" |
	tr -s " " | grep -o "\\\\[0-9][0-9][0-9]" | sort -u; echo "--- file"; cat "$POSTERN_REFUSALS"' 2>"$err")
diag "$out"
expect_eq "--- file" "$(printf '%s\n' "$out" | head -n 1)" "no control or non-ASCII byte in the file"
file=$(printf '%s\n' "$out" | sed -n '/^--- file$/,$p' | sed 1d)
expect_match "host_mismatch" "$file" "a refusal of hostile bytes is in it"
expect_eq "$(told | sort -u)" "$(printf '%s\n' "$file" | sort -u)" \
	"the same lines as the terminal's"

# 5. An engine killed under CMD: the one started again goes on with the
# file, and does not write a line it already holds.
MARK="refusals-restart-$$"
(
	i=0
	while ! grep -q "refused GET again.test" "$err" 2>/dev/null && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	spid=$(pgrep -o -f "postern-sidecar run -- sh -c : $MARK")
	epid=$(pgrep -P "$spid" -f "postern-sidecar run" | head -n 1)
	[ -n "$epid" ] && kill -KILL "$epid"
) &
outside=$!
out=$(in_px env XDG_RUNTIME_DIR="$XDG" "$SIDECAR" run -- sh -c ": $MARK
	curl -s --max-time 10 -o /dev/null http://again.test/
	sleep 2
	curl -s --max-time 10 -o /dev/null http://again.test/
	curl -s --max-time 10 -o /dev/null http://new.test/
	cat \"\$POSTERN_REFUSALS\"" 2>"$err")
wait $outside
diag "$(cat "$err")"
expect_match "the proxy engine died \(signal 9\); restarted it" "$(cat "$err")" "the engine was killed and started again"
expect_eq 2 "$(told | grep -c 'again\.test')" "the new engine tells the person again"
expect_eq 1 "$(printf '%s\n' "$out" | grep -c 'again\.test')" "the file keeps its one line"
expect_match "^postern: refused GET new\.test:80 path /: host_not_allowed" "$out" \
	"and gets the new engine's refusals"

# 6. An ordinary user, through a user namespace: CMD owns /run/postern
# there, and still cannot touch the file.
if ! world_userns_ok $AGENT_UID; then
	diag "uid $AGENT_UID cannot create a user namespace here: the unprivileged part is skipped"
else
	bins=$(world_bins_for $AGENT_UID "$SIDECAR" "$top_builddir/postern-bridge") ||
		die "cannot give uid $AGENT_UID the binaries"
	chown $AGENT_UID:$AGENT_UID "$XDG"
	out=$(in_px setpriv --reuid $AGENT_UID --regid $AGENT_UID --clear-groups \
		env XDG_RUNTIME_DIR="$XDG" "$bins/postern-sidecar" run -- sh -c '
		curl -sS --max-time 10 -o /dev/null http://refused.test/u 2>/dev/null
		'"$ATTACK"'
		echo "--- file"
		cat "$POSTERN_REFUSALS"' 2>"$err")
	diag "$out"
	expect_match "^postern: refused GET refused\.test:80 path /u: host_not_allowed .*--allow 'refused\.test'$" \
		"$out" "unprivileged: the file tells CMD"
	expect_no_match "^attack:" "$out" "unprivileged: CMD cannot write, remove or replace it"
	expect_eq "" "$(ls "$XDG")" "unprivileged: the file goes with the run"
fi
