#!/bin/sh
# reload-race: a file rewritten in place while the watch's reload is
# reading it is neither taken nor refused.  The config is replaced by
# rename (complete by construction), and the reload that follows is held
# at the open of the file (strace delays every openat(2) of the proxy by
# 0.4 s); meanwhile an editor truncates the file in place and writes a
# first half that is a valid config by itself but lacks the deny_hosts
# line, then stalls.  The reload must not take that half (the deny would
# be gone) nor record a refusal (nothing is wrong with the file): it waits
# for the editor's close, then takes the whole file, once.
. "$top_srcdir/tests/integration/lib/world.sh"
command -v strace >/dev/null 2>&1 || skip "strace is not installed"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

conf="$WORLD_DIR/conf.d/postern.ini"
mkdir -p "$WORLD_DIR/conf.d"
chmod 755 "$WORLD_DIR/conf.d"
px() { curl_status -x http://127.0.0.1:3130 "$@"; }

# full: the deny at the end.  half: its first part, valid alone, with
# one more allowed host, so that taking it would show.
body() { # EXTRA-ALLOW
	admin_proxy_section
	cat <<-EOF2
		[session a]
		listen = tcp:127.0.0.1:3130
		allow_hosts = allowed.test private, other.test private$1
	EOF2
}
{ body ""; echo "deny_hosts = other.test"; echo "; start"; } >"$WORLD_DIR/c0"
{ body ""; echo "deny_hosts = other.test"; echo "; renamed"; } >"$WORLD_DIR/c1"
body ", api.example.test private" >"$WORLD_DIR/half1"
printf 'deny_hosts = other.test\n; in place\n' >"$WORLD_DIR/half2"
cat "$WORLD_DIR/half1" "$WORLD_DIR/half2" >"$WORLD_DIR/c2"
chmod 644 "$WORLD_DIR/c0" "$WORLD_DIR/c1" "$WORLD_DIR/c2"
"$POSTERN_PROXY" --check -c "$WORLD_DIR/half1" >/dev/null 2>&1 ||
	die "the first half alone should be a valid config (else the test proves nothing)"
cp "$WORLD_DIR/c0" "$conf"

proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
expect_eq 1 "$(generation)" "generation 1 at the start"
expect_eq 403 "$(px https://other.test/)" "the deny holds at the start"

# Hold every open(2) of the proxy for 0.4 s from now on.
strace -f -qq -o /dev/null -e trace=openat -e inject=openat:delay_enter=400000 \
	-p "$WORLD_PROXY_PID" &
tracer=$!
sleep 0.5
kill -0 "$tracer" 2>/dev/null || skip "strace cannot attach to the proxy here"

# The rename: the reload it starts (debounce 0.2 s, then the delayed
# opens) reads the file at about 1 s.  At 0.5 s the editor truncates it in
# place, writes the valid first half and stalls until told to go on.
cp "$WORLD_DIR/c1" "$conf.tmp"
mv "$conf.tmp" "$conf"
"$WORLD_PYTHON" -c '
import os, sys, time
conf, h1, h2, go = sys.argv[1:]
time.sleep(0.5)
fd = os.open(conf, os.O_WRONLY | os.O_TRUNC)
os.write(fd, open(h1, "rb").read())
while not os.path.exists(go):
    time.sleep(0.05)
os.write(fd, open(h2, "rb").read())
os.close(fd)' "$conf" "$WORLD_DIR/half1" "$WORLD_DIR/half2" "$WORLD_DIR/w.go" &
writer=$!

# Past the held reload's read (about 1 s) and its outcome.
sleep 2.5
kill "$tracer" 2>/dev/null
wait "$tracer" 2>/dev/null
expect_eq 403 "$(px https://other.test/)" "while the editor stalls: the deny holds"
expect_eq 403 "$(px https://api.example.test/)" "the half file's rule is not in force"
expect_eq 0 "$(metrics_get postern_config_reload_failures_total)" \
	"the reload that read the half file recorded no refusal"
grep -q "reload (inotify) refused" "$WORLD_DIR/proxy.out" &&
	fail "a reload was refused: $(grep "refused" "$WORLD_DIR/proxy.out" | head -n 2)"

touch "$WORLD_DIR/w.go"
wait "$writer"
expect_eq 0 $? "the editor finished"
cmp -s "$conf" "$WORLD_DIR/c2" || fail "the file holds both halves"
i=0
while [ "$(status_get 's["config"]["hash"]')" != "$(sha12 "$WORLD_DIR/c2")" ] && [ $i -lt 40 ]; do
	sleep 0.1
	i=$((i + 1))
done
expect_eq "$(sha12 "$WORLD_DIR/c2")" "$(status_get 's["config"]["hash"]')" \
	"after the close the whole file is in force"
expect_eq 200 "$(px https://api.example.test/)" "its new rule holds"
expect_eq 403 "$(px https://other.test/)" "and so does its deny"
expect_eq 0 "$(metrics_get postern_config_reload_failures_total)" "no reload refused in all"
# Every config ever taken was a complete one.
for h in $(sed -n 's/.*reloaded .*(sha256 \([0-9a-f]*\)).*/\1/p' "$WORLD_DIR/proxy.out"); do
	case $h in
	"$(sha12 "$WORLD_DIR/c1")" | "$(sha12 "$WORLD_DIR/c2")") ;;
	*) fail "a reload took sha256 $h, which is no complete file" ;;
	esac
done
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
