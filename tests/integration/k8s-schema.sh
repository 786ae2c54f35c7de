#!/bin/sh
# k8s-schema.sh: every manifest in contrib/k8s/ (and the podman variant in
# contrib/podman/) is valid against Kubernetes' own JSON schemas, offline:
# the npm package kubernetes-models bundles them with a validator
# (contrib/install-deps.sh installs it where npm is).  A copy with a field
# of the wrong type must be refused, or the check proves nothing.
set -u
: "${top_srcdir:=.}"
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
command -v node >/dev/null 2>&1 || skip "node is not installed"
command -v npm >/dev/null 2>&1 || skip "npm is not installed"
root=$(npm root -g 2>/dev/null) || skip "npm root -g failed"
[ -f "$root/kubernetes-models/v1/Pod.js" ] && [ -f "$root/js-yaml/index.js" ] ||
	skip "kubernetes-models and js-yaml are not installed (npm install -g, see contrib/install-deps.sh)"
check="$top_srcdir/tests/integration/lib-k8s/k8s-validate.mjs"
files=$(ls "$top_srcdir"/contrib/k8s/*.yaml "$top_srcdir"/contrib/podman/*.yaml 2>/dev/null)
[ -n "$files" ] || fail "no manifests found"
# shellcheck disable=SC2086
out=$(node "$check" "$root" $files 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || fail "a manifest is not valid for Kubernetes"
for f in $files; do
	echo "$out" | grep -q "^ok $f: " || fail "$f was not checked"
done
echo "PASS: every manifest is valid against the Kubernetes schemas"

T=$(mktemp -d /tmp/postern-k8s.XXXXXX) || fail "mktemp"
trap 'rm -rf "$T"' EXIT
sed 's/runAsUser: 1000/runAsUser: "1000"/' "$top_srcdir/contrib/k8s/pod-bridge.yaml" >"$T/bad.yaml"
cmp -s "$T/bad.yaml" "$top_srcdir/contrib/k8s/pod-bridge.yaml" && fail "could not make the broken copy"
out=$(node "$check" "$root" "$T/bad.yaml" 2>&1) && fail "a string runAsUser was accepted: $out"
echo "$out" | grep -q "runAsUser must be integer" || fail "refused for the wrong reason: $out"
echo "PASS: a broken copy is refused ($out)"
exit 0
