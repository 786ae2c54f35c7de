# ghworld.sh: the GitHub App tests' world, sourced after lib/world.sh:
# org/allowed and org/other as bare repositories under $WORLD_DIR/repos,
# and githubmock.py's API (10.200.1.2:8446, checking the app's JWT with
# $WORLD_DIR/app.pub, app 1234, installation 42) and git server
# (10.200.1.2:8447), both logging in $mock.

# gh_world: make the repositories, start both servers, wait for them.
gh_world() {
	local src="$WORLD_DIR/src"
	mkdir -p "$mock" "$WORLD_DIR/repos/org"
	git init -q -b main "$src"
	echo "hello from the app" >"$src/README"
	git -C "$src" add README
	git -C "$src" -c user.name=t -c user.email=t@t commit -q -m one
	git clone -q --bare "$src" "$WORLD_DIR/repos/org/allowed.git"
	git clone -q --bare "$src" "$WORLD_DIR/repos/org/other.git"
	in_up /usr/bin/python3 "$top_srcdir/tests/integration/lib-tls/githubmock.py" api 10.200.1.2 8446 \
		"$WORLD_CERT" "$WORLD_KEY" "$mock" "$WORLD_DIR/app.pub" 1234 42 &
	in_up /usr/bin/python3 "$top_srcdir/tests/integration/lib-tls/githubmock.py" git 10.200.1.2 8447 \
		"$WORLD_CERT" "$WORLD_KEY" "$mock" "$WORLD_DIR/repos" &
	world_wait_tcp 10.200.1.2:8446 10.200.1.2:8447
	: >"$mock/api.log"
	: >"$mock/git.log"
	: >"$mock/issued"
}
