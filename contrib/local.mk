# contrib/local.mk: what "make install" puts beside the programs: the
# systemd unit (in $(systemdsystemunitdir), see configure --help), the
# config it reads (in $(sysconfdir)/postern, only when absent), the
# logrotate file (in $(sysconfdir)/logrotate.d) and the example configs
# (in $(docdir)/examples).  "make install-systemd" installs the unit, the
# config and the logrotate file alone.

examplesdir = $(docdir)/examples
dist_examples_DATA = contrib/examples/dev-laptop.ini \
	contrib/examples/host-proxy.ini contrib/examples/sidecar.ini

# The unit names the proxy and its config by their installed paths: the
# checked-in file says /usr/local/bin and /etc/postern; the installed one
# says $(bindir) and $(sysconfdir)/postern, written at install time so
# that "make install prefix=..." is honoured.
install-systemd:
	$(MKDIR_P) '$(DESTDIR)$(systemdsystemunitdir)'
	sed -e 's|/usr/local/bin/|$(bindir)/|g' \
		-e 's|/etc/postern/postern.ini|$(sysconfdir)/postern/postern.ini|g' \
		'$(top_srcdir)/contrib/systemd/postern-proxy.service' \
		>'$(DESTDIR)$(systemdsystemunitdir)/postern-proxy.service.tmp'
	chmod 644 '$(DESTDIR)$(systemdsystemunitdir)/postern-proxy.service.tmp'
	mv '$(DESTDIR)$(systemdsystemunitdir)/postern-proxy.service.tmp' \
		'$(DESTDIR)$(systemdsystemunitdir)/postern-proxy.service'
	$(MKDIR_P) '$(DESTDIR)$(sysconfdir)/postern'
	if [ ! -e '$(DESTDIR)$(sysconfdir)/postern/postern.ini' ]; then \
		$(INSTALL_DATA) '$(top_srcdir)/contrib/systemd/postern.ini' \
			'$(DESTDIR)$(sysconfdir)/postern/postern.ini'; \
	else \
		echo 'kept the existing $(DESTDIR)$(sysconfdir)/postern/postern.ini'; \
	fi
	$(MKDIR_P) '$(DESTDIR)$(sysconfdir)/logrotate.d'
	$(INSTALL_DATA) '$(top_srcdir)/contrib/logrotate/postern-proxy' \
		'$(DESTDIR)$(sysconfdir)/logrotate.d/postern-proxy'
install-data-local: install-systemd
# The config goes only when it is still the shipped one.
uninstall-local:
	rm -f '$(DESTDIR)$(systemdsystemunitdir)/postern-proxy.service'
	rm -f '$(DESTDIR)$(sysconfdir)/logrotate.d/postern-proxy'
	if cmp -s '$(top_srcdir)/contrib/systemd/postern.ini' \
		'$(DESTDIR)$(sysconfdir)/postern/postern.ini'; then \
		rm -f '$(DESTDIR)$(sysconfdir)/postern/postern.ini'; \
	fi
.PHONY: install-systemd

TESTS += tests/integration/install-systemd.sh
EXTRA_DIST += tests/integration/install-systemd.sh
TESTS += tests/integration/k8s-schema.sh
EXTRA_DIST += tests/integration/k8s-schema.sh tests/integration/lib-k8s
TESTS += tests/integration/podman-kube.sh
EXTRA_DIST += tests/integration/podman-kube.sh
TESTS += tests/integration/k8s-central.sh
EXTRA_DIST += tests/integration/k8s-central.sh
TESTS += tests/integration/podman-central.sh
EXTRA_DIST += tests/integration/podman-central.sh contrib/Containerfile.proxy \
	tests/integration/lib-podman.sh

# "make image": the FROM scratch image of contrib/Containerfile, tagged
# postern:VERSION.  Its two binaries are fully static: this tree's own when
# it is configured so, else those of build-static/, a build of a clean copy
# of the distributed sources ("make distdir" into build-static/src), because
# configure refuses an out-of-tree build of a source tree configured in place.
IMAGE = postern:$(VERSION)
STATIC_DIR = build-static
if STATIC_BINARIES
static_bindir = $(abs_top_builddir)
static-binaries: postern-sidecar postern-bridge
else
static_bindir = $(abs_top_builddir)/$(STATIC_DIR)/build
static-binaries:
	$(MKDIR_P) $(STATIC_DIR)/build
	$(MAKE) $(AM_MAKEFLAGS) distdir distdir='$(abs_top_builddir)/$(STATIC_DIR)/src' >/dev/null
	test -f $(STATIC_DIR)/build/config.status || \
		{ cd $(STATIC_DIR)/build && ../src/configure -q --enable-static-binaries; }
	cd $(STATIC_DIR)/build && $(MAKE) $(AM_MAKEFLAGS) postern-sidecar postern-bridge
endif
image: static-binaries
	rm -rf $(STATIC_DIR)/image
	$(MKDIR_P) $(STATIC_DIR)/image
	cp '$(static_bindir)/postern-sidecar' '$(static_bindir)/postern-bridge' $(STATIC_DIR)/image/
	podman build -f '$(abs_top_srcdir)/contrib/Containerfile' --build-arg BIN=. \
		-t '$(IMAGE)' $(STATIC_DIR)/image

# The podman tests need the same binaries: built before them when they can
# run (root, podman, no POSTERN_STATIC_DIR); a failed build removes them,
# and the tests skip naming its log.
podman-test-binaries:
	@if [ "$$(id -u)" = 0 ] && [ -z "$$POSTERN_STATIC_DIR" ] && \
	    command -v podman >/dev/null 2>&1; then \
		$(MKDIR_P) $(STATIC_DIR); \
		echo "  STATIC   $(STATIC_DIR)/ (for the podman tests)"; \
		$(MAKE) $(AM_MAKEFLAGS) static-binaries >$(STATIC_DIR)/build.log 2>&1 || { \
			rm -f $(STATIC_DIR)/build/postern-sidecar $(STATIC_DIR)/build/postern-bridge; \
			echo "  STATIC   failed, the podman tests skip: see $(STATIC_DIR)/build.log"; }; \
	fi
tests/integration/sidecar-podman.log tests/integration/podman-kube.log: podman-test-binaries

# "make image-proxy": the central proxy's image (contrib/k8s/central/),
# contrib/Containerfile.proxy with postern-proxy alone, fully static as
# above, tagged postern-proxy:VERSION.
IMAGE_PROXY = postern-proxy:$(VERSION)
if STATIC_BINARIES
static-proxy: postern-proxy
else
static-proxy: static-binaries
	cd $(STATIC_DIR)/build && $(MAKE) $(AM_MAKEFLAGS) postern-proxy
endif
image-proxy: static-proxy
	rm -rf $(STATIC_DIR)/image-proxy
	$(MKDIR_P) $(STATIC_DIR)/image-proxy
	cp '$(static_bindir)/postern-proxy' $(STATIC_DIR)/image-proxy/
	podman build -f '$(abs_top_srcdir)/contrib/Containerfile.proxy' --build-arg BIN=. \
		-t '$(IMAGE_PROXY)' $(STATIC_DIR)/image-proxy
# podman-central.sh's binary, built as podman-test-binaries builds theirs
# (after them: both use build-static/).
podman-central-binaries: podman-test-binaries
	@if [ "$$(id -u)" = 0 ] && [ -z "$$POSTERN_STATIC_DIR" ] && \
	    command -v podman >/dev/null 2>&1; then \
		$(MKDIR_P) $(STATIC_DIR); \
		echo "  STATIC   $(STATIC_DIR)/ postern-proxy (for podman-central)"; \
		$(MAKE) $(AM_MAKEFLAGS) static-proxy >$(STATIC_DIR)/build-proxy.log 2>&1 || { \
			rm -f $(STATIC_DIR)/build/postern-proxy; \
			echo "  STATIC   failed, podman-central skips: see $(STATIC_DIR)/build-proxy.log"; }; \
	fi
tests/integration/podman-central.log: podman-central-binaries
clean-local:
	-rm -rf $(STATIC_DIR)
.PHONY: image static-binaries podman-test-binaries
.PHONY: image-proxy static-proxy podman-central-binaries
