#!/bin/sh
# sidecar-run-learn.sh: postern-sidecar run --learn.
#   - CMD runs in report mode; when it exits, stderr has a ready config
#     block of what the allowlist would refuse: one allow_hosts item per
#     rule, deduplicated, each after a comment with its count and first
#     request (the first path for plain HTTP), and the same items as
#     --allow flags on one line;
#   - a host whose address was refused as never-reachable learns
#     "private", with a comment naming the address (in this world every
#     upstream is in 10.200.0.0/16, so every item needs it: report mode
#     relaxes the allowlist, never the ranges, so CMD's requests are
#     refused in the learning run and learned all the same);
#   - --learn=FILE writes the block there (replacing a file, and saying
#     so) and prints a check and a run line: followed as printed, the
#     check accepts FILE (as root, and as the user who ran --learn, whose
#     file it is), and the run line, enforcing, passes where the run
#     without it is refused;
#   - run --check: a bad file gives FILE:LINE and exit 2; a session with
#     no listener of its own passes, as run serves it;
#   - CMD's exit status is kept;
#   - a path that holds what the reader splits on (',', a blank, '*') is
#     learned as one rule for its own host: FILE, fed back with -c, allows
#     no CONNECT to a host CMD never asked for.
WORLD_DNS_EXTRA="foo.attacker.test=10.200.1.2"
. "$top_srcdir/tests/integration/sidecar-lib.sh"
sc_world_up
[ -x "$top_builddir/postern-bridge" ] || skip "postern-bridge is not built"

XDG="$WORLD_DIR/xdg"
mkdir -m 0711 "$XDG"
cp "$WORLD_CA" "$WORLD_DIR/ca.pem"
chmod 644 "$WORLD_DIR/ca.pem"
run() { in_px env XDG_RUNTIME_DIR="$XDG" "$SIDECAR" run "$@" 3<"$WORLD_DIR/ca.pem"; }

# Two names over HTTPS (CONNECT), one of them twice; plain HTTP with a
# path, three times on one host; the private host; then exit 7.
cmd='for h in allowed.test other.test allowed.test; do
		curl -sS --max-time 5 --cacert /dev/fd/3 -o /dev/null -w "https $h %{http_code}\n" https://$h/
	done
	for p in /simple/a /simple/b /other; do
		curl -sS --max-time 5 -o /dev/null -w "http api.example.test%{http_code}\n" http://api.example.test$p
	done
	curl -sS --max-time 5 -o /dev/null -w "priv %{http_code}\n" http://priv.test/p
	exit 7'

out=$(run -- sh -c "$cmd" 2>&1)
diag "enforce, no rules: $out"
expect_no_match "200" "$out" "enforcing, the built-in config lets none of them through"

out=$(run --learn -- sh -c "$cmd" 2>"$WORLD_DIR/err1")
rc=$?
err=$(cat "$WORLD_DIR/err1")
diag "stderr: $err"
expect_eq 7 $rc "run --learn exits with CMD's status"
expect_match "NOT ENFORCING" "$err" "--learn is report mode, and says so"
blk=$(sed -n '/^# learned by postern/,$p' "$WORLD_DIR/err1")
expect_match "^# 2 requests, first CONNECT allowed.test:443$" "$blk" "allowed.test: its count and first request"
expect_match "^allow_hosts = allowed.test private$" "$blk" "and its item, with private"
expect_match "^# 1 request, first CONNECT other.test:443$" "$blk" "other.test: counted once"
expect_match "^allow_hosts = other.test private$" "$blk" "other.test's item"
expect_match "^# 3 requests, first GET /simple/a$" "$blk" "plain HTTP: one item for the host, its first path"
expect_match "^allow_hosts = api.example.test private$" "$blk" "the host's item, port 80 by default"
expect_match "^# answered 10.200.1.3, a private address: \"private\" lets it through$" "$blk" \
	"the private one's comment names its address and why"
expect_match "^allow_hosts = priv.test private$" "$blk" "priv.test's item"
expect_eq 4 "$(printf '%s\n' "$blk" | grep -c '^allow_hosts = ')" "four items, deduplicated"
expect_match "^postern: or, as flags: --allow 'allowed.test private' --allow 'other.test private' --allow 'api.example.test private' --allow 'priv.test private'$" \
	"$err" "the same as --allow flags, on one line"

echo old >"$WORLD_DIR/learned.ini"
out=$(run --learn="$WORLD_DIR/learned.ini" -- sh -c "$cmd" 2>"$WORLD_DIR/err2")
rc=$?
err=$(cat "$WORLD_DIR/err2")
diag "stderr: $err"
expect_eq 7 $rc "run --learn=FILE exits with CMD's status"
expect_match "the learned config is in $WORLD_DIR/learned.ini \(it replaced the file that was there\)" \
	"$err" "it says where, and that it replaced a file"
expect_no_match "^allow_hosts" "$err" "the block is not on stderr then"
expect_eq 644 "$(stat -c %a "$WORLD_DIR/learned.ini")" "FILE is mode 0644"
expect_eq 4 "$(grep -c '^allow_hosts = .* private$' "$WORLD_DIR/learned.ini")" "FILE has the four items"
diag "FILE: $(cat "$WORLD_DIR/learned.ini")"
# The advice, followed as printed: its check passes, its run line runs.
chk=$(sed -n 's/^postern: check it with: //p' "$WORLD_DIR/err2")
use=$(sed -n 's/^postern: use it with: //p' "$WORLD_DIR/err2")
expect_eq "postern-sidecar run --check -c $WORLD_DIR/learned.ini" "$chk" "it prints the check to run"
expect_eq "postern-sidecar run -c $WORLD_DIR/learned.ini -- CMD" "$use" "and the run line that uses FILE"
mkdir "$WORLD_DIR/path"
ln -s "$SIDECAR" "$WORLD_DIR/path/postern-sidecar"
ln -s "$top_builddir/postern-proxy" "$WORLD_DIR/path/postern-proxy"
advice() { in_px env PATH="$1:$PATH" sh -c "$2" 2>&1; }
out=$(advice "$WORLD_DIR/path" "$chk")
expect_eq 0 $? "the printed check passes FILE"
expect_match "learned.ini: ok \(sha256 [0-9a-f]+\)$" "$out" "it says ok, as postern-proxy --check does"
expect_match "^ +allow allowed.test private +$WORLD_DIR/learned.ini:[0-9]+" "$out" "and lists the learned rules"
expect_match "^  listen \(run's own socket" "$out" "the listener is run's own"
out=$(in_px env PATH="$WORLD_DIR/path:$PATH" XDG_RUNTIME_DIR="$XDG" sh -c "${use% CMD}"' "$@"' sh \
	sh -c "$cmd" 2>"$WORLD_DIR/err3" 3<"$WORLD_DIR/ca.pem")
rc=$?
diag "enforce with FILE: $out $(cat "$WORLD_DIR/err3")"
expect_eq 7 $rc "run -c FILE runs CMD to its end"
expect_eq 2 "$(printf '%s\n' "$out" | grep -c '^https allowed.test 200$')" "allowed.test is reached, enforcing"
expect_match "^https other.test 200$" "$out" "other.test too"
expect_eq 3 "$(printf '%s\n' "$out" | grep -c '^http api.example.test200$')" "every path of the plain HTTP host"
expect_match "^priv 200$" "$out" "and the private host"
expect_no_match "NOT ENFORCING|would refuse|refused" "$(cat "$WORLD_DIR/err3")" "enforcing, nothing refused"

# A path rule's refusals of paths holding a list, a blank, an address.
hostile='for p in "/x,*.attacker.test:1-65535" "/y,169.254.169.254:80" "/z%20*.attacker.test:22"; do
		curl -sS --max-time 5 -g --path-as-is -o /dev/null -w "hostile %{http_code}\n" "http://other.test$p"
	done'
out=$(run --learn="$WORLD_DIR/hostile.ini" --allow 'http://other.test/api/ private' -- sh -c "$hostile" \
	2>"$WORLD_DIR/err4")
diag "FILE: $(cat "$WORLD_DIR/hostile.ini")"
expect_match "^allow_hosts = other\.test/x private$" "$(cat "$WORLD_DIR/hostile.ini")" \
	"a path holding a list: one rule for other.test, cut before the ','"
expect_no_match "^allow_hosts = .*(attacker|169\.254)" "$(cat "$WORLD_DIR/hostile.ini")" \
	"no learned item names another host"
expect_no_match "--allow '[^']*(attacker|169\.254)" "$(cat "$WORLD_DIR/hostile.ini") $(cat "$WORLD_DIR/err4")" \
	"nor any --allow flag"
out=$(run -c "$WORLD_DIR/hostile.ini" --allow 'http://other.test/api/ private' -- \
	curl -sS --max-time 5 -o /dev/null -w '%{http_connect}\n' -p https://foo.attacker.test:22/ 2>"$WORLD_DIR/err5")
diag "enforce with FILE: $(cat "$WORLD_DIR/err5")"
expect_eq 403 "$out" "FILE allows no CONNECT to foo.attacker.test:22"

# The user who ran --learn, writing where anyone may (like /tmp): the
# printed check passes for that user and for root, where postern-proxy
# --check holds the file to StrictModes and to a listener of its own.
mkdir -m 1777 "$WORLD_DIR/tmp"
if world_userns_ok $AGENT_UID; then
	bins=$(world_bins_for $AGENT_UID "$SIDECAR" "$top_builddir/postern-bridge") ||
		die "cannot give uid $AGENT_UID the binaries"
	mkdir -m 0700 "$WORLD_DIR/xdg-user"
	chown $AGENT_UID:$AGENT_UID "$WORLD_DIR/xdg-user"
	as_uid $AGENT_UID env XDG_RUNTIME_DIR="$WORLD_DIR/xdg-user" "$bins/postern-sidecar" run \
		--learn="$WORLD_DIR/tmp/user.ini" -- curl -sS --max-time 5 -o /dev/null \
		http://api.example.test/ 2>"$WORLD_DIR/err6"
else
	diag "uid $AGENT_UID cannot create a user namespace here: its file is root's, given to it"
	bins=$(world_bins_for $AGENT_UID "$SIDECAR") || die "cannot give uid $AGENT_UID the binary"
	run --learn="$WORLD_DIR/tmp/user.ini" -- curl -sS --max-time 5 -o /dev/null \
		http://api.example.test/ 2>"$WORLD_DIR/err6"
	chown $AGENT_UID:$AGENT_UID "$WORLD_DIR/tmp/user.ini"
fi
diag "user's --learn: $(cat "$WORLD_DIR/err6")"
expect_eq $AGENT_UID "$(stat -c %u "$WORLD_DIR/tmp/user.ini")" "the user's FILE is the user's"
chk=$(sed -n 's/^postern: check it with: //p' "$WORLD_DIR/err6")
[ -n "$chk" ] || chk=$(sed -n 's/.*check it with \(.*\), use it.*/\1/p' "$WORLD_DIR/err6")
diag "advice: $chk"
out=$(advice "$WORLD_DIR/path" "$chk")
expect_eq 0 $? "the printed check passes the user's FILE, as root: $out"
out=$(as_uid $AGENT_UID env PATH="$bins:$PATH" sh -c "$chk" 2>&1)
expect_eq 0 $? "and as the user: $out"

# A file with no listener, for one session: postern-proxy --check refuses
# it, run --check accepts it, as run would serve it.
printf '[session ci]\nallow_hosts = allowed.test private\n' >"$WORLD_DIR/sess.ini"
out=$(in_px "$SIDECAR" run --check -c "$WORLD_DIR/sess.ini" --session ci 2>&1)
expect_eq 0 $? "run --check --session accepts a session with no listener: $out"
expect_match "^session ci$" "$out" "it summarises the session served"
expect_match "^use it with: postern-sidecar run -c $WORLD_DIR/sess.ini --session ci -- CMD$" "$out" \
	"and prints the run line"

# A bad file: FILE:LINE, and exit 2.
printf '[defaults]\nallow_hosts = allowed.test\nno_such_key = 1\n' >"$WORLD_DIR/bad.ini"
out=$(in_px "$SIDECAR" run --check -c "$WORLD_DIR/bad.ini" 2>&1)
expect_eq 2 $? "run --check refuses a bad file with exit 2"
expect_match "$WORLD_DIR/bad.ini:3" "$out" "naming FILE:LINE"
expect_match "config refused" "$out" "and that it is refused"
expect_match "unexpected command" "$(in_px "$SIDECAR" run --check -- true 2>&1)" "--check takes no CMD"

expect_match "only applies to run" "$("$SIDECAR" --learn 2>&1)" "--learn is run's only"
