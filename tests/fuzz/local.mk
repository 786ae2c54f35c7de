# tests/fuzz/: libFuzzer targets.  "make check" replays each corpus through
# tests/fuzz/replay.c; "make fuzz" builds them with clang and fuzzes each for
# FUZZ_SECONDS.  A target NAME is tests/fuzz/fuzz-NAME.c + fuzz-NAME.srcs +
# corpus/NAME/, plus a NAME-replay check program declared like "host" below.
FUZZ_SECONDS = 60
EXTRA_DIST += tests/fuzz/run-fuzz.sh tests/fuzz/corpus
TESTS += tests/fuzz/srcs.sh
EXTRA_DIST += tests/fuzz/srcs.sh

fuzz: all
	FUZZ_CC='$(FUZZ_CC)' srcdir='$(abs_top_srcdir)' builddir='$(abs_top_builddir)' \
	  $(SHELL) $(top_srcdir)/tests/fuzz/run-fuzz.sh $(FUZZ_SECONDS) $(FUZZ_ONLY)
.PHONY: fuzz

check_PROGRAMS += tests/fuzz/host-replay
TESTS += tests/fuzz/host-replay
tests_fuzz_host_replay_SOURCES = tests/fuzz/fuzz-host.c tests/fuzz/replay.c
tests_fuzz_host_replay_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/host"'
tests_fuzz_host_replay_LDADD = $(CONF_LIBS)

check_PROGRAMS += tests/fuzz/config-replay tests/fuzz/rule-replay
TESTS += tests/fuzz/config-replay tests/fuzz/rule-replay
tests_fuzz_config_replay_SOURCES = tests/fuzz/fuzz-config.c tests/fuzz/replay.c
tests_fuzz_config_replay_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/config"'
tests_fuzz_config_replay_LDADD = $(CONF_LIBS)
tests_fuzz_rule_replay_SOURCES = tests/fuzz/fuzz-rule.c tests/fuzz/replay.c
tests_fuzz_rule_replay_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/rule"'
tests_fuzz_rule_replay_LDADD = $(CONF_LIBS)

check_PROGRAMS += tests/fuzz/rtsess-replay
TESTS += tests/fuzz/rtsess-replay
tests_fuzz_rtsess_replay_SOURCES = tests/fuzz/fuzz-rtsess.c tests/fuzz/replay.c
tests_fuzz_rtsess_replay_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/rtsess"'
tests_fuzz_rtsess_replay_LDADD = $(CONF_LIBS)

check_PROGRAMS += tests/fuzz/secret-replay
TESTS += tests/fuzz/secret-replay
tests_fuzz_secret_replay_SOURCES = tests/fuzz/fuzz-secret.c tests/fuzz/replay.c
tests_fuzz_secret_replay_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/secret"'
tests_fuzz_secret_replay_LDADD = $(CONF_LIBS)
EXTRA_DIST += tests/fuzz/fuzz-secret.srcs

check_PROGRAMS += tests/fuzz/etchosts-replay
TESTS += tests/fuzz/etchosts-replay
tests_fuzz_etchosts_replay_SOURCES = tests/fuzz/fuzz-etchosts.c tests/fuzz/replay.c
tests_fuzz_etchosts_replay_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/etchosts"'
tests_fuzz_etchosts_replay_LDADD = $(CONF_LIBS)

# The reflection scan (proxy/proto/scrub.h): streams in pieces, WebSocket frames.
check_PROGRAMS += tests/fuzz/scrub-replay
TESTS += tests/fuzz/scrub-replay
tests_fuzz_scrub_replay_SOURCES = tests/fuzz/fuzz-scrub.c tests/fuzz/replay.c
tests_fuzz_scrub_replay_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/scrub"'
tests_fuzz_scrub_replay_LDADD = $(PROXY_LIBS)
EXTRA_DIST += tests/fuzz/fuzz-scrub.srcs

# The leak scan (proxy/proto/leak.h): needles in every encoding, streams in pieces, host names.
check_PROGRAMS += tests/fuzz/leak-replay
TESTS += tests/fuzz/leak-replay
tests_fuzz_leak_replay_SOURCES = tests/fuzz/fuzz-leak.c tests/fuzz/replay.c
tests_fuzz_leak_replay_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/leak"'
tests_fuzz_leak_replay_LDADD = $(PROXY_LIBS)
EXTRA_DIST += tests/fuzz/fuzz-leak.srcs

# The SOCKS5 parser (proxy/proto/socks.h): greeting and request.
check_PROGRAMS += tests/fuzz/socks-replay
TESTS += tests/fuzz/socks-replay
tests_fuzz_socks_replay_SOURCES = tests/fuzz/fuzz-socks.c tests/fuzz/replay.c
tests_fuzz_socks_replay_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/socks"'
tests_fuzz_socks_replay_LDADD = $(PROXY_LIBS)
EXTRA_DIST += tests/fuzz/fuzz-socks.srcs

# The grants_file parser (conf/grantfile.h).
check_PROGRAMS += tests/fuzz/grantfile-replay
TESTS += tests/fuzz/grantfile-replay
tests_fuzz_grantfile_replay_SOURCES = tests/fuzz/fuzz-grantfile.c tests/fuzz/replay.c
tests_fuzz_grantfile_replay_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/grantfile"'
tests_fuzz_grantfile_replay_LDADD = $(CONF_LIBS)
EXTRA_DIST += tests/fuzz/fuzz-grantfile.srcs

# What a refusal offers (conf/decide.h) read back through the config reader.
check_PROGRAMS += tests/fuzz/suggest-replay
TESTS += tests/fuzz/suggest-replay
tests_fuzz_suggest_replay_SOURCES = tests/fuzz/fuzz-suggest.c tests/fuzz/replay.c
tests_fuzz_suggest_replay_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/suggest"'
tests_fuzz_suggest_replay_LDADD = $(CONF_LIBS)
EXTRA_DIST += tests/fuzz/fuzz-suggest.srcs

# run --settings: an srt or Claude Code settings file (sidecar/srtsettings.h).
check_PROGRAMS += tests/fuzz/srtsettings-replay
TESTS += tests/fuzz/srtsettings-replay
tests_fuzz_srtsettings_replay_SOURCES = tests/fuzz/fuzz-srtsettings.c tests/fuzz/replay.c \
	sidecar/srtsettings.c
tests_fuzz_srtsettings_replay_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_fuzz_srtsettings_replay_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/srtsettings"'
tests_fuzz_srtsettings_replay_LDADD = $(CONF_LIBS) $(JANSSON_LIBS)
EXTRA_DIST += tests/fuzz/fuzz-srtsettings.srcs

# The credentials of an auth=token listener (proxy/proto/proxyauth.h).
check_PROGRAMS += tests/fuzz/proxyauth-replay
TESTS += tests/fuzz/proxyauth-replay
tests_fuzz_proxyauth_replay_SOURCES = tests/fuzz/fuzz-proxyauth.c tests/fuzz/replay.c
tests_fuzz_proxyauth_replay_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/proxyauth"'
tests_fuzz_proxyauth_replay_LDADD = $(PROXY_LIBS)
EXTRA_DIST += tests/fuzz/fuzz-proxyauth.srcs
