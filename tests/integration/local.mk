# tests/integration/: scenarios in real network namespaces, run by
# "make check" with the plain (exit status) driver: 0 pass, 1 fail, 77 skip
# (not root, or no network namespaces).  Each scenario builds its own world
# (namespaces px and up, dnsmasq, test CA, HTTP/HTTPS/echo servers) with
# tests/integration/lib/world.sh, so scenarios run in parallel under -j.
#
# To add a scenario (one scenario per file; see tests/integration/README.md):
#   1. write tests/integration/NAME.sh, starting with
#          . "$top_srcdir/tests/integration/lib/world.sh"
#          world_up
#      then the config, the client action, expect_* checks on the status
#      and on the audit log (expect_audit);
#   2. append it to TESTS and EXTRA_DIST below (automake does not
#      distribute a test script by itself):
#          TESTS += tests/integration/NAME.sh
#          EXTRA_DIST += tests/integration/NAME.sh
#   3. if it needs postern-proxy, nothing more: "make check" builds the
#      programs before running TESTS, and proxy_start finds it in
#      $top_builddir.

EXTRA_DIST += tests/integration/lib tests/integration/README.md

TESTS += tests/integration/world-selftest.sh
EXTRA_DIST += tests/integration/world-selftest.sh

TESTS += tests/integration/proxy-mapped.sh
EXTRA_DIST += tests/integration/proxy-mapped.sh
TESTS += tests/integration/proxy-many-addrs.sh
EXTRA_DIST += tests/integration/proxy-many-addrs.sh

TESTS += tests/integration/proxy-errors.sh
EXTRA_DIST += tests/integration/proxy-errors.sh
TESTS += tests/integration/proxy-metrics-listen.sh
EXTRA_DIST += tests/integration/proxy-metrics-listen.sh

TESTS += tests/integration/sidecar-run-hints.sh
EXTRA_DIST += tests/integration/sidecar-run-hints.sh
TESTS += tests/integration/sidecar-run-capture.sh
EXTRA_DIST += tests/integration/sidecar-run-capture.sh
TESTS += tests/integration/sidecar-run-notices.sh
EXTRA_DIST += tests/integration/sidecar-run-notices.sh

TESTS += tests/integration/proxy-logrotate.sh
EXTRA_DIST += tests/integration/proxy-logrotate.sh

TESTS += tests/integration/proxy-hosts.sh
EXTRA_DIST += tests/integration/proxy-hosts.sh
# Sessions made and ended at run time over the admin socket.
TESTS += tests/integration/proxy-sessions.sh
EXTRA_DIST += tests/integration/proxy-sessions.sh
TESTS += tests/integration/proxy-sessions-workers.sh
EXTRA_DIST += tests/integration/proxy-sessions-workers.sh
TESTS += tests/integration/admin-sessions-perms.sh
EXTRA_DIST += tests/integration/admin-sessions-perms.sh

TESTS += tests/integration/proxy-fairness.sh
EXTRA_DIST += tests/integration/proxy-fairness.sh
TESTS += tests/integration/proxy-limits-reload.sh
EXTRA_DIST += tests/integration/proxy-limits-reload.sh
TESTS += tests/integration/secrets-check.sh
EXTRA_DIST += tests/integration/secrets-check.sh
TESTS += tests/integration/reload-secrets.sh
EXTRA_DIST += tests/integration/reload-secrets.sh
TESTS += tests/integration/secrets-core.sh
EXTRA_DIST += tests/integration/secrets-core.sh
TESTS += tests/integration/bridge-dns-hostile.sh
EXTRA_DIST += tests/integration/bridge-dns-hostile.sh tests/integration/lib-bridge/dnshostile.py
TESTS += tests/integration/bridge-dns-ede.sh
EXTRA_DIST += tests/integration/bridge-dns-ede.sh
TESTS += tests/integration/tls-inject.sh tests/integration/secret-body.sh
EXTRA_DIST += tests/integration/tls-inject.sh tests/integration/secret-body.sh
TESTS += tests/integration/secret-encoded.sh
EXTRA_DIST += tests/integration/secret-encoded.sh
TESTS += tests/integration/secret-heap.sh
EXTRA_DIST += tests/integration/secret-heap.sh tests/integration/lib-tls/heldterm.py
TESTS += tests/integration/secret-encoded-h2.sh
EXTRA_DIST += tests/integration/secret-encoded-h2.sh
TESTS += tests/integration/proxy-decider-term.sh
EXTRA_DIST += tests/integration/proxy-decider-term.sh
TESTS += tests/integration/proxy-parent.sh
EXTRA_DIST += tests/integration/proxy-parent.sh
TESTS += tests/integration/tls-reflect.sh
EXTRA_DIST += tests/integration/tls-reflect.sh tests/integration/lib-tls/reflect-upstream.js \
	tests/integration/lib-tls/reflect-client.py
TESTS += tests/integration/tls-git.sh
EXTRA_DIST += tests/integration/tls-git.sh tests/integration/lib-tls/githttps.py
TESTS += tests/integration/tls-sessions.sh
EXTRA_DIST += tests/integration/tls-sessions.sh
TESTS += tests/integration/tls-h2.sh
EXTRA_DIST += tests/integration/tls-h2.sh
TESTS += tests/integration/tls-inspect.sh
EXTRA_DIST += tests/integration/tls-inspect.sh
TESTS += tests/integration/proxy-workers.sh
EXTRA_DIST += tests/integration/proxy-workers.sh
TESTS += tests/integration/reload-load-workers.sh
EXTRA_DIST += tests/integration/reload-load-workers.sh
TESTS += tests/integration/proxy-limits-workers.sh
EXTRA_DIST += tests/integration/proxy-limits-workers.sh
TESTS += tests/integration/proxy-fairness-workers.sh
EXTRA_DIST += tests/integration/proxy-fairness-workers.sh
TESTS += tests/integration/proxy-limits-reload-workers.sh
EXTRA_DIST += tests/integration/proxy-limits-reload-workers.sh
TESTS += tests/integration/proxy-burst-workers.sh
EXTRA_DIST += tests/integration/proxy-burst-workers.sh
TESTS += tests/integration/reload-race-term.sh
EXTRA_DIST += tests/integration/reload-race-term.sh tests/integration/lib-tls/race.py

TESTS += tests/integration/sidecar-run-refusals.sh
EXTRA_DIST += tests/integration/sidecar-run-refusals.sh
TESTS += tests/integration/sidecar-run-claude-refusals.sh
EXTRA_DIST += tests/integration/sidecar-run-claude-refusals.sh tests/integration/lib/mock-anthropic-tool.py
TESTS += tests/integration/bridge-capture-user.sh
EXTRA_DIST += tests/integration/bridge-capture-user.sh
TESTS += tests/integration/sidecar-run-settings.sh
EXTRA_DIST += tests/integration/sidecar-run-settings.sh
TESTS += tests/integration/sidecar-run-default-hosts.sh
EXTRA_DIST += tests/integration/sidecar-run-default-hosts.sh
TESTS += tests/integration/secret-sigv4.sh
EXTRA_DIST += tests/integration/secret-sigv4.sh tests/integration/lib/mock-aws.py
TESTS += tests/integration/secret-oauth2.sh
EXTRA_DIST += tests/integration/secret-oauth2.sh tests/integration/lib-tls/oauth2mock.py
TESTS += tests/integration/secret-github-app.sh
EXTRA_DIST += tests/integration/secret-github-app.sh tests/integration/lib-tls/githubmock.py
TESTS += tests/integration/sidecar-run-github-app.sh
EXTRA_DIST += tests/integration/sidecar-run-github-app.sh
