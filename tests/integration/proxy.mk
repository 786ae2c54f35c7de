# tests/integration/proxy.mk: the proxy's scenarios (issue 3), one per file.
EXTRA_DIST += tests/integration/lib-proxy
PROXY_SCENARIOS = \
	tests/integration/proxy-connect.sh \
	tests/integration/proxy-rules.sh \
	tests/integration/proxy-literals.sh \
	tests/integration/proxy-rebind.sh \
	tests/integration/proxy-sni.sh \
	tests/integration/proxy-sni-hold.sh \
	tests/integration/proxy-http.sh \
	tests/integration/proxy-paths.sh \
	tests/integration/proxy-smuggling.sh \
	tests/integration/proxy-slowloris.sh \
	tests/integration/proxy-headsplit.sh \
	tests/integration/proxy-idle.sh \
	tests/integration/proxy-keepalive.sh \
	tests/integration/proxy-timeouts.sh \
	tests/integration/proxy-tunnel.sh \
	tests/integration/proxy-loopback-cc.sh \
	tests/integration/proxy-privileges.sh \
	tests/integration/proxy-explain.sh \
	tests/integration/proxy-limits.sh \
	tests/integration/proxy-backpressure.sh \
	tests/integration/proxy-faults.sh \
	tests/integration/proxy-dns-hostile.sh \
	tests/integration/proxy-burst.sh \
	tests/integration/proxy-flood.sh \
	tests/integration/proxy-restart.sh \
	tests/integration/proxy-auditfull.sh \
	tests/integration/proxy-audit-once.sh \
	tests/integration/proxy-audit-batch.sh \
	tests/integration/proxy-socks.sh \
	tests/integration/proxy-budget.sh \
	tests/integration/proxy-report.sh \
	tests/integration/proxy-learn.sh \
	tests/integration/proxy-ask.sh \
	tests/integration/reload-session-removed.sh
TESTS += $(PROXY_SCENARIOS)
EXTRA_DIST += $(PROXY_SCENARIOS)
