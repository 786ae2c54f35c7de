#!/bin/sh
# reload-audit: every audit line (decision, close, revoke) carries the
# config generation and the short hash of the file that decided it, also
# for a connection that was decided before a reload and closes after it.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

conf="$WORLD_DIR/postern.ini"
# write_conf ALLOW...
write_conf() {
	{
		admin_proxy_section "revoke = yes"
		echo "[defaults]"
		for h in "$@"; do echo "allow_hosts = $h private"; done
	} >"$conf"
}
write_conf allowed.test allowed.test:7 other.test:7
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
h1=$(sha12 "$conf")

expect_eq 200 "$(curl_status -x http://127.0.0.1:3128 https://allowed.test/)" "generation 1: a tunnel"
expect_eq 403 "$(curl_status -x http://127.0.0.1:3128 https://deny.test/)" "generation 1: a refusal"
# Two tunnels decided by generation 1 that outlive it: one the next
# generation still allows, one it revokes.
for t in keep:allowed.test:7 gone:other.test:7; do
	n=${t%%:*}
	in_px "$WORLD_PYTHON" "$ADMIN_LIB/load.py" hold --proxy 127.0.0.1:3128 --target "${t#*:}" \
		--ready "$WORLD_DIR/$n.ready" --stop "$WORLD_DIR/$n.stop" --max-seconds 30 \
		>"$WORLD_DIR/$n.out" 2>&1 &
	eval "pid_$n=\$!"
	i=0
	while [ ! -e "$WORLD_DIR/$n.ready" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
done

write_conf allowed.test allowed.test:7
expect_eq 0 "$(ctl reload -c "$conf" >/dev/null; echo $?)" "reload to generation 2"
h2=$(sha12 "$conf")
# The watch may see the rewrite and reload it before ctl's reload comes in;
# ctl's then makes one generation more of the same file.  The decisions
# below are the generation in force now's.
g2=$(generation)
[ "$g2" -ge 2 ] && ok "generation $g2 is in force" || fail "generation $g2 after the reload"
expect_eq 200 "$(curl_status -x http://127.0.0.1:3128 https://allowed.test/)" "generation 2: a tunnel"
touch "$WORLD_DIR/keep.stop" "$WORLD_DIR/gone.stop"
wait "$pid_keep"
expect_eq 0 $? "the kept tunnel lived through the reload"
wait "$pid_gone"
expect_audit "the other tunnel was revoked" event=revoke host=other.test
expect_audit "the kept tunnel's close line is written" event=close host=allowed.test port=7

# lacking EVENT FIELD: how many EVENT lines have no FIELD, or one that is
# not a generation number (generation) or 12 hex digits (config).
lacking() {
	"$WORLD_PYTHON" -c '
import json, re, sys
n = 0
for ln in open(sys.argv[1], encoding="utf-8", errors="replace"):
    try:
        j = json.loads(ln)
    except ValueError:
        continue
    if j.get("event") != sys.argv[2]:
        continue
    v = j.get(sys.argv[3])
    good = isinstance(v, int) and v >= 1 if sys.argv[3] == "generation" else \
        isinstance(v, str) and re.fullmatch("[0-9a-f]{12}", v) is not None
    n += not good
print(n)' "$PROXY_LOG" "$1" "$2"
}
for ev in decision close revoke; do
	n=$(audit_count event=$ev)
	[ "$n" -gt 0 ] || { fail "no $ev line to check"; continue; }
	expect_eq 0 "$(lacking $ev generation)" "every $ev line ($n) has its generation"
	expect_eq 0 "$(lacking $ev config)" "every $ev line ($n) has its config hash"
done
expect_audit "generation 1's decisions name generation 1's hash" event=decision generation=1 "config=$h1"
expect_audit "generation $g2's decisions name its hash" event=decision generation=$g2 "config=$h2"
expect_eq 0 "$(audit_count event=decision generation=1 "config!=$h1")" "no generation 1 decision with another hash"
expect_eq 0 "$(audit_count event=decision generation=$g2 "config!=$h2")" "no generation $g2 decision with another hash"
expect_audit "the kept tunnel's close line names generation 1, which decided it" \
	event=close host=allowed.test port=7 generation=1
expect_audit "the revoke line names generation 2, which revoked it" event=revoke host=other.test generation=2

proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
