/*
 * tests/fuzz/replay.c: replays a fuzz target's corpus without libFuzzer, so
 * that "make check" runs every corpus file (and every crash reproducer kept
 * as a regression test) through the target with the normal compiler and,
 * in the sanitizer build, under ASan and UBSan.  c-ares does the same.
 *
 * With no arguments it replays CORPUS_DIR (set per target at build time);
 * otherwise each argument is a file or a directory of files.  Output is TAP.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int n;

static int
replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;

	if (f == NULL) {
		printf("not ok %d - %s: %s\n", ++n, path, strerror(errno));
		return 1;
	}
	for (;;) {
		size_t got;
		if (len == cap) {
			uint8_t *nb;
			cap = cap ? cap * 2 : 4096;
			nb = realloc(buf, cap);
			if (nb == NULL) {
				free(buf);
				fclose(f);
				printf("not ok %d - %s: out of memory\n", ++n, path);
				return 1;
			}
			buf = nb;
		}
		got = fread(buf + len, 1, cap - len, f);
		if (got == 0)
			break;
		len += got;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	printf("ok %d - %s\n", ++n, path);
	fflush(stdout);
	return 0;
}

static int
replay_path(const char *path)
{
	struct stat st;
	struct dirent **names;
	int i, count, rc = 0;

	if (stat(path, &st) != 0) {
		printf("not ok %d - %s: %s\n", ++n, path, strerror(errno));
		return 1;
	}
	if (!S_ISDIR(st.st_mode))
		return replay_file(path);
	count = scandir(path, &names, NULL, alphasort);
	if (count < 0) {
		printf("not ok %d - %s: %s\n", ++n, path, strerror(errno));
		return 1;
	}
	for (i = 0; i < count; i++) {
		char full[4096];
		if (names[i]->d_name[0] != '.') {
			snprintf(full, sizeof(full), "%s/%s", path, names[i]->d_name);
			rc |= replay_path(full);
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

int
main(int argc, char **argv)
{
	int i, rc = 0;

	if (argc < 2) {
		rc = replay_path(CORPUS_DIR);
	} else {
		for (i = 1; i < argc; i++)
			rc |= replay_path(argv[i]);
	}
	if (n == 0)
		printf("not ok 1 - empty corpus\n"), n = 1, rc = 1;
	printf("1..%d\n", n);
	return rc;
}
