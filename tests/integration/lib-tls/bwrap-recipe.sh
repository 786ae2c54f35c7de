# bwrap-recipe.sh: README's bwrap recipe (postern-bridge in a bwrap
# sandbox with no network but the session's UNIX socket), for the
# secret-*.sh scenarios.  Sourced after lib/world.sh, never run alone.

# recipe_ok: true when bwrap, postern-bridge and user namespaces for
# uid 1000 are all there.
recipe_ok() {
	command -v bwrap >/dev/null 2>&1 && [ -x "$top_builddir/postern-bridge" ] &&
	    setpriv --reuid=1000 --regid=1000 --clear-groups bwrap --unshare-user --unshare-net \
	    --ro-bind / / true 2>/dev/null
}

# recipe_run DIR SOCK CMD...: CMD as uid 1000, in px, in the recipe's
# sandbox, through postern-bridge on the session's socket SOCK (its
# directory is bound at /run/postern/s1).  DIR is a 0755 directory
# outside /tmp, /var/tmp and /run, bound read-only at its own path: the
# bridge is copied there, as the build tree may be unreadable to uid 1000.
recipe_run() {
	_rd=$1
	_rs=$2
	shift 2
	cp "$top_builddir/postern-bridge" "$_rd/postern-bridge" || return 1
	chmod -R a+rX "$_rd"
	in_px setpriv --reuid=1000 --regid=1000 --clear-groups bwrap --unshare-all --unshare-user \
		--cap-drop ALL --die-with-parent --as-pid-1 \
		--ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib \
		--symlink usr/lib64 /lib64 --symlink usr/sbin /sbin --ro-bind /etc /etc \
		--dev /dev --proc /proc --tmpfs /tmp --tmpfs /run \
		--ro-bind "$(dirname "$_rs")" /run/postern/s1 --ro-bind "$_rd/postern-bridge" /run/pb \
		--ro-bind "$_rd" "$_rd" \
		-- /run/pb --connect "/run/postern/s1/$(basename "$_rs")" -- "$@"
}
