#!/bin/sh
# reload-halfwrite: the inotify watch reloads only complete files.  A
# writer rewrites the config in place and stalls half-way for 2 s, with a
# prefix that is a valid config by itself but lacks a deny_hosts line and
# a session: while it stalls nothing is reloaded (the generation stays,
# the deny holds, the session's socket is there); after its close the
# whole file is taken, in one reload, though requests wrote the audit log
# next to it right up to the close.  And every session that is in both
# the old and the new config keeps its socket file across that reload
# (same inode: a sandbox that bind-mounted it stays connected), even when
# the reload changes that session's rules or its socket's mode.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

conf="$WORLD_DIR/postern.ini"
S="$WORLD_DIR/sock"
mkdir -p "$S"
px() { curl_status -x http://127.0.0.1:3130 "$@"; }
ino() { stat -c %i "$1" 2>/dev/null || echo gone; }

# The config in force at the start: a (rules on TCP 3130 and a socket),
# b and d (sockets only).
{
	admin_proxy_section
	cat <<-EOF2
		[session a]
		listen = tcp:127.0.0.1:3130
		listen = unix:$S/a.sock
		allow_hosts = allowed.test private, other.test private
		deny_hosts = other.test
		[session b]
		listen = unix:$S/b.sock mode=0660
		allow_hosts = allowed.test private
		[session d]
		listen = unix:$S/d.sock
		allow_hosts = allowed.test private
	EOF2
} >"$conf"
# The new config, in two halves.  The first is valid by itself (and
# differs from the old: api.example.test), but has neither the deny line
# nor session b; the second brings them, b with a new mode, and a new
# session c; d is gone.
{
	admin_proxy_section
	cat <<-EOF2
		[session a]
		listen = tcp:127.0.0.1:3130
		listen = unix:$S/a.sock
		allow_hosts = allowed.test private, other.test private, api.example.test private
	EOF2
} >"$WORLD_DIR/half1"
cat >"$WORLD_DIR/half2" <<EOF2
deny_hosts = other.test
[session b]
listen = unix:$S/b.sock mode=0600
allow_hosts = allowed.test private
[session c]
listen = unix:$S/c.sock
allow_hosts = allowed.test private
EOF2
cat "$WORLD_DIR/half1" "$WORLD_DIR/half2" >"$WORLD_DIR/full"
"$POSTERN_PROXY" --check -c "$WORLD_DIR/half1" >/dev/null 2>&1 ||
	die "the first half alone should be a valid config (else the test proves nothing)"

proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
expect_eq 1 "$(generation)" "generation 1 at the start"
expect_eq 403 "$(px https://other.test/)" "the deny holds at the start"
expect_eq 403 "$(px https://api.example.test/)" "api.example.test is not allowed at the start"
ia=$(ino "$S/a.sock")
ib=$(ino "$S/b.sock")
expect_eq 660 "$(stat -c %a "$S/b.sock")" "b's socket has mode 0660 at the start"
[ -S "$S/d.sock" ] || fail "d's socket exists at the start"

# The writer: the same inode, truncated; the first half; then it stalls
# (2 s at least, until told to go on) before the rest and the close.
"$WORLD_PYTHON" -c '
import os, sys, time
conf, h1, h2, ready, go = sys.argv[1:]
fd = os.open(conf, os.O_WRONLY | os.O_TRUNC)
os.write(fd, open(h1, "rb").read())
open(ready, "w").close()
t0 = time.monotonic()
while time.monotonic() - t0 < 2 or not os.path.exists(go):
    time.sleep(0.05)
os.write(fd, open(h2, "rb").read())
os.close(fd)' "$conf" "$WORLD_DIR/half1" "$WORLD_DIR/half2" "$WORLD_DIR/w.ready" "$WORLD_DIR/w.go" &
writer=$!
i=0
while [ ! -e "$WORLD_DIR/w.ready" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
[ -e "$WORLD_DIR/w.ready" ] || die "the writer did not start"
ino0=$(ino "$conf")

# Well past the old debounce (200 ms quiet, 800 ms at most).
sleep 1.2
expect_eq 1 "$(generation)" "during the stall: no reload (generation 1)"
expect_eq 403 "$(px https://other.test/)" "during the stall: the deny still holds"
expect_eq 403 "$(px https://api.example.test/)" "during the stall: the half file's rule is not in force"
expect_eq "$ib" "$(ino "$S/b.sock")" "during the stall: b's socket is still there, same inode"
expect_eq 0 "$(metrics_get postern_config_reloads_total)" "during the stall: no reload taken"
expect_eq 0 "$(metrics_get postern_config_reload_failures_total)" "during the stall: none attempted"

# The audit log lies in the config's directory: every request's line is
# an inotify event there too, and after a wake that brought only such
# events the watch rests a moment.  Traffic right up to the close: the
# stall still holds, and the close below is still seen.
case $PROXY_LOG in
"$WORLD_DIR"/*) ;;
*) die "the audit log should be in the config's directory (else this proves nothing)" ;;
esac
n=0
i=0
while [ $i -lt 30 ]; do
	[ "$(px https://allowed.test/)" = 200 ] && n=$((n + 1))
	i=$((i + 1))
done
expect_eq 30 "$n" "30 requests during the stall, each an audit line next to the config"
expect_eq 1 "$(generation)" "after them, still no reload (generation 1)"

touch "$WORLD_DIR/w.go"
wait "$writer"
expect_eq 0 $? "the writer finished"
expect_eq "$ino0" "$(ino "$conf")" "the file was rewritten in place (same inode)"
cmp -s "$conf" "$WORLD_DIR/full" || fail "the file holds both halves"
ms=$(wait_generation 2 1)
expect_eq 0 $? "after the close the new file is in force after $ms ms"
sleep 0.5
expect_eq 2 "$(generation)" "one reload: generation 2"
expect_eq 1 "$(metrics_get postern_config_reloads_total)" "one reload taken in all"
expect_eq "$(sha12 "$WORLD_DIR/full")" "$(status_get 's["config"]["hash"]')" "with the whole file's hash"
expect_eq 200 "$(px https://api.example.test/)" "the new rule is in force"
expect_eq 403 "$(px https://other.test/)" "and the deny from the second half holds"

# The sessions in both configs kept their sockets; the others came and went.
expect_eq "$ia" "$(ino "$S/a.sock")" "a's socket kept its inode (its rules changed)"
expect_eq "$ib" "$(ino "$S/b.sock")" "b's socket kept its inode (its mode changed)"
expect_eq 600 "$(stat -c %a "$S/b.sock")" "b's socket got its new mode 0600"
[ -S "$S/c.sock" ] && ok "the new session c got its socket" || fail "no socket for the new session c"
[ -e "$S/d.sock" ] && fail "the removed session d's socket is still there" || ok "d's socket is gone"
expect_eq '["unix:'"$S"'/a.sock", "unix:'"$S"'/b.sock"]' \
	"$(status_get '[l.split()[0] for x in s["sessions"] for l in x["listeners"] if "/a.sock" in l or "/b.sock" in l]')" \
	"a and b still listen on their sockets"

# A second reload of any kind (here POST /reload, the file unchanged
# apart from b's mode back to 0660) keeps them too.
sed -i 's/mode=0600/mode=0660/' "$conf"
sleep 0.6
expect_eq 3 "$(generation)" "an in-place edit by sed (write to a temporary, rename) is taken"
code=$(admin_curl -X POST -o /dev/null -w '%{http_code}' http://postern/reload)
expect_eq 200 "$code" "POST /reload: 200"
expect_eq "$ia" "$(ino "$S/a.sock")" "a's socket kept its inode across two more reloads"
expect_eq "$ib" "$(ino "$S/b.sock")" "b's socket kept its inode across two more reloads"
expect_eq 660 "$(stat -c %a "$S/b.sock")" "b's socket is 0660 again"

proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
