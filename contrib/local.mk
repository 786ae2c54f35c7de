# contrib/local.mk: what "make install" puts beside the programs: the
# systemd unit (in $(systemdsystemunitdir), see configure --help) and the
# example configs (in $(docdir)/examples).  "make install-systemd" installs
# the unit alone.

examplesdir = $(docdir)/examples
dist_examples_DATA = contrib/examples/dev-laptop.ini \
	contrib/examples/host-proxy.ini contrib/examples/sidecar.ini

# The unit names the proxy by its installed path: the checked-in file says
# /usr/local/bin, the default prefix's; the installed one says $(bindir),
# written at install time so that "make install prefix=..." is honoured.
install-systemd:
	$(MKDIR_P) '$(DESTDIR)$(systemdsystemunitdir)'
	sed -e 's|/usr/local/bin/|$(bindir)/|g' \
		'$(top_srcdir)/contrib/systemd/postern-proxy.service' \
		>'$(DESTDIR)$(systemdsystemunitdir)/postern-proxy.service.tmp'
	chmod 644 '$(DESTDIR)$(systemdsystemunitdir)/postern-proxy.service.tmp'
	mv '$(DESTDIR)$(systemdsystemunitdir)/postern-proxy.service.tmp' \
		'$(DESTDIR)$(systemdsystemunitdir)/postern-proxy.service'
install-data-local: install-systemd
uninstall-local:
	rm -f '$(DESTDIR)$(systemdsystemunitdir)/postern-proxy.service'
.PHONY: install-systemd

TESTS += tests/integration/install-systemd.sh
EXTRA_DIST += tests/integration/install-systemd.sh
TESTS += tests/integration/k8s-schema.sh
EXTRA_DIST += tests/integration/k8s-schema.sh tests/integration/lib-k8s
TESTS += tests/integration/podman-kube.sh
EXTRA_DIST += tests/integration/podman-kube.sh
