#!/bin/sh
# reload-broken: a broken edit (a syntax error, then a bad host pattern) is
# refused by every trigger (inotify, POST /reload, ctl reload, SIGHUP): the
# old rules keep working, an established tunnel stays, the errors name
# FILE:LINE, the failure counter grows; fixing the file is picked up
# within a second.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

conf="$WORLD_DIR/etc/postern.ini"
mkdir -p "$WORLD_DIR/etc"
base_conf() {
	admin_proxy_section
	cat <<-EOF
		[defaults]
		allow_hosts = allowed.test private, allowed.test:7 private
	EOF
}
base_conf >"$conf"
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
good_hash=$(sha12 "$conf")
px() { curl_status -x http://127.0.0.1:3128 "$@"; }
expect_eq 200 "$(px https://allowed.test/)" "allowed.test is allowed"
expect_eq 403 "$(px https://other.test/)" "other.test is not"

in_px "$WORLD_PYTHON" "$ADMIN_LIB/load.py" hold --proxy 127.0.0.1:3128 --target allowed.test:7 \
	--ready "$WORLD_DIR/hold.ready" --stop "$WORLD_DIR/hold.stop" >"$WORLD_DIR/hold.out" 2>&1 &
hold=$!
i=0
while [ ! -e "$WORLD_DIR/hold.ready" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
[ -e "$WORLD_DIR/hold.ready" ] || die "the held tunnel did not open"

# still_old WHAT: the old rules are in force and say so.
still_old() {
	expect_eq 1 "$(generation)" "$1: generation 1 stays"
	expect_eq "$good_hash" "$(status_get 's["config"]["hash"]')" "$1: the old hash stays"
	expect_eq 200 "$(px https://allowed.test/)" "$1: allowed.test still works"
	expect_eq 403 "$(px https://other.test/)" "$1: other.test still refused (the edit's rule is not used)"
	expect_eq false "$(status_get 's["last_reload"]["ok"]')" "$1: status says the reload was refused"
}

# 1. A syntax error, written in place.  Line 9 is the bad one.
{ base_conf; echo "allow_hosts = other.test private"; echo "this is not a key"; } >"$WORLD_DIR/bad1"
write_in_place "$WORLD_DIR/bad1" "$conf"
sleep 0.8
expect_eq 1 "$(metrics_get postern_config_reload_failures_total)" "syntax error: one refused reload"
expect_match "^\"$conf:9: " "$(status_get 'json.dumps(s["last_reload"]["errors"][0])')" \
	"syntax error: the error names $conf:9"
expect_match "reload \\(inotify\\) refused: $conf:9: " "$(cat "$WORLD_DIR/proxy.out")" \
	"syntax error: logged with FILE:LINE"
still_old "syntax error"

# 2. A bad pattern (a wildcard over a top-level label), by rename.
{ base_conf; echo "allow_hosts = other.test private"; echo "allow_hosts = *.test"; } >"$WORLD_DIR/bad2"
write_by_rename "$WORLD_DIR/bad2" "$conf"
sleep 0.8
expect_eq 2 "$(metrics_get postern_config_reload_failures_total)" "bad pattern: refused"
expect_match "^\"$conf:9: " "$(status_get 'json.dumps(s["last_reload"]["errors"][0])')" \
	"bad pattern: the error names $conf:9"
still_old "bad pattern"

# The other triggers refuse it too, and say why.
out=$(admin_curl -X POST -w '\n%{http_code}' http://postern/reload)
expect_eq 422 "$(printf '%s\n' "$out" | tail -n 1)" "POST /reload: 422"
expect_eq false "$(printf '%s\n' "$out" | head -n 1 | "$WORLD_PYTHON" -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["taken"]))')" \
	"POST /reload: taken false"
expect_match "$conf:9: " "$(printf '%s\n' "$out" | head -n 1 | "$WORLD_PYTHON" -c 'import json,sys; print("\n".join(json.load(sys.stdin)["errors"]))')" \
	"POST /reload: the errors name $conf:9"
out=$(ctl reload -c "$conf")
expect_eq 1 $? "ctl reload -c FILE (a broken FILE) exits 1"
expect_match '^refused: generation 1 ' "$out" "ctl reload says refused"
expect_match "^$conf:9: " "$out" "ctl reload prints the FILE:LINE error"
proxy_reload
sleep 0.3
expect_eq 5 "$(metrics_get postern_config_reload_failures_total)" "inotify, inotify, POST, ctl, SIGHUP: 5 refused"
expect_eq 0 "$(metrics_get postern_config_reloads_total)" "and none taken"
still_old "after every trigger"

# An error that quotes bytes from the file: /status stays valid JSON, and
# the text for a terminal shows control bytes escaped, never raw.
{ base_conf; printf 'allow_hosts = caf\303\251.test, \377.test\n\001bad = 1\n'; } >"$WORLD_DIR/bad3"
write_by_rename "$WORLD_DIR/bad3" "$conf"
sleep 0.8
expect_eq 3 "$(status_get 'len(s["last_reload"]["errors"])')" "raw bytes: three errors, as JSON"
out=$(ctl status -c "$conf")
expect_eq 0 $? "raw bytes: ctl status works"
expect_match '^ +.*:9: .*\\x01bad' "$out" "raw bytes: the control byte is shown as \\x01"
expect_eq 0 "$(printf '%s' "$out" | tr -d '\n\t' | LC_ALL=C grep -c '[[:cntrl:]]')" \
	"raw bytes: no control byte reaches the terminal"
still_old "raw bytes"

# 3. The fix, in place: in force within a second.
{ base_conf; echo "allow_hosts = other.test private"; } >"$WORLD_DIR/good"
write_in_place "$WORLD_DIR/good" "$conf"
ms=$(wait_generation 2 1)
expect_eq 0 $? "the fixed file is in force after $ms ms"
expect_eq 200 "$(px https://other.test/)" "other.test is allowed now"
expect_eq 200 "$(px https://allowed.test/)" "allowed.test still is"
expect_eq true "$(status_get 's["last_reload"]["ok"]')" "status: the reload was taken"
expect_eq '[]' "$(status_get 's["last_reload"]["errors"]')" "status: no errors"
expect_eq 1 "$(metrics_get postern_config_reloads_total)" "one reload taken"
expect_audit "the new decision carries generation 2 and its hash" host=other.test decision=allow \
	generation=2 "config=$(sha12 "$conf")"

touch "$WORLD_DIR/hold.stop"
wait "$hold"
expect_eq 0 $? "the tunnel opened before the broken edits is still up"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
