# proxy/admin/admin.mk: live operations: the admin socket, the inotify
# reload, `postern-proxy ctl`, and their tests.
libpostern_proxy_a_SOURCES += \
	proxy/admin/admin.c proxy/admin/admin.h \
	proxy/ctl.c proxy/ctl.h \
	proxy/admin/status.c proxy/admin/status.h \
	proxy/watch.c proxy/watch.h
# ctl reads the admin key with inih directly (see ctl.c).
libpostern_proxy_a_CFLAGS += $(INIH_CFLAGS)

check_PROGRAMS += tests/unit/test-ctl
TESTS += tests/unit/test-ctl
tests_unit_test_ctl_SOURCES = tests/unit/test-ctl.c tests/unit/tap.h
tests_unit_test_ctl_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(OPENSSL_CFLAGS)
tests_unit_test_ctl_LDADD = $(PROXY_LIBS)

# Scenarios in the namespace world (tests/integration/README.md), plus
# admin-examples.sh, which needs no namespaces: every contrib/examples/
# config passes --check.
ADMIN_SCENARIOS = \
	tests/integration/admin-ctl.sh \
	tests/integration/admin-examples.sh \
	tests/integration/admin-perms.sh \
	tests/integration/admin-routes.sh \
	tests/integration/admin-status.sh \
	tests/integration/listen-perms.sh \
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
