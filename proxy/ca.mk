# proxy/ca.mk: the per-session certificate authority and the verified
# client side to upstreams (issue 15), their unit test, and the helper that
# writes a CA and leaves to files for tests/integration/ca-tls.sh.
libpostern_proxy_a_SOURCES += proxy/ca.c proxy/ca.h proxy/tlsup.c proxy/tlsup.h
