# proxy/admin/: live operations: the admin socket, the status it reports
# and the counters behind it.  (`postern-proxy ctl`, the reload and its
# inotify watch are in proxy/.)
libpostern_proxy_a_SOURCES += \
	proxy/admin/admin.c proxy/admin/admin.h \
	proxy/admin/stats.c proxy/admin/stats.h \
	proxy/admin/status.c proxy/admin/status.h

# Scenarios in the namespace world (tests/integration/README.md) of the
# admin socket, ctl and the reload, plus admin-examples.sh, which needs
# no namespaces: every contrib/examples/ config passes --check.
ADMIN_SCENARIOS = \
	tests/integration/admin-ctl.sh \
	tests/integration/admin-examples.sh \
	tests/integration/admin-perms.sh \
	tests/integration/admin-routes.sh \
	tests/integration/admin-status.sh \
	tests/integration/listen-perms.sh \
	tests/integration/listen-sockmaker.sh \
	tests/integration/reload-audit.sh \
	tests/integration/reload-broken.sh \
	tests/integration/reload-configmap.sh \
	tests/integration/reload-halfwrite.sh \
	tests/integration/reload-race.sh \
	tests/integration/reload-load.sh \
	tests/integration/reload-perms.sh \
	tests/integration/reload-revoke.sh \
	tests/integration/reload-address.sh \
	tests/integration/reload-sessions.sh
TESTS += $(ADMIN_SCENARIOS)
EXTRA_DIST += $(ADMIN_SCENARIOS) tests/integration/lib-admin
