#!/bin/sh
# listen-sockmaker: with user = 65532 and socket_dir, postern-proxy started
# as root keeps a socket maker: a child with uid 0 and only CAP_CHOWN,
# CAP_DAC_OVERRIDE and CAP_FOWNER, while the proxy has none.  A reload
# after the drop then adds a session whose socket belongs to another uid,
# in directories that did not exist, and the task's uid gets through on it;
# it changes the owner and mode of a kept socket; a removed session's
# socket is removed even where the proxy's uid may not.  A socket outside
# socket_dir, or through a planted symbolic link, is refused with
# FILE:LINE and the old config stays.  Killing the proxy ends the maker.
# The maker is postern-proxy re-executed in its internal mode: its memory
# holds no copy of the proxy's, so no secret's value.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"
command -v setpriv >/dev/null 2>&1 || skip "setpriv (util-linux) is not installed"

T=1001
SD="$WORLD_DIR/sd"          # socket_dir: missing, the proxy makes it at start
OUT="$WORLD_DIR/out"        # outside socket_dir
ESC="$WORLD_DIR/esc"        # a .. from socket_dir
TGT="$WORLD_DIR/target"     # where a planted link points
mkdir -m 0700 "$TGT"
mkdir -p "$WORLD_DIR/etc"
conf="$WORLD_DIR/etc/postern.ini"
# write_conf [LINE...]: the config, then each LINE.
write_conf() {
	local l
	{
		admin_proxy_section "user = 65532" "socket_dir = $SD"
		echo "[defaults]"
		echo "allow_hosts = allowed.test private"
		echo "allow_hosts = secret.test private"
		echo "secrets = mk"
		echo "[secret mk]"
		echo "from_env = PX_MAKER_KEY"
		echo "inject = secret.test header x-api-key"
		for l in "$@"; do echo "$l"; done
	} >"$conf"
}
perm() { stat -c '%a %u %g' "$1"; }
# line_of TEXT: the number of the config's first line that holds TEXT.
line_of() { grep -n -F -m 1 "$1" "$conf" | cut -d: -f1; }
reload() { admin_curl -o "$WORLD_DIR/r.body" -w '%{http_code}' -X POST http://postern/reload; }
# status_of PID KEY: the value of KEY in /proc/PID/status.
status_of() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

cat >"$WORLD_DIR/mem.py" <<'PY'
# mem.py PID NEEDLE: read every readable mapping of PID (/proc/PID/maps,
# /proc/PID/mem) and print "found" or "absent", then how many bytes were
# read.  A mapping is read 1 MiB at a time; one over 1 GiB is skipped (a
# sanitizer's shadow memory, terabytes reserved and never written).
import re, sys
pid, needle = sys.argv[1], sys.argv[2].encode()
total, found, step = 0, False, 1 << 20
with open("/proc/%s/maps" % pid) as maps, open("/proc/%s/mem" % pid, "rb", 0) as mem:
    for line in maps:
        m = re.match(r"([0-9a-f]+)-([0-9a-f]+) (r)", line)
        if not m:
            continue
        lo, hi = int(m.group(1), 16), int(m.group(2), 16)
        if hi - lo > 1 << 30:
            continue
        tail = b""
        at = lo
        while at < hi:
            try:
                mem.seek(at)
                data = mem.read(min(step, hi - at))
            except (OSError, ValueError, OverflowError):
                break
            if not data:
                break
            total += len(data)
            found = found or needle in tail + data
            tail = data[-len(needle):]
            at += len(data)
print("found" if found else "absent", total)
PY
# mem PID NEEDLE: "found" or "absent", once more than a page was read.
mem() {
	local r
	r=$("$WORLD_PYTHON" "$WORLD_DIR/mem.py" "$1" "$2" 2>&1)
	[ "${r#* }" -gt 4096 ] 2>/dev/null || { echo "unread: $r"; return; }
	echo "${r% *}"
}
# maker_pid: the maker's pid, from the proxy's log.
maker_pid() {
	sed -n 's/.*socket maker: pid \([0-9]*\) .*/\1/p' "$WORLD_DIR/proxy.out" | tail -n 1
}
# gone PID: "gone" once PID has exited (within 2 s), else "alive".
gone() {
	local i
	i=0
	while [ $i -lt 100 ]; do
		if ! kill -0 "$1" 2>/dev/null || [ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" = Z ]; then
			echo gone
			return
		fi
		sleep 0.02
		i=$((i + 1))
	done
	echo alive
}

# A distinctive secret value, from the proxy's environment.
key="sk-maker-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
PX_MAKER_KEY=$key
export PX_MAKER_KEY
write_conf
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
M=$(maker_pid)
[ -n "$M" ] || die "no socket maker in the log: $(tail -n 5 "$WORLD_DIR/proxy.out")"
ok "the proxy started a socket maker, pid $M"
expect_eq "$WORLD_PROXY_PID" "$(awk '/^PPid:/ { print $2 }' "/proc/$M/status")" "the maker is the proxy's child"
expect_eq "755 0 0" "$(perm "$SD")" "socket_dir was made 0755, root's"

# ---- what each process may do
expect_eq 0 "$(status_of "$M" Uid)" "the maker keeps uid 0"
expect_eq 000000000000000b "$(status_of "$M" CapEff)" "the maker's effective capabilities: CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER"
expect_eq 000000000000000b "$(status_of "$M" CapPrm)" "its permitted set: the same three"
expect_eq 000000000000000b "$(status_of "$M" CapBnd)" "its bounding set: the same three"
expect_eq 0000000000000000 "$(status_of "$M" CapInh)" "nothing inheritable"
expect_eq 1 "$(status_of "$M" NoNewPrivs)" "the maker has no_new_privs"
expect_eq "0 1 2 3 4" "$(ls "/proc/$M/fd" | sort -n | tr '\n' ' ' | sed 's/ $//')" \
	"the maker holds five descriptors: /dev/null on 0-2, its pair, socket_dir"
expect_eq 65532 "$(status_of "$WORLD_PROXY_PID" Uid)" "the proxy runs as 65532"
expect_eq 0000000000000000 "$(status_of "$WORLD_PROXY_PID" CapEff)" "the proxy has no effective capability"
expect_eq 0000000000000000 "$(status_of "$WORLD_PROXY_PID" CapPrm)" "the proxy has no permitted capability"

# ---- the maker holds nothing of the proxy's memory: no secret's value
expect_eq "$(readlink "/proc/$WORLD_PROXY_PID/exe")" "$(readlink "/proc/$M/exe")" \
	"the maker runs postern-proxy's own binary"
expect_match "postern-proxy$" "$(readlink "/proc/$M/exe")" "which is postern-proxy"
expect_match "^postern-proxy --socket-maker $WORLD_PROXY_PID 65532 65532 $SD $" \
	"$(tr '\0' ' ' <"/proc/$M/cmdline")" "in its internal maker mode"
expect_eq "" "$(tr '\0' '\n' <"/proc/$M/environ")" "with an empty environment"
expect_eq found "$(mem "$WORLD_PROXY_PID" "$key")" "the secret's value is in the proxy's memory"
expect_eq found "$(mem "$M" "$SD")" "socket_dir's path is in the maker's memory"
expect_eq absent "$(mem "$M" "$key")" "the secret's value is in none of the maker's mappings"

# ---- a new session for uid 1001, two missing levels deep
B="$SD/sub/deeper/a.sock"
write_conf "[session b]" "listen = unix:$B owner=$T mode=0600"
expect_eq 200 "$(reload)" "reload after the drop: a socket for uid $T under socket_dir is taken"
expect_eq 2 "$(generation)" "the new config is in force"
expect_eq "600 $T 65532" "$(perm "$B")" "$B: mode 0600, owner $T, the proxy's group"
expect_eq "755 0" "$(stat -c '%a %u' "$SD/sub")" "the new level above is 0755, root's"
expect_eq "755 65532" "$(stat -c '%a %u' "$SD/sub/deeper")" "the socket's own new directory is 0755, the proxy's uid's"
expect_eq 200 "$(unix_try $T "$B")" "uid $T gets through on its socket"
expect_audit "the tunnel is in session b, peer uid $T" session=b uid=$T host=allowed.test decision=allow
expect_eq EACCES "$(unix_try 4103 "$B")" "another uid gets EACCES"

# ---- a kept socket's owner, group and mode change through the maker
write_conf "[session b]" "listen = unix:$B owner=$T group=4200 mode=0660"
expect_eq 200 "$(reload)" "reload: b's socket gets group 4200 and mode 0660"
expect_eq "660 $T 4200" "$(perm "$B")" "$B: mode 0660, owner $T, group 4200"
expect_eq 200 "$(unix_try 4103 "$B" 4200)" \
	"a member of group 4200 gets through"

# ---- refused: outside socket_dir, a .. out of it, a planted link
gen=$(generation)
write_conf "[session b]" "listen = unix:$B owner=$T group=4200 mode=0660" \
	"[session c]" "listen = unix:$OUT/c.sock owner=$T mode=0600"
expect_eq 409 "$(reload)" "a socket for uid $T outside socket_dir: refused (409)"
expect_match "$conf:$(line_of "$OUT/c.sock"): cannot listen on unix:$OUT/c.sock owner=$T mode=0600: only root can make a socket owned by uid $T, and the proxy runs as uid 65532; the socket maker makes sockets only under socket_dir $SD" \
	"$(cat "$WORLD_DIR/r.body")" "with FILE:LINE, naming socket_dir"
[ ! -e "$OUT" ] && ok "nothing was made outside socket_dir" || fail "$OUT was made"
write_conf "[session b]" "listen = unix:$B owner=$T group=4200 mode=0660" \
	"[session c]" "listen = unix:$SD/../esc/c.sock owner=$T mode=0600"
expect_eq 409 "$(reload)" "a socket under socket_dir/.. : refused (409)"
expect_match "$conf:$(line_of "$SD/../esc"): cannot listen on unix:$SD/\\.\\./esc/c\\.sock owner=$T mode=0600: only root can" \
	"$(cat "$WORLD_DIR/r.body")" "with FILE:LINE"
[ ! -e "$ESC" ] && ok "nothing was made through .." || fail "$ESC was made"

# The proxy's uid owns the socket's directory, so it could plant links in
# it: the maker follows none.
ln -s "$TGT" "$SD/sub/deeper/lnk"
write_conf "[session b]" "listen = unix:$B owner=$T group=4200 mode=0660" \
	"[session c]" "listen = unix:$SD/sub/deeper/lnk/c.sock owner=$T mode=0600"
expect_eq 409 "$(reload)" "a socket through a planted directory link: refused (409)"
expect_match "$conf:$(line_of "lnk/c.sock"): cannot listen on unix:$SD/sub/deeper/lnk/c.sock owner=$T mode=0600" \
	"$(cat "$WORLD_DIR/r.body")" "with FILE:LINE"
expect_match "$SD/sub/deeper/lnk is a symbolic link or not a directory: not followed" \
	"$(cat "$WORLD_DIR/proxy.out")" "the log says the link was not followed"
[ ! -e "$TGT/c.sock" ] && ok "nothing was made where the link points" || fail "$TGT/c.sock was made"
ln -s "$TGT/c.sock" "$SD/sub/deeper/c.sock"
write_conf "[session b]" "listen = unix:$B owner=$T group=4200 mode=0660" \
	"[session c]" "listen = unix:$SD/sub/deeper/c.sock owner=$T mode=0600"
expect_eq 409 "$(reload)" "a socket whose name is a planted link: refused (409)"
expect_match "$SD/sub/deeper/c.sock exists and is not a socket; refusing to replace it" \
	"$(cat "$WORLD_DIR/proxy.out")" "the log says it is not a socket"
[ -L "$SD/sub/deeper/c.sock" ] && [ ! -e "$TGT/c.sock" ] && ok "the link is left, nothing made where it points" ||
	fail "the link was replaced or followed"
expect_eq "$gen" "$(generation)" "after each refusal the old config stays in force"
expect_eq "660 $T 4200" "$(perm "$B")" "and b's socket is as it was"
expect_eq 200 "$(unix_try $T "$B")" "and serves"

# ---- a socket in root's socket_dir itself, then removed by a reload
E="$SD/e.sock"
write_conf "[session b]" "listen = unix:$B owner=$T group=4200 mode=0660" \
	"[session e]" "listen = unix:$E owner=4103 mode=0600"
expect_eq 200 "$(reload)" "reload: a socket for uid 4103 in socket_dir itself"
expect_eq "600 4103 65532" "$(perm "$E")" "$E: mode 0600, owner 4103"
expect_eq 200 "$(unix_try 4103 "$E")" "uid 4103 gets through on it"
write_conf "[session b]" "listen = unix:$B owner=$T group=4200 mode=0660"
expect_eq 200 "$(reload)" "reload: session e is removed"
[ ! -e "$E" ] && ok "its socket is removed from root's socket_dir" || fail "$E is left behind"

# ---- a stale socket in the way is replaced, a live one is not
ST="$SD/stale.sock"
LV="$SD/live.sock"
in_px "$WORLD_PYTHON" -c "import socket; s=socket.socket(socket.AF_UNIX); s.bind('$ST')"
in_px "$WORLD_PYTHON" -c "import socket, time; s=socket.socket(socket.AF_UNIX); s.bind('$LV'); s.listen(1); time.sleep(60)" &
live=$!
i=0
while [ ! -S "$LV" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
write_conf "[session b]" "listen = unix:$B owner=$T group=4200 mode=0660" \
	"[session s]" "listen = unix:$ST owner=4103 mode=0600"
expect_eq 200 "$(reload)" "reload: a socket where a stale one was"
expect_eq "600 4103 65532" "$(perm "$ST")" "the stale socket is replaced: mode 0600, owner 4103"
expect_eq 200 "$(unix_try 4103 "$ST")" "and serves uid 4103"
gen=$(generation)
write_conf "[session b]" "listen = unix:$B owner=$T group=4200 mode=0660" \
	"[session s]" "listen = unix:$ST owner=4103 mode=0600" \
	"[session l]" "listen = unix:$LV owner=4103 mode=0600"
expect_eq 409 "$(reload)" "reload: a socket where a live one is: refused (409)"
expect_match "another process is serving $LV" "$(cat "$WORLD_DIR/proxy.out")" "the log says it is served"
expect_eq "$gen" "$(generation)" "the old config stays in force"
expect_eq "755 0 0" "$(perm "$LV")" "the live socket is left as it was"
kill "$live" 2>/dev/null
wait "$live" 2>/dev/null

# ---- socket_dir itself: checked, and read at start only
gen=$(generation)
write_conf "[session b]" "listen = unix:$B owner=$T group=4200 mode=0660"
sed -i "s|^socket_dir = .*|socket_dir = $SD/../x|" "$conf"
expect_eq 422 "$(reload)" "socket_dir with a .. component: the file is refused (422)"
expect_match "$conf:$(line_of socket_dir): socket_dir must be an absolute path" "$(cat "$WORLD_DIR/r.body")" \
	"with FILE:LINE, naming the key"
expect_eq "$gen" "$(generation)" "the old config stays in force"
write_conf "[session b]" "listen = unix:$B owner=$T group=4200 mode=0660"
sed -i "s|^socket_dir = .*|socket_dir = $WORLD_DIR/other|" "$conf"
expect_eq 200 "$(reload)" "a reload with another socket_dir is taken"
expect_match "a changed socket_dir takes effect at the next restart" "$(cat "$WORLD_DIR/proxy.out")" \
	"and says the change waits for a restart"
write_conf "[session b]" "listen = unix:$B owner=$T group=4200 mode=0660"
expect_eq 200 "$(reload)" "back to the first socket_dir"

# ---- a kept socket swapped for a hard link to a socket elsewhere (the
# proxy's uid may link any 0666 socket of the file system into its
# directory): the maker changes nothing
F="$WORLD_DIR/foreign.sock"
in_px "$WORLD_PYTHON" -c "import socket; s=socket.socket(socket.AF_UNIX); s.bind('$F')"
chmod 0666 "$F"
rm "$B"
ln "$F" "$B"
write_conf "[session b]" "listen = unix:$B owner=$T group=4200 mode=0600"
reload >/dev/null
expect_match "$B has other names \\(hard links\\): refused" "$(cat "$WORLD_DIR/proxy.out")" \
	"a new mode for a socket with another name: the maker refuses"
expect_eq "666 0 0" "$(perm "$F")" "the socket elsewhere keeps its owner and mode"

# ---- the maker ends with the proxy
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
expect_eq gone "$(gone "$M")" "a stopped proxy leaves no maker behind"
[ ! -e "$B" ] && ok "b's socket is removed at exit" || fail "$B is left behind"
expect_eq "666 0 0" "$(perm "$F")" "the socket it was linked to is still there"

old_maker=$M
proxy_start "$conf" || die "no proxy after the restart"
# The maker's line comes after the listeners listen: wait for the new one.
i=0
while M=$(maker_pid) && { [ "$M" = "$old_maker" ] || [ ! -d "/proc/$M" ]; } && [ $i -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
[ -n "$M" ] && [ "$M" != "$old_maker" ] && [ -d "/proc/$M" ] || die "no socket maker after the restart"
kill -KILL "$WORLD_PROXY_PID"
wait "$WORLD_PROXY_PID" 2>/dev/null
WORLD_PROXY_PID=
expect_eq gone "$(gone "$M")" "a killed proxy (SIGKILL) leaves no maker behind"

# ---- without /proc (an empty root without it mounted) the binary cannot
# be executed again: no maker, never a forked copy of the proxy
bin="${POSTERN_PROXY:-$top_builddir/postern-proxy}"
out=$(in_px unshare --mount --propagation private sh -c 'umount -l /proc && exec timeout 10 "$0" -c "$1"' \
	"$bin" "$conf" 2>&1)
expect_eq 1 $? "without /proc the proxy does not start"
expect_match "socket_dir $SD: no socket maker: cannot open /proc/self/exe to execute postern-proxy again \\(No such file or directory\\); it needs /proc mounted" \
	"$out" "and says why"
