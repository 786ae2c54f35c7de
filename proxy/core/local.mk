# proxy/core/: the server and its workers, listeners, connection counts,
# the audit log, the allocator, calls across loops and the I/O under
# libevent's bufferevents.  Their unit tests
# (test-mem, test-audit-json, test-loopcall, test-io) are in tests/unit/local.mk.
libpostern_proxy_a_SOURCES += \
	proxy/core/audit.c proxy/core/audit.h \
	proxy/core/conncount.c proxy/core/conncount.h \
	proxy/core/decider.c proxy/core/decider.h \
	proxy/core/io.c proxy/core/io.h \
	proxy/core/listen.c \
	proxy/core/lock.h \
	proxy/core/log.h \
	proxy/core/loopcall.c proxy/core/loopcall.h \
	proxy/core/mem.c proxy/core/mem.h \
	proxy/core/prio.h \
	proxy/core/server.c proxy/core/server.h \
	proxy/core/sockmaker.c proxy/core/sockmaker.h \
	proxy/core/worker.c proxy/core/worker.h
