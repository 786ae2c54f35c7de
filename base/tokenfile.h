/*
 * base/tokenfile.h: the reading of a token file, shared by the proxy's
 * [session] token_file and the bridge's --token-file.  libc only.
 */
#ifndef POSTERN_BASE_TOKENFILE_H
#define POSTERN_BASE_TOKENFILE_H

#include <stddef.h>

/*
 * Read the first line of the token file PATH into TOK (SIZE bytes, not
 * NUL-terminated): the line end and trailing blanks (space, tab, CR) are
 * cut, and *LEN is its length.  The file is opened without blocking and
 * must be a regular file (a symlink to one is followed); at most SIZE
 * bytes are read.  *LOOSE is set when its group or others may read it.
 * The line's content is not checked: see bs_token_bad().
 * Returns 0; or a negative errno with WHY (WSIZE bytes; never the
 * token): the errno of open, fstat or read ("cannot read: ..."),
 * -EINVAL (not a regular file), or -EFBIG when SIZE bytes hold no line
 * end ("the first line is longer than SIZE-1 bytes"), with *LEN the
 * length of the part held, cut the same way.
 * TOK may hold token bytes whatever is returned: the caller wipes it
 * (explicit_bzero) once used.
 */
int bs_token_file_read(const char *path, char *tok, size_t size, size_t *len, int *loose,
    char *why, size_t wsize);

/*
 * The offset of the first of the LEN bytes at T that is not printable
 * ASCII, is a blank, or is in the NUL-terminated set ALSO (may be
 * NULL); LEN when there is none.
 */
size_t bs_token_bad(const char *t, size_t len, const char *also);

#endif
