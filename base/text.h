/*
 * base/text.h: untrusted bytes made safe to show (STYLE.md: "log
 * untrusted bytes escaped and truncated"), and bytes as hex.  libc only:
 * the bridge links it.
 */
#ifndef POSTERN_BASE_TEXT_H
#define POSTERN_BASE_TEXT_H

#include <stddef.h>

/* bs_escape() flags. */
#define BS_ESC_TAB_SPACE 0x1 /* a tab becomes a space instead of \x09 */

/*
 * Copy SRC (LEN bytes, untrusted) into BUF of SIZE bytes (SIZE > 0),
 * NUL-terminated: printable ASCII as is, every other byte (and '\') as
 * \xNN; stops early rather than overflow or split an escape, so the
 * result may be truncated.  Returns the length written.
 */
size_t bs_escape(const char *src, size_t len, char *buf, size_t size, unsigned flags);

/* Write the LEN bytes at SRC as 2 * LEN lowercase hex digits and a NUL
 * into OUT, which must hold 2 * LEN + 1 bytes. */
void bs_hex(const void *src, size_t len, char *out);

#endif
