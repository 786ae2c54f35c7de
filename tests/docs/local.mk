# tests/docs/: the documents name only files and functions that exist.
TESTS += tests/docs/names.sh tests/docs/man.sh
EXTRA_DIST += tests/docs/names.py tests/docs/names.sh tests/docs/man.sh \
	SECURITY.md docs/threat-model.md docs/HACKING.md
