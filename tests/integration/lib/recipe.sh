# recipe.sh: README's bwrap recipe run as uid 1000 inside the world's px
# namespace, for the scenarios on top of lib/world.sh.  Sourced, never run
# on its own.

# recipe_ok: true when bwrap is installed, postern-bridge is built and
# uid 1000 may make a user namespace (else the caller skips with a diag).
recipe_ok() {
	command -v bwrap >/dev/null 2>&1 && [ -x "$top_builddir/postern-bridge" ] &&
	    setpriv --reuid=1000 --regid=1000 --clear-groups bwrap --unshare-user \
	    --unshare-net --ro-bind / / true 2>/dev/null
}

# recipe_dir [NAME]: make RECIPE_DIR, a new directory
# /var/lib/postern-NAME.XXXXXX (outside the sandbox's fresh /tmp and
# /run, and out of a build tree uid 1000 may not read), holding a copy of
# postern-bridge and s1/ for the session's socket, s1/proxy.sock.  The
# caller removes it in its world_cleanup_hook.
recipe_dir() {
	RECIPE_DIR=$(mktemp -d "/var/lib/postern-${1:-recipe}.XXXXXX") || die "mktemp"
	mkdir -p "$RECIPE_DIR/s1" || die "mkdir"
	cp "$top_builddir/postern-bridge" "$RECIPE_DIR/postern-bridge" || die "copy the bridge"
	chmod -R a+rX "$RECIPE_DIR"
}

# recipe_run CMD...: CMD in README's bwrap recipe as uid 1000, with no
# network but the session's socket $RECIPE_DIR/s1/proxy.sock (mounted at
# /run/postern/s1), through postern-bridge; RECIPE_DIR is also there,
# read-only, at its own path (what the test put in it is made readable
# first); stdin is /dev/null.
recipe_run() {
	chmod -R a+rX "$RECIPE_DIR"
	in_px setpriv --reuid=1000 --regid=1000 --clear-groups bwrap --unshare-all --unshare-user \
		--cap-drop ALL --die-with-parent --as-pid-1 \
		--ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib \
		--symlink usr/lib64 /lib64 --symlink usr/sbin /sbin --ro-bind /etc /etc \
		--dev /dev --proc /proc --tmpfs /tmp --tmpfs /run \
		--ro-bind "$RECIPE_DIR/s1" /run/postern/s1 --ro-bind "$RECIPE_DIR/postern-bridge" /run/pb \
		--ro-bind "$RECIPE_DIR" "$RECIPE_DIR" \
		-- /run/pb --connect /run/postern/s1/proxy.sock -- "$@" </dev/null
}
