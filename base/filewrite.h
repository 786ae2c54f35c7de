/*
 * base/filewrite.h: a file replaced whole or not at all, for what the
 * proxy keeps in its state_dir.  libc only.
 */
#ifndef POSTERN_BASE_FILEWRITE_H
#define POSTERN_BASE_FILEWRITE_H

#include <stddef.h>

/*
 * Replace the file PATH with the LEN bytes at BUF: they go to PATH.tmp,
 * made new with mode 0600 (a stale one is removed first; never through a
 * link), which is synced and renamed over PATH; then PATH's directory is
 * synced, so that the rename outlives a crash.  Returns 0, or a negative
 * errno with PATH untouched and PATH.tmp removed.
 */
int bs_file_replace(const char *path, const void *buf, size_t len);

#endif
