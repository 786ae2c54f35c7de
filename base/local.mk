# base/: the small utilities all three binaries share (the number parser
# and cursor, the log, ...).  libc only, since the bridge links it and may
# link nothing but libnl and libc.
noinst_LIBRARIES += libpostern_base.a
libpostern_base_a_SOURCES = \
	base/cursor.c base/cursor.h \
	base/log.c base/log.h \
	base/pump.c base/pump.h \
	base/super.c base/super.h \
	base/text.c base/text.h
BASE_LIBS = libpostern_base.a

# Unit test of the number parser and the cursor (pure; runs everywhere).
check_PROGRAMS += tests/unit/test-base-cursor
TESTS += tests/unit/test-base-cursor
tests_unit_test_base_cursor_SOURCES = tests/unit/test-base-cursor.c tests/unit/tap.h
tests_unit_test_base_cursor_LDADD = $(BASE_LIBS)

# Fuzz target of the number parser and the cursor.
check_PROGRAMS += tests/fuzz/base-cursor-replay
TESTS += tests/fuzz/base-cursor-replay
tests_fuzz_base_cursor_replay_SOURCES = tests/fuzz/fuzz-base-cursor.c tests/fuzz/replay.c
tests_fuzz_base_cursor_replay_CPPFLAGS = $(AM_CPPFLAGS) \
	-DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/base-cursor"'
tests_fuzz_base_cursor_replay_LDADD = $(BASE_LIBS)
EXTRA_DIST += tests/fuzz/fuzz-base-cursor.c tests/fuzz/fuzz-base-cursor.srcs

# Unit test of the supervision module (forks; runs everywhere).
check_PROGRAMS += tests/unit/test-base-super
TESTS += tests/unit/test-base-super
tests_unit_test_base_super_SOURCES = tests/unit/test-base-super.c tests/unit/tap.h
tests_unit_test_base_super_LDADD = $(BASE_LIBS)

# Unit test of the splice pump and its pipe pool (socket pairs; runs
# everywhere).
check_PROGRAMS += tests/unit/test-base-pump
TESTS += tests/unit/test-base-pump
tests_unit_test_base_pump_SOURCES = tests/unit/test-base-pump.c tests/unit/tap.h
tests_unit_test_base_pump_LDADD = $(BASE_LIBS)

# Unit test of the escaper and hex (pure; runs everywhere).
check_PROGRAMS += tests/unit/test-base-text
TESTS += tests/unit/test-base-text
tests_unit_test_base_text_SOURCES = tests/unit/test-base-text.c tests/unit/tap.h
tests_unit_test_base_text_LDADD = $(BASE_LIBS)
