#!/bin/sh
# contrib/install-deps.sh: every Debian package postern's build, tests and
# benchmarks need.  Idempotent and non-interactive; run as root on Debian 12.
set -eu

# squid-openssl, not squid: tests/bench/bench-term.sh needs a squid that can
# ssl_bump (Debian's squid is built with GnuTLS), and bench-proxy.sh runs
# the same /usr/sbin/squid.  The two Conflict, so apt replaces a squid that
# is already there.  runsc is gVisor, for tests/integration/bridge-gvisor.sh.
PACKAGES="
autoconf automake libtool pkg-config make gcc libc6-dev
clang libclang-rt-14-dev cppcheck
libevent-dev libssl-dev libnl-3-dev libnl-route-3-dev libc-ares-dev libinih-dev libnghttp2-dev libjansson-dev
iproute2 nftables dnsmasq-base curl openssl ca-certificates python3 procps psmisc util-linux logrotate
bubblewrap socat git strace nghttp2-client nghttp2-server python3-h2
netcat-openbsd openssh-server bind9-dnsutils
podman uidmap runc conmon catatonit runsc
tinyproxy squid-openssl wrk hyperfine groff-base
awscli python3-botocore python3-jwt python3-cryptography
"

# Claude Code and Codex, the real clients of tests/integration/sidecar-run-claude*.sh
# and sidecar-run-codex-secret.sh, from the npm registry (native binaries, a
# few seconds each).  Optional: when npm or the registry is not there those
# tests skip, so a failure here only warns.  POSTERN_NO_CLAUDE=1 leaves both
# out.
AGENT_CLIS="claude=@anthropic-ai/claude-code@2.1.197 codex=@openai/codex@0.171.0"
install_claude() {
	[ "${POSTERN_NO_CLAUDE:-0}" = 1 ] && return 0
	for cli in $AGENT_CLIS; do
		bin=${cli%%=*} pkg=${cli#*=}
		if command -v "$bin" >/dev/null 2>&1; then
			echo "install-deps: $bin present ($("$bin" --version 2>/dev/null | head -n 1))"
			continue
		fi
		command -v npm >/dev/null 2>&1 ||
			apt-get install -y -q --no-install-recommends npm >/dev/null 2>&1 || :
		if ! command -v npm >/dev/null 2>&1; then
			echo "install-deps: warning: no npm, so no $bin (its tests will skip)" >&2
			return 0
		fi
		if out=$(npm install -g --no-fund --no-audit --fetch-retries=1 "$pkg" 2>&1) &&
		    "$bin" --version >/dev/null 2>&1; then
			echo "install-deps: installed $pkg"
		else
			echo "install-deps: warning: npm install -g $pkg failed (its tests will skip):" >&2
			printf '%s\n' "$out" | grep -v -e 'complete log' -e '_logs/' -e '^npm ERR! *$' |
				head -n 3 | sed 's/^/install-deps:   /' >&2
		fi
	done
	return 0
}
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: run as root (apt-get install needs it)" >&2
	exit 1
fi

missing=""
for p in $PACKAGES; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
# The offline schema check of contrib/k8s/ (tests/integration/k8s-schema.sh):
# Kubernetes' JSON schemas and a validator, from npm, where npm is there
# (a few MB; the test skips without them).
K8S_NPM="kubernetes-models@5.1.0 js-yaml@4.1.0"
k8s_npm() {
	command -v npm >/dev/null 2>&1 || return 0
	root=$(npm root -g 2>/dev/null) || return 0
	[ -f "$root/kubernetes-models/v1/Pod.js" ] && [ -f "$root/js-yaml/index.js" ] && return 0
	# shellcheck disable=SC2086
	if out=$(npm install -g --no-audit --no-fund --fetch-retries=1 $K8S_NPM 2>&1); then
		echo "install-deps: installed (npm): $K8S_NPM"
	else
		echo "install-deps: npm install $K8S_NPM failed; the k8s schema test will skip:" >&2
		printf '%s\n' "$out" | grep -v -e 'complete log' -e '_logs/' -e '^npm ERR! *$' |
			head -n 3 | sed 's/^/install-deps:   /' >&2
	fi
}

if [ -z "$missing" ]; then
	echo "install-deps: all packages present"
	install_claude
	k8s_npm
	exit 0
fi

export DEBIAN_FRONTEND=noninteractive
# Packages such as squid and tinyproxy would start system services on
# install; the benchmarks start their own instances, so keep the daemons
# from starting (policy-rc.d, removed again afterwards).
policy=/usr/sbin/policy-rc.d
made_policy=0
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' > "$policy"
	chmod 755 "$policy"
	made_policy=1
fi
trap '[ "$made_policy" = 1 ] && rm -f "$policy"' EXIT
# An apt list that is missing or stale would make the install fail.
if ! apt-get install -y -q --no-install-recommends $missing; then
	apt-get update -q
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing
fi
echo "install-deps: installed:$missing"
# Claude Code first: it installs npm when npm is missing.
install_claude
k8s_npm
