#!/bin/sh
# reload-secrets: a reload that breaks a secret (a secret whose variable
# the proxy lacks, a binding to a host the session does not allow) is
# refused: the config in force stays, with its secrets, the error names
# FILE:LINE; a good edit is then taken.  The value is in no reply of the
# admin socket (/status, /metrics, POST /reload, ctl reload), no log line
# and no audit line.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

VALUE="tsk-$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')"
export PX_TEST_KEY="$VALUE"
unset PX_TEST_UNSET

conf="$WORLD_DIR/etc/postern.ini"
mkdir -p "$WORLD_DIR/etc" "$WORLD_DIR/state"
chmod 700 "$WORLD_DIR/state"
# conf [DEFAULTS-LINE [SECTION-LINES]]: the base config, with one more line
# in [defaults] and more lines after [secret k].
conf() {
	admin_proxy_section "upstream_ca_file = $WORLD_CA" "state_dir = $WORLD_DIR/state"
	cat <<-EOF
		[defaults]
		allow_hosts = allowed.test private
		secrets = k
		${1:-}
		[secret k]
		from_env = PX_TEST_KEY
		inject = allowed.test header x-api-key
		${2:-}
	EOF
}
base_conf() { conf; }
base_conf >"$conf"
# line_of TEXT FILE: the number of the first line that is TEXT.
line_of() { grep -nxF -- "$1" "$2" | head -n 1 | cut -d: -f1; }
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
good_hash=$(sha12 "$conf")
# allowed.test is bound to k, so its tunnels are terminated: the
# client trusts the session's CA as well as the world's.
cat "$WORLD_DIR/state/ca/default.pem" "$WORLD_CA" >"$WORLD_DIR/bundle.pem"
px() { curl_status -x http://127.0.0.1:3128 --cacert "$WORLD_DIR/bundle.pem" "$@"; }
expect_eq 200 "$(px https://allowed.test/)" "allowed.test is allowed"
# The value read from the environment is not left in the proxy's
# /proc/PID/environ (the world execs the proxy as that very PID).
expect_eq 0 "$(tr '\0' '\n' <"/proc/$WORLD_PROXY_PID/environ" | grep -cF "$VALUE")" \
	"the from_env value is not in the proxy's /proc/PID/environ"
PH_K=$(in_px curl -sS --max-time 5 http://127.0.0.1:3128/.well-known/postern/session |
	sed -n 's/^env PX_TEST_KEY //p')
[ -n "$PH_K" ] || die "no placeholder"

still_old() {
	expect_eq 1 "$(generation)" "$1: generation 1 stays"
	expect_eq "$good_hash" "$(status_get 's["config"]["hash"]')" "$1: the old hash stays"
	expect_eq 200 "$(px https://allowed.test/)" "$1: allowed.test still works"
	expect_eq false "$(status_get 's["last_reload"]["ok"]')" "$1: status says the reload was refused"
}

# 1. A secret whose variable the proxy does not have.
conf "secrets = u" "[secret u]
from_env = PX_TEST_UNSET
inject = allowed.test header x-other" >"$WORLD_DIR/bad1"
l=$(line_of "secrets = u" "$WORLD_DIR/bad1")
write_by_rename "$WORLD_DIR/bad1" "$conf"
sleep 0.8
expect_eq 1 "$(metrics_get postern_config_reload_failures_total)" "unset variable: one refused reload"
expect_eq "\"$conf:$l: secret u: \$PX_TEST_UNSET is not set\"" \
	"$(status_get 'json.dumps(s["last_reload"]["errors"][0])')" "unset variable: the error names FILE:LINE"
still_old "unset variable"

# 2. A binding to a host the session does not allow.
conf "" "inject = other.test header x-api-key" >"$WORLD_DIR/bad2"
l=$(line_of "secrets = k" "$WORLD_DIR/bad2")
write_by_rename "$WORLD_DIR/bad2" "$conf"
sleep 0.8
expect_eq 2 "$(metrics_get postern_config_reload_failures_total)" "unallowed binding: refused"
expect_match "$conf:$l: secret k is bound to other.test:443, which session default does not allow" \
	"$(status_get 'json.dumps(s["last_reload"]["errors"][0])')" "unallowed binding: the error names FILE:LINE"
still_old "unallowed binding"
out_post=$(admin_curl -X POST -w '\n%{http_code}' http://postern/reload)
expect_eq 422 "$(printf '%s\n' "$out_post" | tail -n 1)" "POST /reload: 422"
out_ctl=$(ctl reload -c "$conf")
expect_match "^$conf:$l: secret k is bound to other.test:443" "$out_ctl" "ctl reload prints it"

# 3. A good edit is taken.
conf "allow_hosts = other.test private" >"$WORLD_DIR/good"
write_by_rename "$WORLD_DIR/good" "$conf"
sleep 0.8
expect_eq 2 "$(generation)" "a good edit is taken"
expect_eq 200 "$(px https://other.test/)" "and its rule is in force"
expect_eq 200 "$(px -H "x-api-key: $PH_K" https://allowed.test/after-reload)" \
	"a request with the placeholder after the reload"
expect_upstream "after the reload the upstream receives the value read at start" \
	"target=/after-reload" "head~(?mi)^x-api-key: $VALUE\r\$"

# The value is nowhere the proxy writes (the upstreams' logs are not the
# proxy's: once the value is injected, they hold it).
all="$(admin_get /status)
$(admin_get /status?format=text)
$(admin_get /metrics)
$out_post
$out_ctl
$(cat "$WORLD_DIR/proxy.out")
$(cat "$PROXY_LOG")"
expect_no_match "$VALUE" "$all" "the value is in no reply, log or audit line"
expect_match "secret u: .PX_TEST_UNSET is not set" "$(cat "$WORLD_DIR/proxy.out")" \
	"(the log does name the secret and its variable)"
