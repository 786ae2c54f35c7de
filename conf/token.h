/*
 * conf/token.h: the tokens of sessions served on an auth=token listener
 * (postern.ini(5) token_file).  A token file's first line is the token;
 * the snapshot keeps only its SHA-256, and a token presented by a client
 * is hashed and compared in constant time.
 */
#ifndef POSTERN_CONF_TOKEN_H
#define POSTERN_CONF_TOKEN_H

#include <stddef.h>

/* A token is 32 to 1024 bytes of printable ASCII without blanks or ':'. */
#define CF_TOKEN_MIN 32
#define CF_TOKEN_MAX 1024

/* Nonzero when the LEN bytes at T may be a token. */
int cf_token_ok(const char *t, size_t len);

/*
 * Read the token file PATH: its first line, trailing blanks and line end
 * stripped, must be a token (cf_token_ok()).  Stores its SHA-256 in MD and
 * sets *LOOSE when the file may be read by its group or others.  Returns
 * 0, or -1 with WHY (SIZE bytes) saying what is wrong; the token itself
 * is never put in WHY, and is wiped from memory before this returns.
 */
int cf_token_read(const char *path, unsigned char md[32], int *loose, char *why, size_t size);

/* The SHA-256 of the LEN bytes at T into MD. */
void cf_token_digest(const char *t, size_t len, unsigned char md[32]);

#endif
