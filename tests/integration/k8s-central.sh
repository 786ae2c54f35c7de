#!/bin/sh
# k8s-central.sh: the central proxy's manifests (contrib/k8s/central/),
# offline.  Every document is valid against Kubernetes' own JSON schemas
# (lib-k8s/k8s-validate.mjs, as k8s-schema.sh); lib-k8s/k8s-central.mjs
# then judges what the schemas cannot: the proxy holds no privilege, the
# Service, PDB and NetworkPolicies select what they should, agents reach
# only the proxy's port and kube-dns, each session's token is a key of the
# Secret at its mount.  Copies broken in one field each must be refused.
# Last, the ConfigMap's postern.ini passes this build's
# "postern-proxy --check" with tokens made as secret.yaml says, and the
# shipped placeholders are refused (so the Secret as shipped never serves).
set -u
: "${top_srcdir:=.}"
: "${top_builddir:=.}"
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
command -v node >/dev/null 2>&1 || skip "node is not installed"
command -v npm >/dev/null 2>&1 || skip "npm is not installed"
root=$(npm root -g 2>/dev/null) || skip "npm root -g failed"
[ -f "$root/kubernetes-models/apps/v1/Deployment.js" ] && [ -f "$root/js-yaml/index.js" ] ||
	skip "kubernetes-models and js-yaml are not installed (npm install -g, see contrib/install-deps.sh)"
PROXY="${POSTERN_PROXY:-$top_builddir/postern-proxy}"
[ -x "$PROXY" ] || skip "$PROXY is not built"
lib="$top_srcdir/tests/integration/lib-k8s"
dir="$top_srcdir/contrib/k8s/central"
T=$(mktemp -d /tmp/postern-k8sc.XXXXXX) || fail "mktemp"
trap 'rm -rf "$T"' EXIT

files=$(ls "$dir"/*.yaml 2>/dev/null)
[ -n "$files" ] || fail "no manifests in $dir"
# shellcheck disable=SC2086
out=$(node "$lib/k8s-validate.mjs" "$root" $files 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || fail "a manifest is not valid for Kubernetes"
for k in Deployment Service NetworkPolicy ConfigMap Secret PodDisruptionBudget Pod; do
	echo "$out" | grep -q "^ok .*: $k " || fail "no $k was checked"
done
echo "PASS: every manifest is valid against the Kubernetes schemas"

mkdir "$T/out"
out=$(node "$lib/k8s-central.mjs" "$root" "$dir" "$T/out" 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || fail "a manifest does not do what the central proxy needs"
[ "$(echo "$out" | grep -c '^ok: ')" -ge 40 ] || fail "fewer checks ran than written"
echo "PASS: the manifests hold what they should"

# refused FILE SED-EXPR WHY: the copy of the manifests with SED-EXPR
# applied to FILE is judged bad, for WHY.
refused() {
	rm -rf "$T/bad" "$T/bad-out"
	mkdir "$T/bad-out"
	cp -R "$dir" "$T/bad"
	sed "$2" "$dir/$1" >"$T/bad/$1"
	cmp -s "$dir/$1" "$T/bad/$1" && fail "could not break $1 with $2"
	o=$(node "$lib/k8s-central.mjs" "$root" "$T/bad" "$T/bad-out" 2>&1) &&
		fail "$1 with $2 was accepted"
	echo "$o" | grep -q "^bad: $3" || fail "$1 with $2 was refused for the wrong reason: $(echo "$o" | grep '^bad')"
	echo "PASS: refused: $1 with $2 ($3)"
}
refused deployment.yaml 's/allowPrivilegeEscalation: false/allowPrivilegeEscalation: true/' \
	"container postern-proxy: allowPrivilegeEscalation"
refused deployment.yaml 's/drop: \["ALL"\]/drop: ["NET_RAW"]/' \
	"container postern-proxy: every capability dropped"
refused deployment.yaml 's/readOnlyRootFilesystem: true/readOnlyRootFilesystem: false/' \
	"container postern-proxy: readOnlyRootFilesystem"
refused deployment.yaml 's/^  replicas: 2$/  replicas: 1/' "the Deployment runs at least 2"
refused networkpolicy-agents.yaml '0,/port: 3128/s//port: 3129/' "agents reach only"
refused networkpolicy-agents.yaml 's/k8s-app: kube-dns/k8s-app: coredns-any/' "agents reach only"
refused networkpolicy-agents.yaml 's/postern.dev\/agent: "true"/postern.dev\/agent: "yes"/' \
	"postern-agents selects the agent pod"
refused networkpolicy-proxy.yaml 's/port: 3128/port: 8080/' "only agents reach the proxy"
refused networkpolicy-proxy.yaml 's/metadata.name: monitoring/metadata.name: default/' \
	"the metrics port is reached from the monitoring namespace only"
refused networkpolicy-proxy.yaml '0,/port: 3128/s//port: 9090/' \
	"agents cannot reach the metrics port"
refused networkpolicy-proxy.yaml '/metadata.name: monitoring/d' \
	"agents cannot reach the metrics port"
refused deployment.yaml 's/prometheus.io\/port: "9090"/prometheus.io\/port: "3128"/' \
	"the prometheus.io annotations scrape /metrics on the metrics port"
refused deployment.yaml '/prometheus.io\/scrape: "true"/d' \
	"the prometheus.io annotations scrape /metrics on the metrics port"
refused configmap.yaml 's/metrics = tcp:0.0.0.0:9090/metrics = tcp:0.0.0.0:9091/' \
	"the config's metrics listener is on the annotated port"
refused configmap.yaml 's|token_file = /etc/postern-tokens/agent-b|token_file = /etc/postern-tokens/agent-c|' \
	"every session's token is a key"
refused pdb.yaml 's/minAvailable: 1/minAvailable: 0/' "the PodDisruptionBudget"
sed 's/^  replicas: 2$/  replicas: "2"/' "$dir/deployment.yaml" >"$T/bad.yaml"
out=$(node "$lib/k8s-validate.mjs" "$root" "$T/bad.yaml" 2>&1) && fail "a string replicas was accepted: $out"
echo "$out" | grep -q "replicas must be integer" || fail "refused for the wrong reason: $out"
echo "PASS: a string replicas is refused by the schema ($out)"

# The config, with each session's token file in T: made as secret.yaml
# says, and then the placeholders as shipped.
mkdir "$T/tokens"
sed "s|/etc/postern-tokens/|$T/tokens/|" "$T/out/postern.ini" >"$T/postern.ini"
grep -q "$T/tokens/" "$T/postern.ini" || fail "no token_file in the ConfigMap's postern.ini"
while read -r name file; do
	if command -v openssl >/dev/null 2>&1; then
		openssl rand -hex 32 >"$T/tokens/${file##*/}"
	else
		od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$T/tokens/${file##*/}"
		echo >>"$T/tokens/${file##*/}"
	fi
	chmod 0440 "$T/tokens/${file##*/}"
done <"$T/out/sessions"
out=$("$PROXY" --check -c "$T/postern.ini" 2>&1)
rc=$?
echo "$out"
# Without the feature every other line is a consequence of this one.
[ $rc != 0 ] && echo "$out" | grep -q 'unknown key in \[session .*\] (token_file)' &&
	skip "this postern-proxy has no token sessions (token_file, listen ... auth=token)"
[ $rc = 0 ] || fail "the ConfigMap's postern.ini does not pass postern-proxy --check"
echo "PASS: the ConfigMap's postern.ini passes postern-proxy --check with its tokens"
while read -r name file; do
	cp "$T/out/placeholder-$name" "$T/tokens/${file##*/}"
	out=$("$PROXY" --check -c "$T/postern.ini" 2>&1) &&
		fail "session $name's placeholder token was accepted: $out"
	echo "$out" | grep -q "token" || fail "the placeholder of $name was refused for another reason: $out"
	echo "PASS: session $name's shipped placeholder is refused ($(echo "$out" | grep token | head -n 1))"
	openssl rand -hex 32 >"$T/tokens/${file##*/}" 2>/dev/null ||
		od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$T/tokens/${file##*/}"
done <"$T/out/sessions"
exit 0
