#!/bin/sh
# secrets-check: postern-proxy --check on a config with named secrets, one
# value from a file (absolute, and by name under $CREDENTIALS_DIRECTORY),
# one from the environment (a built-in provider).  --check lists each
# secret by name, source, placeholder variable and bindings, and which
# session gets which; a bad config is refused with FILE:LINE errors.  In
# no case does any output hold a value.  Needs no namespaces.
set -u
: "${top_builddir:=.}"
P="$top_builddir/postern-proxy"
n=0 nfail=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
fail() { n=$((n + 1)); nfail=$((nfail + 1)); echo "not ok $n - $*"; }
has() { if printf '%s\n' "$2" | grep -Fq -- "$1"; then ok "$3"; else fail "$3: '$1' not in:"; printf '%s\n' "$2" | sed 's/^/#   | /'; fi; }
hasnt() { if printf '%s\n' "$2" | grep -Fq -- "$1"; then fail "$3: '$1' found"; else ok "$3"; fi; }
[ -x "$P" ] || { echo "SKIP: $P is not built"; exit 77; }

T=$(mktemp -d /tmp/postern-secrets.XXXXXX) || exit 99
trap 'rm -rf "$T"' EXIT
# Values made for this run, so that no output can hold them by chance.
rnd=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
FILEVAL="sk-file-$rnd"
ENVVAL="sk-ant-api03-$(printf '%s' "$rnd" | rev)AA"
printf '%s\n' "$FILEVAL" >"$T/key"
mkdir "$T/creds" && printf '%s\n' "$FILEVAL" >"$T/creds/ex"

cat >"$T/ok.ini" <<EOT
[proxy]
listen = tcp:127.0.0.1:3128
[defaults]
allow_hosts = api.anthropic.com, api.example.test, api.example.test:8443
secrets = anthropic
[secret ex]
from_file = $T/key
placeholder_env = EX_KEY
inject = api.example.test header Authorization "Bearer %s"
inject = api.example.test:8443/v1/ query key
[secret cred]
from_file = ex
placeholder_env = CRED_KEY
inject = api.example.test basic agent
inject_when = always
[session a]
listen = tcp:127.0.0.1:3129
secrets = ex
[session b]
listen = tcp:127.0.0.1:3130
secrets = cred
EOT
out=$(ANTHROPIC_API_KEY="$ENVVAL" CREDENTIALS_DIRECTORY="$T/creds" "$P" --check -c "$T/ok.ini" 2>&1)
rc=$?
if [ "$rc" = 0 ]; then ok "--check accepts the secrets"; else fail "--check accepts the secrets (rc $rc)"; printf '%s\n' "$out" | sed 's/^/#   | /'; fi
has "secret ex: from file $T/key, placeholder in \$EX_KEY" "$out" "the file secret: its source and placeholder variable"
has "inject api.example.test:8443/v1/ query key" "$out" "its bindings"
has "secret cred: from file ex, placeholder in \$CRED_KEY" "$out" "a credential by name"
has "secret anthropic (built-in): from env ANTHROPIC_API_KEY, placeholder in \$ANTHROPIC_API_KEY" "$out" "the built-in"
has "inject api.anthropic.com header x-api-key" "$out" "the built-in's binding"
has "inject_when = always (on every request, placeholder or not)" \
	"$(printf '%s\n' "$out" | sed -n '/^secret cred:/,/^secret /p')" "inject_when = always is listed"
hasnt "inject_when" "$(printf '%s\n' "$out" | sed -n '/^secret ex:/,/^secret cred:/p')" \
	"the default is not"
a=$(printf '%s\n' "$out" | sed -n '/^session a$/,/^session b$/p')
has "secret anthropic (placeholder in \$ANTHROPIC_API_KEY)" "$a" "session a gets [defaults]' anthropic"
has "secret ex (placeholder in \$EX_KEY)" "$a" "and its own ex"
hasnt "secret cred" "$a" "but not b's cred"
hasnt "$FILEVAL" "$out" "the file's value is in no output"
hasnt "$ENVVAL" "$out" "the environment's value is in no output"
hasnt "$rnd" "$out" "nor any part of them"

# The same secrets with errors: each a FILE:LINE, still no value.
sed -e 's/^allow_hosts = .*/allow_hosts = api.anthropic.com, api.example.test/' \
    -e 's/^secrets = ex$/secrets = ex, nosuch/' "$T/ok.ini" >"$T/bad.ini"
out=$(ANTHROPIC_API_KEY="$ENVVAL" "$P" --check -c "$T/bad.ini" 2>&1)
rc=$?
if [ "$rc" = 2 ]; then ok "a bad config is refused"; else fail "a bad config is refused (rc $rc)"; fi
has "$T/bad.ini:18: unknown secret nosuch" "$out" "an unknown secret, at its line"
has "$T/bad.ini:18: secret ex is bound to api.example.test:8443, which session a does not allow" "$out" \
	"a binding to a port the session does not allow"
has "$T/bad.ini:21: secret cred: from_file ex is relative and \$CREDENTIALS_DIRECTORY is not set" "$out" \
	"a relative file without CREDENTIALS_DIRECTORY"
hasnt "$FILEVAL" "$out" "no value in the errors (file)"
hasnt "$ENVVAL" "$out" "no value in the errors (environment)"

# A value that would split a header: refused, not shown.
out=$(ANTHROPIC_API_KEY="$(printf 'x\rX-Evil: %s' "$rnd")" CREDENTIALS_DIRECTORY="$T/creds" \
	"$P" --check -c "$T/ok.ini" 2>&1)
rc=$?
if [ "$rc" = 2 ]; then ok "a value with a CR is refused"; else fail "a value with a CR is refused (rc $rc)"; fi
has "ok.ini:5: secret anthropic: \$ANTHROPIC_API_KEY holds a control character" "$out" "saying why"
hasnt "$rnd" "$out" "without showing it"
out=$(env -u ANTHROPIC_API_KEY CREDENTIALS_DIRECTORY="$T/creds" "$P" --check -c "$T/ok.ini" 2>&1)
has "ok.ini:5: secret anthropic: \$ANTHROPIC_API_KEY is not set" "$out" "a missing variable is an error at the secrets = line"

echo "1..$n"
[ "$nfail" = 0 ]
