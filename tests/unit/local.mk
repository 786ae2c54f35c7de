# tests/unit/: one TAP program per module, run by "make check".
check_PROGRAMS += tests/unit/test-host tests/unit/test-ranges
TESTS += tests/unit/test-host tests/unit/test-ranges
tests_unit_test_host_SOURCES = tests/unit/test-host.c tests/unit/tap.h
tests_unit_test_host_LDADD = $(CONF_LIBS)
tests_unit_test_ranges_SOURCES = tests/unit/test-ranges.c tests/unit/tap.h
tests_unit_test_ranges_LDADD = $(CONF_LIBS)
check_PROGRAMS += tests/unit/test-rule tests/unit/test-config
TESTS += tests/unit/test-rule tests/unit/test-config
tests_unit_test_rule_SOURCES = tests/unit/test-rule.c tests/unit/tap.h
tests_unit_test_rule_LDADD = $(CONF_LIBS)
tests_unit_test_config_SOURCES = tests/unit/test-config.c tests/unit/tap.h tests/unit/conferr.h
tests_unit_test_config_LDADD = $(CONF_LIBS)
check_PROGRAMS += tests/unit/test-parent
TESTS += tests/unit/test-parent
tests_unit_test_parent_SOURCES = tests/unit/test-parent.c tests/unit/tap.h tests/unit/conferr.h
tests_unit_test_parent_LDADD = $(CONF_LIBS)
check_PROGRAMS += tests/unit/test-secret
TESTS += tests/unit/test-secret
tests_unit_test_secret_SOURCES = tests/unit/test-secret.c tests/unit/tap.h tests/unit/conferr.h
tests_unit_test_secret_LDADD = $(CONF_LIBS)
check_PROGRAMS += tests/unit/test-mem
TESTS += tests/unit/test-mem
tests_unit_test_mem_SOURCES = tests/unit/test-mem.c tests/unit/tap.h
tests_unit_test_mem_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS)
tests_unit_test_mem_LDADD = $(PROXY_LIBS)

check_PROGRAMS += tests/unit/test-audit-json
TESTS += tests/unit/test-audit-json
tests_unit_test_audit_json_SOURCES = tests/unit/test-audit-json.c tests/unit/tap.h
tests_unit_test_audit_json_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS)
tests_unit_test_audit_json_LDADD = $(PROXY_LIBS)
check_PROGRAMS += tests/unit/test-loopcall
TESTS += tests/unit/test-loopcall
tests_unit_test_loopcall_SOURCES = tests/unit/test-loopcall.c tests/unit/tap.h
tests_unit_test_loopcall_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS)
tests_unit_test_loopcall_LDADD = $(PROXY_LIBS)
# What the proxy's own I/O under bufferevents relies on of libevent.
check_PROGRAMS += tests/unit/test-io
TESTS += tests/unit/test-io
tests_unit_test_io_SOURCES = tests/unit/test-io.c tests/unit/tap.h
tests_unit_test_io_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS)
tests_unit_test_io_LDADD = $(PROXY_LIBS)

# The refusals of one run (postern-sidecar run's summary).
check_PROGRAMS += tests/unit/test-summary
TESTS += tests/unit/test-summary
tests_unit_test_summary_SOURCES = tests/unit/test-summary.c tests/unit/tap.h
tests_unit_test_summary_LDADD = $(PROXY_LIBS)
# The learn summary (run --learn, ctl learn).
check_PROGRAMS += tests/unit/test-learn
TESTS += tests/unit/test-learn
tests_unit_test_learn_SOURCES = tests/unit/test-learn.c tests/unit/tap.h
tests_unit_test_learn_LDADD = $(PROXY_LIBS)
# What postern offers to allow a refused request reads back as one rule.
check_PROGRAMS += tests/unit/test-suggest
TESTS += tests/unit/test-suggest
tests_unit_test_suggest_SOURCES = tests/unit/test-suggest.c tests/unit/tap.h
tests_unit_test_suggest_LDADD = $(CONF_LIBS)
# run --learn passes on only what reads back as one rule.
check_PROGRAMS += tests/unit/test-sidecar-learn
TESTS += tests/unit/test-sidecar-learn
tests_unit_test_sidecar_learn_SOURCES = tests/unit/test-sidecar-learn.c tests/unit/tap.h sidecar/learn.c
tests_unit_test_sidecar_learn_LDADD = $(CONF_LIBS)
# run --settings: an srt or Claude Code settings file as postern rules.
check_PROGRAMS += tests/unit/test-srtsettings
TESTS += tests/unit/test-srtsettings
tests_unit_test_srtsettings_SOURCES = tests/unit/test-srtsettings.c tests/unit/tap.h \
	sidecar/srtsettings.c
tests_unit_test_srtsettings_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_test_srtsettings_LDADD = $(CONF_LIBS) $(JANSSON_LIBS)
check_PROGRAMS += tests/unit/test-etchosts
TESTS += tests/unit/test-etchosts
tests_unit_test_etchosts_SOURCES = tests/unit/test-etchosts.c tests/unit/tap.h
tests_unit_test_etchosts_LDADD = $(CONF_LIBS)
# run's refusals file: escaped, each line once, bounded.
check_PROGRAMS += tests/unit/test-notice
TESTS += tests/unit/test-notice
tests_unit_test_notice_SOURCES = tests/unit/test-notice.c tests/unit/tap.h
tests_unit_test_notice_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS)
tests_unit_test_notice_LDADD = $(PROXY_LIBS)

# Every allocation of a config load and of the codecs fails in turn
# (allocfail.h): the wrap reaches this program only, never a product.
ALLOCFAIL_WRAP = -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup \
	-Wl,--wrap=strndup,--wrap=asprintf,--wrap=vasprintf
check_PROGRAMS += tests/unit/test-allocfail
TESTS += tests/unit/test-allocfail
tests_unit_test_allocfail_SOURCES = tests/unit/test-allocfail.c tests/unit/tap.h \
	tests/unit/allocfail.c tests/unit/allocfail.h
tests_unit_test_allocfail_CPPFLAGS = $(AM_CPPFLAGS) -DSNI_DATA_DIR='"$(abs_top_srcdir)/tests/unit/data"'
tests_unit_test_allocfail_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(CARES_CFLAGS) $(OPENSSL_CFLAGS)
tests_unit_test_allocfail_LDFLAGS = $(ALLOCFAIL_WRAP)
tests_unit_test_allocfail_LDADD = $(PROXY_LIBS)
check_PROGRAMS += tests/unit/test-awskey
TESTS += tests/unit/test-awskey
tests_unit_test_awskey_SOURCES = tests/unit/test-awskey.c tests/unit/tap.h
tests_unit_test_awskey_LDADD = $(CONF_LIBS)

check_PROGRAMS += tests/unit/test-secmem
TESTS += tests/unit/test-secmem
tests_unit_test_secmem_SOURCES = tests/unit/test-secmem.c tests/unit/tap.h
tests_unit_test_secmem_CFLAGS = $(AM_CFLAGS) $(OPENSSL_CFLAGS)
tests_unit_test_secmem_LDADD = $(PROXY_LIBS)
