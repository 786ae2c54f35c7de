# proxy/h2.mk: the HTTP/2 relay of a terminated tunnel (issue 15) on
# libnghttp2, its unit test and the replay of its fuzz corpus.
libpostern_proxy_a_SOURCES += proxy/h2.c proxy/h2.h
libpostern_proxy_a_CFLAGS += $(NGHTTP2_CFLAGS)
PROXY_LIBS += $(NGHTTP2_LIBS)
