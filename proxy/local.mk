# proxy/: the allowlist proxy engine and postern-proxy.  The engine is one
# library, libpostern_proxy.a; each folder below proxy/ lists its own
# sources in its own local.mk (core/, flow/, policy/, proto/, tls/,
# admin/).  This one has the top: the engine's entry points, check and
# explain, reload and its inotify watch, `postern-proxy ctl`, main.
noinst_LIBRARIES += libpostern_proxy.a
libpostern_proxy_a_SOURCES += \
	proxy/audittool.c proxy/audittool.h \
	proxy/check.c proxy/check.h \
	proxy/ctl.c proxy/ctl.h \
	proxy/engine.c proxy/engine.h \
	proxy/explain.c proxy/explain.h \
	proxy/reload.c proxy/reload.h \
	proxy/watch.c proxy/watch.h
# nghttp2 is for flow/h2.c; ctl.c reads the admin key with inih directly.
libpostern_proxy_a_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(OPENSSL_CFLAGS) $(CARES_CFLAGS) \
	$(NGHTTP2_CFLAGS) $(INIH_CFLAGS) $(JANSSON_CFLAGS)
PROXY_LIBS = libpostern_proxy.a $(CONF_LIBS) $(LIBEVENT_LIBS) $(CARES_LIBS) $(OPENSSL_LIBS) \
	$(NGHTTP2_LIBS) $(JANSSON_LIBS)

bin_PROGRAMS += postern-proxy
postern_proxy_SOURCES = proxy/main.c
postern_proxy_LDADD = $(PROXY_LIBS)
dist_man_MANS += proxy/postern-proxy.8 conf/postern.ini.5

# `postern-proxy ctl` (proxy/ctl.h).
check_PROGRAMS += tests/unit/test-ctl
TESTS += tests/unit/test-ctl
tests_unit_test_ctl_SOURCES = tests/unit/test-ctl.c tests/unit/tap.h
tests_unit_test_ctl_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(OPENSSL_CFLAGS)
tests_unit_test_ctl_LDADD = $(PROXY_LIBS)

# The proxy's scenarios in the namespace world, one per file.
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
	tests/integration/audit-chain.sh \
	tests/integration/audit-ocsf.sh \
	tests/integration/proxy-socks.sh \
	tests/integration/proxy-budget.sh \
	tests/integration/proxy-report.sh \
	tests/integration/proxy-learn.sh \
	tests/integration/proxy-ask.sh \
	tests/integration/proxy-token.sh \
	tests/integration/proxy-decider.sh \
	tests/integration/proxy-decider-load.sh \
	tests/integration/proxy-decider-load-workers.sh \
	tests/integration/reload-session-removed.sh
TESTS += $(PROXY_SCENARIOS)
EXTRA_DIST += $(PROXY_SCENARIOS)
