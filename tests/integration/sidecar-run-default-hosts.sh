#!/bin/sh
# sidecar-run-default-hosts.sh: the built-in default lets the flagship
# clients start and log in.  The real CLIs run under `postern-sidecar run`
# with no -c and no --allow, on their first run (an empty home), and the
# world's DNS names their hosts (private addresses, so the proxy still
# refuses them after its allowlist: private_address, never host_not_allowed):
#   - Claude Code, interactive in a pty with no key, checks at start
#     api.anthropic.com/api/hello and platform.claude.com/v1/oauth/hello
#     and stops with "Unable to connect to Anthropic services" if either
#     fails; neither is refused as host_not_allowed;
#   - it also fetches its changelog from raw.githubusercontent.com, which it
#     does not need to start: the default still refuses it (host_not_allowed);
#   - Codex starts to its sign-in screen; `codex login --device-auth` asks
#     auth.openai.com for a code, which is not refused as host_not_allowed;
#   - signed in with ChatGPT, Codex asks chatgpt.com for its account at
#     start: not host_not_allowed either; its telemetry (ab.chatgpt.com)
#     stays refused;
#   - with the default's hosts marked private, so that the world's servers
#     and a stand-in for the sign-in answer: Claude Code passes its start-up
#     check to its login screen, and with a key to its prompt; Codex's
#     device sign-in completes;
#   - postern-proxy --default-config lists the three hosts.
# Skips a CLI that is not installed.
. "$top_srcdir/tests/integration/sidecar-lib.sh"
CLAUDE=$(command -v claude) && "$CLAUDE" --version >/dev/null 2>&1 || CLAUDE=
CODEX=$(command -v codex) && "$CODEX" --version >/dev/null 2>&1 || CODEX=
[ -n "$CLAUDE$CODEX" ] || skip "neither Claude Code (claude) nor Codex (codex) is installed"
SIGNIN4=10.200.1.11
WORLD_DNS_EXTRA="api.anthropic.com=$WORLD_UP4 platform.claude.com=$WORLD_UP4
	raw.githubusercontent.com=$WORLD_UP4 auth.openai.com=$SIGNIN4 chatgpt.com=$SIGNIN4
	ab.chatgpt.com=$WORLD_UP4"
sc_world_up
[ -x "$top_builddir/postern-bridge" ] || skip "postern-bridge is not built"
ip -n "$WORLD_NS_UP" addr add "$SIGNIN4/24" dev veth-px || die "cannot add $SIGNIN4"

def=$("$top_builddir/postern-proxy" --default-config)
expect_match "^allow_hosts = platform.claude.com " "$def" "--default-config lists platform.claude.com"
expect_match "^allow_hosts = auth.openai.com " "$def" "--default-config lists auth.openai.com"
expect_match "^allow_hosts = chatgpt.com " "$def" "--default-config lists chatgpt.com"

# Outside /tmp, /var/tmp, /run and /dev/shm (the jail's fresh ones): an
# empty home for CMD (nobody, for a root caller), so each CLI's first run.
HOMEDIR=$(mktemp -d /var/lib/postern-defaults.XXXXXX) || die "mktemp"
mkdir -p "$HOMEDIR/.codex" "$HOMEDIR/work" &&
	chmod 1777 "$HOMEDIR" "$HOMEDIR/.codex" "$HOMEDIR/work" || die "cannot make the home"
world_cleanup_hook() {
	[ -n "${SIGNIN_PID:-}" ] && kill "$SIGNIN_PID" 2>/dev/null
	rm -rf "$HOMEDIR"
}
SIGNIN_LOG="$WORLD_DIR/signin.log"
: >"$SIGNIN_LOG"
SIGNIN_PID=$(world__spawn "$WORLD_DIR/signin.out" ip netns exec "$WORLD_NS_UP" \
	"$WORLD_PYTHON" "$top_srcdir/tests/integration/lib/mock-signin.py" "$SIGNIN4" 443 \
	"$WORLD_CERT" "$WORLD_KEY" "$SIGNIN_LOG" "$WORLD_DIR/signin.ready")
i=0
while [ ! -e "$WORLD_DIR/signin.ready" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
[ -e "$WORLD_DIR/signin.ready" ] || die "the sign-in mock did not start: $(cat "$WORLD_DIR/signin.out")"

# term.py OUT SECONDS UNTIL CMD...: CMD in a pty (100x40) until its screen
# shows UNTIL, SECONDS pass or it exits; everything it printed goes to OUT,
# and its text to OUT.txt: without escape sequences and blanks (a TUI moves
# the cursor instead of writing a blank), so UNTIL has none either.  UNTIL
# may be A|B|...: Enter is pressed a second after A shows (Up and Enter
# when A ends in ^), and so on; the last ends.
# Answers the terminal queries a TUI waits for.  Then SIGHUP, as a closed
# terminal would, and SIGKILL if it has not gone a second later.
cat >"$WORLD_DIR/term.py" <<'EOF'
import fcntl, os, pty, re, select, signal, struct, sys, termios, time
out, secs, steps, cmd = sys.argv[1], float(sys.argv[2]), sys.argv[3].encode().split(b"|"), sys.argv[4:]
def text(b):
    b = re.sub(rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b[\]P][^\x07\x1b]*(\x07|\x1b\\)?|\x1b.", b"", b)
    return re.sub(rb"[ \t]+", b"", b)
pid, fd = pty.fork()
if pid == 0:
    os.execvp(cmd[0], cmd)
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
got = b""
answers = ((b"\x1b[6n", b"\x1b[1;1R"), (b"\x1b[c", b"\x1b[?62;22c"),
    (b"\x1b]11;?", b"\x1b]11;rgb:0000/0000/0000\x1b\\"))
end = time.time() + secs
with open(out, "wb") as f:
    while time.time() < end:
        if steps[0].rstrip(b"^") in text(got):
            got = b""
            if len(steps) == 1:
                break
            time.sleep(1)
            if steps.pop(0).endswith(b"^"):
                os.write(fd, b"\x1b[A")
                time.sleep(0.3)
            os.write(fd, b"\r")
        r, _, _ = select.select([fd], [], [], 0.2)
        if not r:
            continue
        try:
            d = os.read(fd, 65536)
        except OSError:
            break
        if not d:
            break
        f.write(d)
        got += d
        for q, a in answers:
            if q in d:
                os.write(fd, a)
    time.sleep(0.5)
    gone = 0
    for s in (signal.SIGHUP, signal.SIGKILL):
        try:
            os.kill(pid, s)
        except OSError:
            pass
        # Its last output, until it has gone or a second has passed.
        end = time.time() + 1
        while not gone and time.time() < end:
            try:
                r, _, _ = select.select([fd], [], [], 0.1)
                d = os.read(fd, 65536) if r else b""
                if d:
                    f.write(d)
            except OSError:
                pass
            gone = os.waitpid(pid, os.WNOHANG)[0]
        if gone:
            break
    try:
        while select.select([fd], [], [], 0.1)[0]:
            d = os.read(fd, 65536)
            if not d:
                break
            f.write(d)
    except OSError:
        pass
if not gone:
    os.waitpid(pid, 0)
with open(out, "rb") as f, open(out + ".txt", "wb") as t:
    t.write(text(f.read()))
EOF
# renv CMD...: CMD in px with a first run's environment: no key, an empty home.
renv() {
	in_px env -i PATH="$PATH" HOME="$HOMEDIR" CODEX_HOME="$HOMEDIR/.codex" \
		LANG=C.UTF-8 TERM=xterm-256color "$@"
}
# refusals OUT: the proxy's refusal lines in OUT, one a line (the runs that
# read them keep the live lines on the terminal: --notices terminal).
refusals() {
	tr '\r' '\n' <"$1" | grep -ao "postern: refused CONNECT [^ ]*: [a-z_]*" | sort -u
}

if [ -n "$CLAUDE" ]; then
	(cd "$HOMEDIR/work" && renv "$WORLD_PYTHON" "$WORLD_DIR/term.py" "$WORLD_DIR/claude.out" 40 \
		"UnabletoconnecttoAnthropicservices" "$SIDECAR" run --notices terminal -- "$CLAUDE")
	r=$(refusals "$WORLD_DIR/claude.out")
	diag "claude: $r"
	expect_match "UnabletoconnecttoAnthropicservices" "$(cat "$WORLD_DIR/claude.out.txt")" \
		"claude ran its start-up check (private addresses here: it cannot pass)"
	expect_match "refused CONNECT platform.claude.com:443: private_address" "$r" \
		"claude tried platform.claude.com:443, which the allowlist let through"
	expect_no_match "platform.claude.com:443: host_not_allowed" "$r" \
		"the default does not refuse platform.claude.com:443"
	expect_match "refused CONNECT api.anthropic.com:443: private_address" "$r" \
		"claude tried api.anthropic.com:443, which the allowlist let through"
	expect_no_match "api.anthropic.com:443: host_not_allowed" "$r" \
		"the default does not refuse api.anthropic.com:443"
	expect_match "refused CONNECT raw.githubusercontent.com:443: host_not_allowed" "$r" \
		"raw.githubusercontent.com (the changelog, not needed to start) stays refused"
else
	diag "Claude Code is not installed: its part is skipped"
fi

# The same list, each host with "private" so that the world's servers (at
# private addresses) are reached: with only the default's hosts, Claude Code
# passes its start-up check, asks for a theme and then for a login method;
# given a key, it reaches its prompt.
"$top_builddir/postern-proxy" --default-config |
	sed 's/^\(allow_hosts = [^ ;]*\)/\1 private/' >"$WORLD_DIR/default-private.ini" || die "cannot write the config"
cp "$WORLD_CA" "$HOMEDIR/ca.pem" && chmod 0644 "$HOMEDIR/ca.pem" || die "cannot copy the CA"
if [ -n "$CLAUDE" ]; then
	(cd "$HOMEDIR/work" && renv NODE_EXTRA_CA_CERTS="$HOMEDIR/ca.pem" \
		"$WORLD_PYTHON" "$WORLD_DIR/term.py" "$WORLD_DIR/claude2.out" 40 \
		"Choosethetextstyle|Selectloginmethod" \
		"$SIDECAR" run -c "$WORLD_DIR/default-private.ini" -- "$CLAUDE")
	t=$(cat "$WORLD_DIR/claude2.out.txt")
	diag "claude: $(refusals "$WORLD_DIR/claude2.out")"
	expect_no_match "UnabletoconnecttoAnthropicservices" "$t" "claude passed its start-up check"
	expect_match "Selectloginmethod" "$t" "and shows its login screen"
	rm -rf "$HOMEDIR/.claude" "$HOMEDIR/.claude.json"
	(cd "$HOMEDIR/work" && renv NODE_EXTRA_CA_CERTS="$HOMEDIR/ca.pem" \
		ANTHROPIC_API_KEY="sk-ant-api03-postern-test-$$" \
		"$WORLD_PYTHON" "$WORLD_DIR/term.py" "$WORLD_DIR/claude3.out" 40 \
		"Choosethetextstyle|DetectedacustomAPIkey^|Securitynotes|trustthisfolder|forshortcuts" \
		"$SIDECAR" run -c "$WORLD_DIR/default-private.ini" --env ANTHROPIC_API_KEY -- "$CLAUDE")
	t=$(cat "$WORLD_DIR/claude3.out.txt")
	diag "claude with a key: $(refusals "$WORLD_DIR/claude3.out")"
	expect_no_match "UnabletoconnecttoAnthropicservices" "$t" "with a key, claude passed its start-up check"
	expect_match "forshortcuts" "$t" "and reaches its prompt"
fi

if [ -n "$CODEX" ]; then
	(cd "$HOMEDIR/work" && renv "$WORLD_PYTHON" "$WORLD_DIR/term.py" "$WORLD_DIR/codex.out" 40 \
		"Errorloggingin" "$SIDECAR" run --notices terminal -- "$CODEX" login --device-auth)
	r=$(refusals "$WORLD_DIR/codex.out")
	diag "codex: $r"
	expect_match "refused CONNECT auth.openai.com:443: private_address" "$r" \
		"codex login tried auth.openai.com:443, which the allowlist let through"
	expect_no_match "auth.openai.com:443: host_not_allowed" "$r" \
		"the default does not refuse auth.openai.com:443"
	# Its first start: the sign-in screen needs no host.
	(cd "$HOMEDIR/work" && renv "$WORLD_PYTHON" "$WORLD_DIR/term.py" "$WORLD_DIR/codex2.out" 40 \
		"SigninwithChatGPT" "$SIDECAR" run --notices terminal -- "$CODEX")
	diag "codex: $(refusals "$WORLD_DIR/codex2.out")"
	expect_match "SigninwithChatGPT" "$(cat "$WORLD_DIR/codex2.out.txt")" \
		"codex starts to its sign-in screen under the default"
	# With only the default's hosts (private, so the mock answers) the
	# device sign-in completes.
	(cd "$HOMEDIR/work" && renv SSL_CERT_FILE="$HOMEDIR/ca.pem" \
		"$WORLD_PYTHON" "$WORLD_DIR/term.py" "$WORLD_DIR/codex3.out" 40 \
		"Successfullyloggedin" "$SIDECAR" run -c "$WORLD_DIR/default-private.ini" \
		--env SSL_CERT_FILE -- "$CODEX" login --device-auth)
	diag "codex: $(refusals "$WORLD_DIR/codex3.out")"
	diag "sign-in mock saw: $(cat "$SIGNIN_LOG")"
	expect_match "Successfullyloggedin" "$(cat "$WORLD_DIR/codex3.out.txt")" \
		"with the default's hosts, codex login --device-auth signs in"
	expect_match '"host": "auth.openai.com", "method": "POST", "path": "/oauth/token"' \
		"$(cat "$SIGNIN_LOG")" "at auth.openai.com"
	# Signed in with ChatGPT, Codex asks chatgpt.com for its account at
	# start, and stops without an answer (under the default its address
	# is private here).  Its telemetry host stays refused.
	(cd "$HOMEDIR/work" && renv "$WORLD_PYTHON" "$WORLD_DIR/term.py" "$WORLD_DIR/codex4.out" 40 \
		"account/readfailed" "$SIDECAR" run --notices terminal -- "$CODEX")
	r=$(refusals "$WORLD_DIR/codex4.out")
	diag "codex signed in: $r"
	expect_match "refused CONNECT chatgpt.com:443: private_address" "$r" \
		"signed in, codex tried chatgpt.com:443, which the allowlist let through"
	expect_no_match "CONNECT chatgpt.com:443: host_not_allowed" "$r" \
		"the default does not refuse chatgpt.com:443"
	expect_match "refused CONNECT ab.chatgpt.com:443: host_not_allowed" "$r" \
		"ab.chatgpt.com (telemetry) stays refused"
else
	diag "Codex is not installed: its part is skipped"
fi
exit 0
