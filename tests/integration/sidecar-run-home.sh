#!/bin/sh
# sidecar-run-home.sh: CMD's HOME under `postern-sidecar run` started by
# root, whose own HOME (/root) CMD, never root, cannot use:
#   - a uid with no passwd entry gets a fresh, empty home of its own in
#     its jail (mode 0700, its owner), writable, and a warning on stderr;
#   - so does nobody, whose home is /nonexistent, without the warning;
#   - a uid whose passwd home is a directory it owns gets that;
#   - a HOME of the caller's that CMD's uid may write is kept;
#   - --home DIR: HOME is DIR.
. "$top_srcdir/tests/integration/sidecar-lib.sh"
sc_world_up
[ -x "$(dirname "$SIDECAR")/postern-bridge" ] || skip "postern-bridge is not built"

# Outside /tmp, /var/tmp, /run and /dev/shm, which run replaces.
CHOSEN=$(mktemp -d /var/lib/postern-home.XXXXXX) || die "mktemp"
world_cleanup_hook() {
	rm -rf "$CHOSEN"
}
NOPW=4242
getent passwd $NOPW >/dev/null && skip "uid $NOPW has a passwd entry here"

probe='echo "home=$HOME"; stat -c "mode=%a:%u" "$HOME"; echo "entries=$(ls -A "$HOME" | wc -l)"
	echo x >"$HOME/w" && echo writable'
out=$(in_px env HOME=/root "$SIDECAR" run --uid $NOPW -- sh -c "$probe" 2>&1)
diag "no passwd entry: $out"
expect_match "^home=/run/postern/home$" "$out" "a uid with no home gets a fresh one"
expect_match "^mode=700:$NOPW$" "$out" "0700, its own"
expect_match "^entries=0$" "$out" "empty"
expect_match "^writable$" "$out" "and writable by CMD"
expect_match "warning: uid $NOPW has no home directory of its own.*--home DIR" "$out" \
	"a warning says so, and how to choose one"

if [ "$(getent passwd 65534 | cut -d: -f6)" = /nonexistent ]; then
	out=$(in_px env HOME=/root "$SIDECAR" run -- sh -c "$probe" 2>&1)
	expect_match "^home=/run/postern/home$" "$out" "nobody (home /nonexistent) gets a fresh one too"
	expect_match "^writable$" "$out" "writable by it"
	expect_no_match "warning: uid" "$out" "without a warning: it has no home by design"
fi

pw=$(getent passwd $AGENT_UID | cut -d: -f6)
if [ -n "$pw" ] && [ -d "$pw" ] && [ "$(stat -c %u "$pw")" = $AGENT_UID ] &&
	[ "${pw#/tmp/}" = "$pw" ] && [ "${pw#/run/}" = "$pw" ]; then
	out=$(in_px env HOME=/root "$SIDECAR" run --uid $AGENT_UID -- sh -c 'echo "home=$HOME"' 2>&1)
	expect_match "^home=$pw$" "$out" "uid $AGENT_UID gets its passwd home, $pw"
	expect_no_match "warning: uid" "$out" "without a warning"
else
	diag "uid $AGENT_UID has no passwd home of its own here: that part is skipped"
fi

chown $NOPW:$NOPW "$CHOSEN"
out=$(in_px env HOME="$CHOSEN" "$SIDECAR" run --uid $NOPW -- sh -c 'echo "home=$HOME"' 2>&1)
expect_match "^home=$CHOSEN$" "$out" "a HOME of the caller's that CMD's uid owns is kept"
expect_no_match "warning: uid" "$out" "without a warning"
out=$(in_px env HOME=/root "$SIDECAR" run --uid $NOPW --home "$CHOSEN" -- sh -c "$probe" 2>&1)
diag "--home: $out"
expect_match "^home=$CHOSEN$" "$out" "--home DIR: HOME is DIR"
expect_match "^writable$" "$out" "CMD writes there"
expect_eq x "$(cat "$CHOSEN/w" 2>/dev/null)" "and the file is in DIR on the host"
expect_no_match "warning: uid" "$out" "no warning when chosen"
expect_match "absolute" "$(in_px "$SIDECAR" run --home rel -- true 2>&1)" "--home wants an absolute path"
