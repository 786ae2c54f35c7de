# base/: the small utilities all three binaries share: the number parser
# and cursor, the log, the splice pump, supervision (PID 1, signals,
# exit status, uid drop), escaping and hex, files replaced whole, UNIX socket addresses, a
# loopback listener's congestion control, the
# response head postern's own clients read.  libc
# only, since the bridge links it and may link nothing but libnl and libc.
noinst_LIBRARIES += libpostern_base.a
libpostern_base_a_SOURCES = \
	base/cursor.c base/cursor.h \
	base/filewrite.c base/filewrite.h \
	base/log.c base/log.h \
	base/pump.c base/pump.h \
	base/reply.c base/reply.h \
	base/sockmsg.c base/sockmsg.h \
	base/super.c base/super.h \
	base/tcp.c base/tcp.h \
	base/text.c base/text.h \
	base/tokenfile.c base/tokenfile.h \
	base/unix.c base/unix.h
BASE_LIBS = libpostern_base.a

# Unit tests (pure, or over socket pairs and forked children: they run
# everywhere), each tests/unit/NAME.c.
BASE_UNIT = tests/unit/test-base-cursor tests/unit/test-base-pump \
	tests/unit/test-base-super tests/unit/test-base-text tests/unit/test-base-sockmsg \
	tests/unit/test-base-tokenfile
check_PROGRAMS += $(BASE_UNIT)
TESTS += $(BASE_UNIT)
tests_unit_test_base_cursor_LDADD = $(BASE_LIBS)
tests_unit_test_base_pump_LDADD = $(BASE_LIBS)
tests_unit_test_base_super_LDADD = $(BASE_LIBS)
tests_unit_test_base_text_LDADD = $(BASE_LIBS)
tests_unit_test_base_sockmsg_LDADD = $(BASE_LIBS)
tests_unit_test_base_tokenfile_LDADD = $(BASE_LIBS)

# Fuzz target of the number parser and the cursor.
check_PROGRAMS += tests/fuzz/base-cursor-replay
TESTS += tests/fuzz/base-cursor-replay
tests_fuzz_base_cursor_replay_SOURCES = tests/fuzz/fuzz-base-cursor.c tests/fuzz/replay.c
tests_fuzz_base_cursor_replay_CPPFLAGS = $(AM_CPPFLAGS) \
	-DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/base-cursor"'
tests_fuzz_base_cursor_replay_LDADD = $(BASE_LIBS)
EXTRA_DIST += tests/fuzz/fuzz-base-cursor.c tests/fuzz/fuzz-base-cursor.srcs

# Fuzz target of the socket maker's messages and path rule.
check_PROGRAMS += tests/fuzz/sockmsg-replay
TESTS += tests/fuzz/sockmsg-replay
tests_fuzz_sockmsg_replay_SOURCES = tests/fuzz/fuzz-sockmsg.c tests/fuzz/replay.c
tests_fuzz_sockmsg_replay_CPPFLAGS = $(AM_CPPFLAGS) \
	-DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/sockmsg"'
tests_fuzz_sockmsg_replay_LDADD = $(BASE_LIBS)
EXTRA_DIST += tests/fuzz/fuzz-sockmsg.c tests/fuzz/fuzz-sockmsg.srcs
