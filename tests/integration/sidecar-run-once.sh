#!/bin/sh
# sidecar-run-once.sh: postern-sidecar run reads its config once.  An
# ordinary user runs CMD with -c FILE, FILE its own; CMD appends an
# allow_hosts line to it, and the host stays refused: no inotify reload, no
# reload on SIGHUP to the engine, POST /reload on the engine's admin socket
# is refused (422) and the generation stays 1.
. "$top_srcdir/tests/integration/sidecar-lib.sh"
sc_world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"
[ -x "$top_builddir/postern-bridge" ] || skip "postern-bridge is not built"
if ! world_userns_ok $AGENT_UID; then
	skip "uid $AGENT_UID cannot create a user namespace here"
fi

# The user's home stand-in lives outside /tmp, /var/tmp, /run and
# /dev/shm: run gives CMD empty ones of those, and CMD must see its file.
BINS=$(world_bins_for $AGENT_UID "$SIDECAR" "$top_builddir/postern-bridge") ||
	die "cannot give uid $AGENT_UID the binaries"
XDG=$(mktemp -d /var/lib/postern-once.XXXXXX) || die "mktemp"
world_cleanup_hook() { rm -rf "$XDG"; }
chmod 0700 "$XDG"
chown $AGENT_UID:$AGENT_UID "$XDG"
CONF="$XDG/run.ini"
ADMIN_SOCK="$XDG/admin.sock"
cat >"$CONF" <<-INI
	[proxy]
	log = stderr
	admin = unix:$ADMIN_SOCK
	[defaults]
	allow_hosts = allowed.test:80 private
INI
# The user's own file, as ~/run.ini would be.
chown $AGENT_UID:$AGENT_UID "$CONF"
chmod 0600 "$CONF"

# The outside: once CMD's edit is in the file, SIGHUP the engine (the
# sidecar's child that still runs postern-sidecar) and POST /reload.
(
	i=0
	while ! grep -q other.test "$CONF" 2>/dev/null && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	spid=$(pgrep -o -f "postern-sidecar run -c $CONF")
	epid=$(pgrep -P "$spid" -f "postern-sidecar run" | head -n 1)
	if [ -n "$epid" ]; then
		kill -HUP "$epid"
		echo "hup $epid" >"$WORLD_DIR/hup.out"
	fi
	admin_curl -o "$WORLD_DIR/reload.body" -w '%{http_code}\n' -X POST \
		http://postern/reload >"$WORLD_DIR/reload.code" 2>&1
) &
outside=$!

out=$(in_px setpriv --reuid $AGENT_UID --regid $AGENT_UID --clear-groups \
	env XDG_RUNTIME_DIR="$XDG" "$BINS/postern-sidecar" run -c "$CONF" -- sh -c '
	curl -sS --max-time 10 -o /dev/null -w "before %{http_code}\n" http://other.test/
	echo "allow_hosts = other.test:80 private" >>"$1" && echo appended
	# Past the watch debounce (at most 800 ms), the SIGHUP and the POST.
	sleep 2
	curl -sS --max-time 10 -o /dev/null -w "after %{http_code}\n" http://other.test/
	curl -sS --max-time 10 -o /dev/null -w "still %{http_code}\n" http://allowed.test/
	' sh "$CONF" 2>&1)
rc=$?
wait $outside
diag "$out"
expect_eq 0 $rc "CMD ran"
expect_match "^before 403$" "$out" "other.test is refused at first"
expect_match "^appended$" "$out" "CMD, the file's owner, appended an allow_hosts line to it"
expect_match "^after 403$" "$out" "other.test stays refused after the edit, the SIGHUP and POST /reload"
expect_match "^still 200$" "$out" "the rules read at start still work"
expect_match "^hup [0-9]" "$(cat "$WORLD_DIR/hup.out" 2>/dev/null)" "the engine was sent SIGHUP"
expect_eq 422 "$(cat "$WORLD_DIR/reload.code" 2>/dev/null)" "POST /reload is refused"
expect_match "reads its config once" "$(cat "$WORLD_DIR/reload.body" 2>/dev/null)" \
	"and says the config is read once"
exit 0
