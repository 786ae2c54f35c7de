# proxy/: the allowlist proxy engine and postern-proxy.
noinst_LIBRARIES += libpostern_proxy.a
libpostern_proxy_a_SOURCES =
libpostern_proxy_a_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(OPENSSL_CFLAGS) $(CARES_CFLAGS)
PROXY_LIBS = libpostern_proxy.a $(CONF_LIBS) $(LIBEVENT_LIBS) $(CARES_LIBS) $(OPENSSL_LIBS)
