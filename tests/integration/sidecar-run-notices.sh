#!/bin/sh
# sidecar-run-notices.sh: where `postern-sidecar run` tells refusals while
# CMD holds the terminal (--notices).
#   - auto, run on a terminal (stdin and stderr one pty, in its foreground):
#     while CMD runs, no refusal is written there; the refusal is in a log
#     file, 0600, under $XDG_RUNTIME_DIR/postern, which CMD cannot see;
#     after CMD exits the summary comes on the terminal and names the log;
#   - nothing refused on a terminal: no log is left, nothing is said;
#   - --notices terminal on a terminal: the refusal line comes there while
#     CMD runs, as without a terminal, and no log is made;
#   - --notices file without a terminal: stderr gets no live line, only the
#     summary and the log's name; run's own lines while CMD runs (an engine
#     restarted) go to the log too.
. "$top_srcdir/tests/integration/sidecar-lib.sh"
sc_world_up
[ -x "$top_builddir/postern-bridge" ] || skip "postern-bridge is not built"

# Root's runtime directory for these runs, under /run like /run/user/0.
XDG="/run/$WORLD_ID-xdg"
world_cleanup_hook() {
	rm -rf "$XDG"
}
mkdir -m 0700 "$XDG" || die "mkdir $XDG"

cat >"$WORLD_DIR/ptyrun.py" <<-'PY'
	# ptyrun.py CMD...: run CMD on a new pty, its controlling terminal, with
	# stdin, stdout and stderr on it; print what the terminal showed.
	import os, pty, sys
	pid, fd = pty.fork()
	if pid == 0:
	    os.execvp(sys.argv[1], sys.argv[1:])
	out = b""
	while True:
	    try:
	        d = os.read(fd, 4096)
	    except OSError:
	        break
	    if not d:
	        break
	    out += d
	os.waitpid(pid, 0)
	sys.stdout.write(out.decode(errors="replace").replace("\r", ""))
PY
# Run on a terminal with $XDG as the runtime directory.
ptyrun() {
	in_px env XDG_RUNTIME_DIR="$XDG" timeout 60 "$WORLD_PYTHON" "$WORLD_DIR/ptyrun.py" \
		"$SIDECAR" run "$@"
}
# CMD: one refused request, a look for the log, then a pause before it ends.
cmd='curl -sS --max-time 5 -o /dev/null https://deny.test/simple/
	[ -e '"$XDG"' ] || echo "CMD-CANNOT-SEE-LOG"
	sleep 0.5
	echo CMD-DONE'
# What the terminal showed while CMD ran: everything before CMD-DONE.
during() { printf '%s\n' "$1" | sed '/^CMD-DONE$/,$d'; }
after() { printf '%s\n' "$1" | sed -n '/^CMD-DONE$/,$p'; }

# 1. auto, on a terminal: the refusal goes to the log.
out=$(ptyrun --allow "allowed.test:80 private" -- sh -c "$cmd")
diag "tty: $out"
expect_match "^CMD-DONE$" "$out" "CMD ran to its end"
expect_match "^CMD-CANNOT-SEE-LOG$" "$out" "CMD cannot see the runtime directory of the log"
expect_no_match "refused" "$(during "$out")" "nothing is said of the refusal while CMD runs"
expect_no_match "postern: refused CONNECT" "$out" "the live line never comes on the terminal"
expect_match "^postern: refused 1 request in this run:$" "$(after "$out")" \
	"the summary comes when CMD has exited"
expect_match "^postern:   1x deny.test:443 \(host_not_allowed\)$" "$(after "$out")" \
	"with the refusal"
log=$(printf '%s\n' "$out" | sed -n 's/^postern: what was said while the command ran: //p')
expect_match "^$XDG/postern/notices-[0-9]+\.log$" "$log" "the summary names the log"
[ -n "$log" ] || log="$XDG/postern/none"
expect_match "^postern: refused CONNECT deny.test:443: host_not_allowed" "$(cat "$log" 2>&1)" \
	"the log has the refusal line"
expect_eq "600 root" "$(stat -c '%a %U' "$log" 2>&1)" "the log is the caller's, 0600"

# 2. Nothing refused: no log left, nothing said.
rm -rf "$XDG/postern"
out=$(ptyrun --allow "allowed.test:80 private" -- \
	curl -sS --max-time 5 -o /dev/null -w "%{http_code}\n" http://allowed.test/)
diag "tty: $out"
expect_match "^200$" "$out" "an allowed request"
expect_no_match "postern: (refused|what was said)" "$out" "nothing is said"
expect_eq "" "$(ls "$XDG/postern" 2>/dev/null)" "no log is left"

# 3. --notices terminal: the line comes while CMD runs.
out=$(ptyrun --notices terminal --allow "allowed.test:80 private" -- sh -c "$cmd")
diag "tty: $out"
expect_match "^postern: refused CONNECT deny.test:443: host_not_allowed" "$(during "$out")" \
	"--notices terminal tells the refusal while CMD runs"
expect_match "^postern: refused 1 request in this run:$" "$(after "$out")" "and the summary at the end"
expect_no_match "what was said" "$out" "no log is named"
expect_eq "" "$(ls "$XDG/postern" 2>/dev/null)" "and none is made"

# 4. --notices file, no terminal at all.
in_px env XDG_RUNTIME_DIR="$XDG" "$SIDECAR" run --notices file --allow "allowed.test:80 private" \
	-- sh -c "$cmd" >"$WORLD_DIR/out4" 2>"$WORLD_DIR/err4" </dev/null
err=$(cat "$WORLD_DIR/err4")
diag "stderr: $err"
expect_match "^CMD-DONE$" "$(cat "$WORLD_DIR/out4")" "CMD ran"
expect_no_match "postern: refused CONNECT" "$err" "--notices file keeps the live line off stderr"
expect_match "^postern: refused 1 request in this run:$" "$err" "the summary is there"
log=$(printf '%s\n' "$err" | sed -n 's/^postern: what was said while the command ran: //p')
expect_match "^$XDG/postern/notices-[0-9]+\.log$" "$log" "and names the log"
[ -n "$log" ] || log="$XDG/postern/none"
expect_match "^postern: refused CONNECT deny.test:443: host_not_allowed" "$(cat "$log" 2>&1)" \
	"which has the refusal line"

# 5. run's own lines while CMD runs go there too: the engine, killed under
# CMD, is restarted, and saying so is held with the rest.
ip netns exec "$WORLD_NS_PX" env XDG_RUNTIME_DIR="$XDG" "$SIDECAR" run --notices file \
	-- sh -c 'sleep 3; echo CMD-DONE' >"$WORLD_DIR/out5" 2>"$WORLD_DIR/err5" </dev/null &
RUN=$!
# The engine is run's child still named postern-sidecar once CMD's child
# has become postern-bridge.
eng=
for i in $(seq 1 40); do
	sleep 0.1
	pgrep -P "$RUN" -x postern-bridge >/dev/null || continue
	eng=$(pgrep -P "$RUN" -x postern-sidecar)
	break
done
[ -n "$eng" ] || die "no engine under run $RUN"
kill -9 $eng
wait "$RUN"
err=$(cat "$WORLD_DIR/err5")
diag "stderr: $err"
expect_match "^CMD-DONE$" "$(cat "$WORLD_DIR/out5")" "CMD ran through the restart"
expect_no_match "restarted it" "$err" "the restart is not said on stderr while CMD runs"
log=$(printf '%s\n' "$err" | sed -n 's/^postern: what was said while the command ran: //p')
expect_match "^$XDG/postern/notices-$RUN\.log$" "$log" "the log is named at exit"
[ -n "$log" ] || log="$XDG/postern/none"
expect_match "the proxy engine died \(signal 9\); restarted it" "$(cat "$log" 2>&1)" \
	"the log says the engine was restarted"
exit 0
