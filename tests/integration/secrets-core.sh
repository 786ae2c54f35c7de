#!/bin/sh
# secrets-core: a process that holds a secret's value leaves no core file
# when it crashes, and the value is not in a core taken of it alive.
# postern-proxy (root, no user =, so nothing but its own hardening makes it
# not dumpable) and postern-sidecar run --secret (its supervisor and its
# engine) each hold a random value; RLIMIT_CORE is unlimited in the shell
# that starts them and core_pattern points into this test's directory
# (saved and put back at the end; %P in the name, so no two crashes
# collide).  A control, sleep crashed the same way, shows that a core
# would be seen.  gcore (gdb) of each live process, as root, finds the
# value nowhere: it is in OpenSSL's secure heap, which is MADV_DONTDUMP.
. "$top_srcdir/tests/integration/lib/world.sh"
# AddressSanitizer catches SIGSEGV, sets RLIMIT_CORE to 0 itself and maps
# terabytes of shadow memory, which gcore would try to write: a sanitizer
# build proves nothing here.
grep -q __asan_init "${POSTERN_PROXY:-$top_builddir/postern-proxy}" 2>/dev/null &&
	skip "a sanitizer build handles its own crashes and cores"
world_up --agent

command -v gcore >/dev/null 2>&1 || skip "gcore (gdb) is not installed"
[ -w /proc/sys/kernel/core_pattern ] || skip "cannot set kernel.core_pattern"

cores="$WORLD_DIR/cores"
mkdir -p "$cores"
chmod 1777 "$cores"
old_pattern=$(cat /proc/sys/kernel/core_pattern)
world_cleanup_hook() {
	printf '%s\n' "$old_pattern" >/proc/sys/kernel/core_pattern
}
printf '%s\n' "$cores/core.%P" >/proc/sys/kernel/core_pattern ||
	die "cannot set kernel.core_pattern"
ulimit -c unlimited || skip "cannot raise RLIMIT_CORE"

# has_value FILE: the value's random part is somewhere in FILE.
has_value() { grep -qaF "$MARK" "$1"; }
# crash PID WHAT: SIGSEGV it, wait for it to go, and give a second for the
# kernel to finish a core file it might write.
crash() {
	kill -SEGV "$1"
	i=0
	while [ -e "/proc/$1" ] && [ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" != Z ] &&
	    [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	sleep 1
}
# live_core PID WHAT: gcore PID; the value must not be in it.
live_core() {
	rm -f "$WORLD_DIR/live.$1"*
	if ! gcore -o "$WORLD_DIR/live" "$1" >"$WORLD_DIR/gcore.out" 2>&1 ||
	    [ ! -s "$WORLD_DIR/live.$1" ]; then
		fail "$2: gcore made no core ($(tail -n 3 "$WORLD_DIR/gcore.out"))"
		return
	fi
	if has_value "$WORLD_DIR/live.$1"; then
		fail "$2: the value is in a core taken of it alive"
	else
		ok "$2: the value is not in a core taken of it alive"
	fi
	rm -f "$WORLD_DIR/live.$1"
}

# The control: an unprotected process leaves a core there.
# Crashed only once it is sleep: a shell that takes a fatal signal before
# its exec runs the world's EXIT trap first (bash does), which puts the
# old core_pattern back.
sleep 60 &
ctl=$!
i=0
while [ "$(cat "/proc/$ctl/comm" 2>/dev/null)" != sleep ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
crash $ctl
if [ -s "$cores/core.$ctl" ]; then
	ok "control: a crashed sleep leaves $cores/core.$ctl"
else
	die "control: a crashed sleep left no core (pattern $(cat /proc/sys/kernel/core_pattern)): this test cannot see one"
fi
rm -f "$cores/core.$ctl"

# ---- postern-proxy -------------------------------------------------------
MARK=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
printf 'sk-test-%s\n' "$MARK" >"$WORLD_DIR/key"
chmod 600 "$WORLD_DIR/key"
cat >"$WORLD_DIR/postern.ini" <<EOF
[proxy]
listen = tcp:127.0.0.1:3128
log = $PROXY_LOG
dns_servers = $WORLD_DNS
[defaults]
allow_hosts = allowed.test private
secrets = k
[secret k]
from_file = $WORLD_DIR/key
placeholder_env = PX_K
inject = allowed.test header x-api-key
EOF
proxy_start "$WORLD_DIR/postern.ini" || die "no proxy"
pid=$WORLD_PROXY_PID
expect_eq 0 "$(awk '/^Max core file size/ { print $5 }' "/proc/$pid/limits")" \
	"the proxy's soft RLIMIT_CORE is 0"
live_core "$pid" "postern-proxy"
crash "$pid" "postern-proxy"
WORLD_PROXY_PID=
if [ -e "$cores/core.$pid" ]; then
	fail "postern-proxy left a core file ($(has_value "$cores/core.$pid" && echo "with the value" || echo "without the value"))"
else
	ok "postern-proxy, crashed, left no core file"
fi

# ---- postern-sidecar run --secret -----------------------------------------
MARK=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
KEY="sk-ant-api03-$MARK-0123456789"
ANTHROPIC_API_KEY="$KEY" ip netns exec "$WORLD_NS_AGENT" "${POSTERN_SIDECAR:-$top_builddir/postern-sidecar}" run \
	--bridge "$top_builddir/postern-bridge" --secret ANTHROPIC_API_KEY -- sleep 120 \
	>"$WORLD_DIR/run.out" 2>&1 &
sup=$!
# CMD starts once the engine is ready: the bridge is then a child of run.
eng= bridge= i=0
while [ $i -lt 100 ]; do
	for c in $(cat /proc/$sup/task/*/children 2>/dev/null); do
		case $(cat "/proc/$c/comm" 2>/dev/null) in
		postern-sidecar) eng=$c ;;
		postern-bridge) bridge=$c ;;
		esac
	done
	[ -n "$eng" ] && [ -n "$bridge" ] && break
	sleep 0.1
	i=$((i + 1))
done
[ -n "$eng" ] && [ -n "$bridge" ] ||
	die "run did not start its engine and CMD: $(tail -n 5 "$WORLD_DIR/run.out")"
expect_eq 0 "$(awk '/^Max core file size/ { print $5 }' "/proc/$eng/limits")" \
	"run's engine: soft RLIMIT_CORE is 0"
expect_eq unlimited "$(awk '/^Max core file size/ { print $5 }' "/proc/$bridge/limits")" \
	"CMD's side keeps the caller's RLIMIT_CORE"
live_core "$sup" "postern-sidecar run"
live_core "$eng" "run's engine"
crash "$eng" "run's engine"
if [ -e "$cores/core.$eng" ]; then
	fail "run's engine left a core file ($(has_value "$cores/core.$eng" && echo "with the value" || echo "without the value"))"
else
	ok "run's engine, crashed, left no core file"
fi
crash "$sup" "postern-sidecar run"
if [ -e "$cores/core.$sup" ]; then
	fail "postern-sidecar run left a core file ($(has_value "$cores/core.$sup" && echo "with the value" || echo "without the value"))"
else
	ok "postern-sidecar run, crashed, left no core file"
fi
# Whatever else crashed meanwhile (a restarted engine, CMD), none holds it.
for f in "$cores"/core.*; do
	[ -e "$f" ] || continue
	has_value "$f" && fail "$f holds the value"
done
wait "$sup" 2>/dev/null
:
