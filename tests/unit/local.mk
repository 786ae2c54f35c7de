# tests/unit/: one TAP program per module, run by "make check".
check_PROGRAMS += tests/unit/test-host tests/unit/test-ranges
TESTS += tests/unit/test-host tests/unit/test-ranges
tests_unit_test_host_SOURCES = tests/unit/test-host.c tests/unit/tap.h
tests_unit_test_host_LDADD = $(CONF_LIBS)
tests_unit_test_ranges_SOURCES = tests/unit/test-ranges.c tests/unit/tap.h
tests_unit_test_ranges_LDADD = $(CONF_LIBS)
