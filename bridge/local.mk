# bridge/: postern-bridge, the in-namespace relay (libnl and libc only: no
# libevent, no OpenSSL, no conf library, so that it stays small and static).
bin_PROGRAMS += postern-bridge
postern_bridge_SOURCES = \
	bridge/main.c \
	bridge/addr.c bridge/addr.h \
	bridge/env.c bridge/env.h \
	bridge/link.c bridge/link.h \
	bridge/relay.c bridge/relay.h
postern_bridge_CFLAGS = $(AM_CFLAGS) $(LIBNL_CFLAGS)
postern_bridge_LDADD = $(LIBNL_LIBS)
dist_man_MANS += bridge/postern-bridge.8
