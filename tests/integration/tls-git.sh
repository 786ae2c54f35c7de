#!/bin/sh
# tls-git: git clone and push over HTTPS through a terminated tunnel, the
# way github.com is bound (basic x-access-token): the git server answers 401
# to any request without the real token, and a path rule narrows the host to
# one organisation inside TLS (git.test:8443/org/).  git sends a credential
# only after a 401, so two ways work: inject_when = always (the built-in
# github secret's), where the sandbox has no credential at all and the proxy
# puts the token on every request; and the default, inject_when =
# placeholder, where a credential helper hands git the placeholder and the
# proxy puts the token only on the requests that carry it.  The git server
# sees the real token, the client never.
command -v git >/dev/null 2>&1 || { echo "git is not installed"; exit 77; }
WORLD_DNS_EXTRA="git.test=10.200.1.2"
. "$top_srcdir/tests/integration/lib/world.sh"
world_up

TOKEN="ghp_$(od -An -N18 -tx1 /dev/urandom | tr -d ' \n')"
export PX_GIT_TOKEN="$TOKEN"
state="$WORLD_DIR/state"
mkdir -p "$state" "$WORLD_DIR/repos/org" "$WORLD_DIR/repos/other"
chmod 700 "$state"

# Two bare repositories: org/repo.git (allowed), other/repo.git (not).
src="$WORLD_DIR/src"
git init -q -b main "$src"
echo "hello through postern" >"$src/README"
git -C "$src" add README
git -C "$src" -c user.name=t -c user.email=t@t commit -q -m one
git clone -q --bare "$src" "$WORLD_DIR/repos/org/repo.git"
git clone -q --bare "$src" "$WORLD_DIR/repos/other/repo.git"

gitlog="$WORLD_DIR/git.log"
: >"$gitlog"
expect="Basic $(printf 'x-access-token:%s' "$TOKEN" | base64 -w0)"
# The same as an ERE (base64 may hold a +).
expect_re=$(printf '%s' "$expect" | sed 's/[+]/\\+/g')
in_up "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-tls/githttps.py" 10.200.1.2 8443 \
	"$WORLD_CERT" "$WORLD_KEY" "$WORLD_DIR/repos" "$gitlog" "$expect" &
# Wait until it listens (a bare TCP connect: no request in its log).
world_wait_tcp 10.200.1.2:8443

conf="$WORLD_DIR/postern.ini"
# write_conf [WHEN]: the config; WHEN is the secret's inject_when, or none.
write_conf() {
	cat >"$conf" <<-EOF
		[proxy]
		listen = tcp:127.0.0.1:3128
		log = $PROXY_LOG
		dns_servers = $WORLD_DNS
		upstream_ca_file = $WORLD_CA
		state_dir = $state
		[defaults]
		allow_hosts = git.test:8443/org/ private
		secrets = gh
		[secret gh]
		from_env = PX_GIT_TOKEN
		placeholder_env = GH_TOKEN
		inject = git.test:8443 basic x-access-token
		${1:+inject_when = $1}
	EOF
}
write_conf always
proxy_start "$conf" || die "no proxy"
CA="$state/ca/default.pem"

# g ARGS...: git in px through the proxy, without a terminal, with neither
# the token nor a placeholder: the sandbox of a bound github.com.
g() {
	in_px env -u GH_TOKEN GIT_TERMINAL_PROMPT=0 GIT_SSL_CAINFO="$CA" HTTPS_PROXY=http://127.0.0.1:3128 \
		HOME="$WORLD_DIR" git -c user.name=t -c user.email=t@t "$@"
}
# commit_in DIR TEXT: a new commit in the clone DIR.
commit_in() {
	echo "$2" >"$1/PUSHED"
	git -C "$1" add PUSHED
	git -C "$1" -c user.name=t -c user.email=t@t commit -q -m "$2"
}
# 1. inject_when = always: clone and push with no credential in the sandbox.
g clone -q https://git.test:8443/org/repo.git "$WORLD_DIR/clone" >"$WORLD_DIR/clone.out" 2>&1
expect_eq 0 $? "always: git clone of org/repo.git through the terminated tunnel succeeds"
expect_eq "hello through postern" "$(cat "$WORLD_DIR/clone/README" 2>/dev/null)" "the clone has the file"
expect_match "\"authorization\": \"$expect_re\"" "$(cat "$gitlog")" "the git server received the token"
expect_no_match "\"authorization\": \"\"" "$(cat "$gitlog")" "and no request reached it without"
expect_audit "each request of the clone is audited with the secret" event=request host=git.test \
	path=/org/repo.git/info/refs secret=gh status=200
commit_in "$WORLD_DIR/clone" "pushed with inject_when = always"
g -C "$WORLD_DIR/clone" push -q origin main >"$WORLD_DIR/push.out" 2>&1
expect_eq 0 $? "always: git push to org/repo.git succeeds"
expect_eq "pushed with inject_when = always" \
	"$(git -C "$WORLD_DIR/repos/org/repo.git" log -1 --format=%s main 2>/dev/null)" \
	"the server's repository has the pushed commit"
expect_match "POST /org/repo.git/git-receive-pack" "$(cat "$gitlog")" "(the push went by smart HTTP)"
expect_no_match "\"authorization\": \"\"" "$(cat "$gitlog")" "no request of the push reached it without"
expect_audit "the push is audited with the secret" event=request host=git.test method=POST \
	path=/org/repo.git/git-receive-pack secret=gh status=200

g clone -q https://git.test:8443/other/repo.git "$WORLD_DIR/clone2" >"$WORLD_DIR/clone2.out" 2>&1
expect_ne 0 $? "a clone outside the path rule fails"
expect_match "403" "$(cat "$WORLD_DIR/clone2.out")" "with the proxy's 403"
expect_audit "path_not_allowed inside TLS" host=git.test reason=path_not_allowed \
	path=/other/repo.git/info/refs
expect_eq 0 "$(grep -c '/other/' "$gitlog")" "no request for other/ reached the git server"

# 2. inject_when = placeholder (the default).  Without a credential git
# gets the server's 401: the token goes on no request without the
# placeholder.
write_conf
proxy_stop
: >"$gitlog"
proxy_start "$conf" || die "no proxy after the restart"
PH=$(in_px curl -sS --max-time 5 http://127.0.0.1:3128/.well-known/postern/session |
	sed -n 's/^env GH_TOKEN //p')
[ -n "$PH" ] || die "no placeholder"
g clone -q https://git.test:8443/org/repo.git "$WORLD_DIR/clone3" >"$WORLD_DIR/clone3.out" 2>&1
expect_ne 0 $? "placeholder: a clone without a credential fails"
expect_no_match "\"authorization\": \"$expect_re\"" "$(cat "$gitlog")" \
	"no request without the placeholder was given the token"
expect_match "\"authorization\": \"\"" "$(cat "$gitlog")" "(they reached the server without it)"
# With a credential helper that hands git the placeholder from GH_TOKEN,
# as a sandbox's would: git answers the 401 with Basic x-access-token:PH.
: >"$gitlog"
gh() {
	in_px env GH_TOKEN="$PH" GIT_TERMINAL_PROMPT=0 GIT_SSL_CAINFO="$CA" \
		HTTPS_PROXY=http://127.0.0.1:3128 HOME="$WORLD_DIR" git -c user.name=t -c user.email=t@t \
		-c credential.helper= \
		-c 'credential.helper=!f() { echo username=x-access-token; echo "password=$GH_TOKEN"; }; f' \
		"$@"
}
gh clone -q https://git.test:8443/org/repo.git "$WORLD_DIR/clone4" >"$WORLD_DIR/clone4.out" 2>&1
expect_eq 0 $? "placeholder: git clone with a credential helper that gives the placeholder succeeds"
expect_eq "pushed with inject_when = always" "$(cat "$WORLD_DIR/clone4/PUSHED" 2>/dev/null)" \
	"the clone has the first push's file"
commit_in "$WORLD_DIR/clone4" "pushed with the placeholder"
gh -C "$WORLD_DIR/clone4" push -q origin main >"$WORLD_DIR/push4.out" 2>&1
expect_eq 0 $? "placeholder: git push succeeds"
expect_eq "pushed with the placeholder" \
	"$(git -C "$WORLD_DIR/repos/org/repo.git" log -1 --format=%s main 2>/dev/null)" \
	"the server's repository has the pushed commit"
expect_match "\"authorization\": \"$expect_re\"" "$(cat "$gitlog")" "the git server received the token"
expect_match "POST /org/repo.git/git-receive-pack.*\"authorization\": \"$expect_re\"" "$(cat "$gitlog")" \
	"the push's POST carried it"
expect_no_match "$PH" "$(cat "$gitlog")" "and never the placeholder"
expect_audit "the push is audited with the secret" event=request host=git.test method=POST \
	path=/org/repo.git/git-receive-pack secret=gh status=200

# The client never sees the token: not in git's output, its clones, the
# proxy's logs.
expect_no_match "$TOKEN" "$(cat "$PROXY_LOG" "$WORLD_DIR/proxy.out" "$WORLD_DIR"/clone*.out \
	"$WORLD_DIR"/push*.out)" "the token is in no log of the proxy, nor in git's output"
expect_eq "" "$(grep -rl "$TOKEN" "$WORLD_DIR/clone" "$WORLD_DIR/clone4" 2>/dev/null)" \
	"nor anywhere in the clones"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
