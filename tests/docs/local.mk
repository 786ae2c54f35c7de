# tests/docs/: the documents name only files and functions that exist.
TESTS += tests/docs/names.sh
EXTRA_DIST += tests/docs/names.py tests/docs/names.sh \
	SECURITY.md docs/threat-model.md docs/HACKING.md
