#!/bin/sh
# reload-perms: the proxy refuses a config file that anyone but root or
# its own user could change (sshd's StrictModes): group- or world-writable,
# owned by another uid, in a directory writable by others or owned by
# another uid, reached through a symlink into such a directory or through a
# symlink in one, or sitting right in a sticky world-writable directory.
# At start that is exit 2 with "FILE: why" (and --check says the same); at
# a reload, by any trigger, the old rules stay in force and the refusal is
# counted.  postern-sidecar's container mode refuses such a file as well.
# A file owned by the proxy's own user (user = 65532) loads, and
# so does a root-owned one under /tmp (this world's directory).
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

D="$WORLD_DIR/etc"
mkdir -m 0755 "$D"
conf="$D/postern.ini"
# base [ALLOW...]: the config, allowing allowed.test and each ALLOW.
base() {
	local h
	admin_proxy_section
	echo "[defaults]"
	echo "allow_hosts = allowed.test private"
	for h in "$@"; do echo "allow_hosts = $h private"; done
}

# refused_at_start WHAT ERE [FILE]: the proxy does not start on FILE
# (default $conf): exit 2 and "FILE: " followed by ERE; --check agrees.
refused_at_start() {
	local f
	f=${3:-$conf}
	timeout 5 ip netns exec "$WORLD_NS_PX" "$POSTERN_PROXY" -c "$f" >"$WORLD_DIR/start.out" 2>&1
	expect_eq 2 $? "$1: the proxy refuses to start (exit 2)"
	expect_match "^$f: $2" "$(cat "$WORLD_DIR/start.out")" "$1: and says why"
	"$POSTERN_PROXY" --check -c "$f" >/dev/null 2>"$WORLD_DIR/check.out"
	expect_eq 2 $? "$1: --check refuses it too"
	expect_match "^$f: $2" "$(cat "$WORLD_DIR/check.out")" "$1: with the same reason"
}

# ---- at start
base >"$conf"
chmod 0664 "$conf"
refused_at_start "group-writable file" "writable by its group \\(mode 0664\\)"
# The sidecar's container mode refuses it too, before touching the namespace.
SIDECAR="${POSTERN_SIDECAR:-$top_builddir/postern-sidecar}"
if [ -x "$SIDECAR" ]; then
	out=$(in_px timeout 5 "$SIDECAR" -c "$conf" 2>&1)
	expect_eq 2 $? "group-writable file: postern-sidecar refuses to serve it (exit 2)"
	expect_match "^$conf: writable by its group" "$out" "postern-sidecar: and says why"
	expect_eq 0 "$(in_px ip rule show priority 101 | grep -c .)" "postern-sidecar: no lock-down was installed"
	in_px "$SIDECAR" unlock >/dev/null 2>&1
fi
chmod 0646 "$conf"
refused_at_start "world-writable file" "writable by others \\(mode 0646\\)"
chmod 0644 "$conf"
chown 4321:4321 "$conf"
refused_at_start "file owned by another uid" "owned by uid 4321, not by root"
chown 0:0 "$conf"
chmod 0777 "$D"
refused_at_start "world-writable directory" "directory $D is writable by its group and by others"
chmod 0755 "$D"
chown 4321 "$D"
refused_at_start "directory owned by another uid" "directory $D is owned by uid 4321"
chown 0 "$D"

# Symlinks: the file they lead to, and the directory holding the link.
mkdir -m 0777 "$WORLD_DIR/open"
base >"$WORLD_DIR/open/real.ini"
ln -s "$WORLD_DIR/open/real.ini" "$D/link.ini"
refused_at_start "a symlink into a writable directory" \
	"directory $WORLD_DIR/open is writable" "$D/link.ini"
ln -s "$conf" "$WORLD_DIR/open/link.ini"
refused_at_start "a symlink in a writable directory" \
	"directory $WORLD_DIR/open is writable" "$WORLD_DIR/open/link.ini"
mkdir -m 1777 "$WORLD_DIR/sticky"
base >"$WORLD_DIR/sticky/p.ini"
refused_at_start "a file right in a sticky directory, like /tmp" \
	"directory $WORLD_DIR/sticky is writable by its group and by others \\(mode 1777, sticky\\)" \
	"$WORLD_DIR/sticky/p.ini"

# A Kubernetes ConfigMap as the kubelet mounts it: the volume's root is
# 0777 (an emptyDir), the files live in a root-owned 0755 directory behind
# ..data, and the container sees the volume read-only.  Writable, it is
# refused; on a read-only mount (in a mount namespace of its own) it passes.
cm="$WORLD_DIR/cm"
mkdir -m 0777 "$cm"
chmod 0777 "$cm"
mkdir -m 0755 "$cm/..2026_1"
base >"$cm/..2026_1/postern.ini"
ln -s ..2026_1 "$cm/..data"
ln -s ..data/postern.ini "$cm/postern.ini"
"$POSTERN_PROXY" --check -c "$cm/postern.ini" >/dev/null 2>"$WORLD_DIR/check.out"
expect_eq 2 $? "a ConfigMap layout in a writable 0777 directory is refused"
expect_match "^$cm/postern.ini: directory $cm is writable" "$(cat "$WORLD_DIR/check.out")" \
	"naming the volume's directory"
out=$(unshare -m --propagation private sh -c 'mount --bind "$1" "$1" &&
	mount -o remount,bind,ro "$1" && exec "$2" --check -c "$1/postern.ini"' sh "$cm" "$POSTERN_PROXY" 2>&1)
expect_eq 0 $? "the same mounted read-only, as the kubelet mounts it, passes --check"
expect_match "^$cm/postern.ini: ok" "$out" "and is summarised"
# A file writable by others stays refused on a read-only mount: another,
# writable mount of the same volume (one the agent's container shares)
# could still rewrite it in place.
chmod 0666 "$cm/..2026_1/postern.ini"
out=$(unshare -m --propagation private sh -c 'mount --bind "$1" "$1" &&
	mount -o remount,bind,ro "$1" && exec "$2" --check -c "$1/postern.ini"' sh "$cm" "$POSTERN_PROXY" 2>&1)
expect_eq 2 $? "a world-writable config on a read-only mount is refused all the same"
expect_match "writable by its group and by others \(mode 0666\)" "$out" "saying it is writable"
chmod 0644 "$cm/..2026_1/postern.ini"

# The proxy's own user may own it (a root-owned directory under /tmp, the
# world's, is fine: /tmp is sticky and root's, and above the file's own).
cat >"$D/own.ini" <<EOF
[proxy]
listen = tcp:127.0.0.1:3128
log = $PROXY_LOG
dns_servers = $WORLD_DNS
user = 65532
[defaults]
allow_hosts = allowed.test private
EOF
chown 65532:65532 "$D/own.ini"
"$POSTERN_PROXY" --check -c "$D/own.ini" >"$WORLD_DIR/check.out" 2>&1
expect_eq 0 $? "a file owned by the proxy's own user passes --check"
proxy_start "$D/own.ini" || fail "a file owned by the proxy's own user (65532) loads"
expect_eq 200 "$(curl_status -x http://127.0.0.1:3128 https://allowed.test/)" "and serves"
proxy_reload
sleep 0.5
expect_match "reloaded $D/own.ini \\(SIGHUP\\): generation 2" "$(cat "$WORLD_DIR/proxy.out")" \
	"and its reload, as uid 65532, is taken"
proxy_stop
# The same file naming no user (the proxy stays root) is refused.
sed -i '/^user = /d' "$D/own.ini"
refused_at_start "a file owned by a uid the proxy does not run as" "owned by uid 65532" "$D/own.ini"

# ---- at reload
base >"$conf"
proxy_start "$conf" || die "no proxy on a root-owned 0644 file in a 0755 directory"
admin_wait || die "no admin socket"
px() { curl_status -x http://127.0.0.1:3128 "$@"; }
expect_eq 403 "$(px https://other.test/)" "other.test is not allowed at first"
good=$(sha12 "$conf")

# still_old WHAT ERE: the reload was refused with "$conf: ERE", and the
# old rules are in force.
still_old() {
	expect_eq 1 "$(generation)" "$1: generation 1 stays"
	expect_eq "$good" "$(status_get 's["config"]["hash"]')" "$1: the old hash stays"
	expect_eq 403 "$(px https://other.test/)" "$1: other.test is still refused"
	expect_eq 200 "$(px https://allowed.test/)" "$1: allowed.test still works"
	expect_match "^$conf: $2" "$(status_get '"\n".join(s["last_reload"]["errors"])')" \
		"$1: the refusal says why"
}

# 1. World-writable, then an edit in place (the inotify watch).
fails0=$(metrics_get postern_config_reload_failures_total)
chmod 0666 "$conf"
base other.test >"$WORLD_DIR/wide"
write_in_place "$WORLD_DIR/wide" "$conf"
sleep 1
still_old "world-writable file, inotify" "writable by its group and by others \\(mode 0666\\)"
fails1=$(metrics_get postern_config_reload_failures_total)
[ "$fails1" -gt "$fails0" ] && ok "the refusal is counted ($fails0 -> $fails1)" ||
	fail "postern_config_reload_failures_total did not grow ($fails0 -> $fails1)"
expect_match "reload \\(inotify\\) refused: $conf: writable by its group and by others" "$(cat "$WORLD_DIR/proxy.out")" \
	"and logged"

# 2. Group-writable directory: SIGHUP.
chmod 0775 "$D"
chmod 0644 "$conf"
proxy_reload
sleep 0.5
still_old "group-writable directory, SIGHUP" "directory $D is writable by its group \\(mode 0775\\)"
expect_match "reload \\(SIGHUP\\) refused: $conf: directory $D" "$(cat "$WORLD_DIR/proxy.out")" \
	"SIGHUP: logged"

# 3. Owned by another uid: POST /reload and ctl reload.
chmod 0755 "$D"
chown 4321 "$conf"
code=$(admin_curl -o "$WORLD_DIR/reload.body" -w '%{http_code}' -X POST http://postern/reload)
expect_eq 422 "$code" "owned by another uid: POST /reload is refused"
expect_match "owned by uid 4321" "$(cat "$WORLD_DIR/reload.body")" "POST /reload: says why"
out=$(ctl reload --admin "$ADMIN_SOCK" 2>&1)
expect_eq 1 $? "owned by another uid: ctl reload exits 1"
expect_match "owned by uid 4321" "$out" "ctl reload: says why"
still_old "owned by another uid, POST /reload" "owned by uid 4321"

# 4. Root's again: the same content is taken, and other.test allowed.
chown 0 "$conf"
code=$(admin_curl -o /dev/null -w '%{http_code}' -X POST http://postern/reload)
expect_eq 200 "$code" "root's file, 0644, in a 0755 directory: the reload is taken"
expect_eq 200 "$(px https://other.test/)" "and its new rule is in force"

proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
