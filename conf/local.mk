# conf/: the config model, host normaliser, rule matcher and ranges.
noinst_LIBRARIES += libpostern_conf.a
libpostern_conf_a_SOURCES = \
	conf/host.c conf/host.h \
	conf/ranges.c conf/ranges.h \
	conf/rule.c conf/rule.h \
	conf/config.c conf/config.h \
	conf/build.c conf/build.h \
	conf/reader.c conf/reader.h \
	conf/grantfile.c conf/grantfile.h \
	conf/keys.c conf/keys.h \
	conf/pins.c conf/pins.h \
	conf/strict.c conf/strict.h \
	conf/decide.c conf/decide.h \
	conf/etchosts.c conf/etchosts.h \
	conf/inject.c conf/inject.h \
	conf/secmem.c conf/secmem.h \
	conf/secret.c conf/secret.h \
	conf/awskey.c conf/awskey.h \
	conf/canary.c conf/canary.h \
	conf/auth.c conf/auth.h \
	conf/token.c conf/token.h \
	conf/parent.c conf/parent.h \
	conf/default.c
libpostern_conf_a_CFLAGS = $(AM_CFLAGS) $(OPENSSL_CFLAGS) $(INIH_CFLAGS)
CONF_LIBS = libpostern_conf.a $(BASE_LIBS) $(INIH_LIBS) $(OPENSSL_LIBS)
