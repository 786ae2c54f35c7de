/*
 * proxy/policy/rtsess.h: the sessions made at run time (the admin socket's
 * PUT /sessions/NAME), each its name and the lines of its [session NAME]
 * section as they were sent.  Every snapshot is built from the config file
 * and these (cf_config_load_extra()), so a reload of the file keeps them.
 * With [proxy] state_dir each is kept in STATE_DIR/sessions/NAME.ini and
 * read again at start.  The set is the engine's, touched on the first
 * worker's loop only (reload.c), like the snapshot.
 */
#ifndef POSTERN_PROXY_RTSESS_H
#define POSTERN_PROXY_RTSESS_H

#include <stddef.h>
#include <sys/types.h>

struct cf_extra;
struct px_rtsess;

/* The largest body of one runtime session (the admin socket's limit for
 * PUT /sessions/NAME, and for a kept file). */
#define PX_RTSESS_MAX_TEXT (64 * 1024)

/* An empty set; NULL when out of memory.  px_rtsess_free(NULL) is a no-op. */
struct px_rtsess *px_rtsess_new(void);
void px_rtsess_free(struct px_rtsess *rs);

/* The sessions in the order they were made, as cf_config_load_extra()
 * takes them; *N how many.  Valid until the set changes. */
const struct cf_extra *px_rtsess_list(const struct px_rtsess *rs, size_t *n);

/* The index of session NAME, or -1. */
int px_rtsess_find(const struct px_rtsess *rs, const char *name);

/* Put NAME with LEN bytes of TEXT (both copied) at index AT (at most the
 * count: the end).  0, or -ENOMEM with nothing changed. */
int px_rtsess_insert(struct px_rtsess *rs, size_t at, const char *name, const char *text,
    size_t len);

/* Take session I out of the set. */
void px_rtsess_remove(struct px_rtsess *rs, size_t i);

/* Nonzero when NAME may name a kept file: letters, digits, '-', '_', '.',
 * 1-64 of them, not starting with '.'. */
int px_rtsess_name_ok(const char *name);

/*
 * Keep session NAME's LEN bytes of TEXT in STATE_DIR/sessions/NAME.ini
 * (the directory made 0700), written to a new 0600 file and renamed over
 * the old, so that the file is whole or absent.  0, or a negative errno
 * with one sentence in WHY.
 */
int px_rtsess_save(const char *state_dir, const char *name, const char *text, size_t len,
    char *why, size_t whysize);

/* Remove NAME's kept file; one that is already gone is no error.  0, or a
 * negative errno with WHY. */
int px_rtsess_forget(const char *state_dir, const char *name, char *why, size_t whysize);

/*
 * Read every STATE_DIR/sessions/NAME.ini into RS, in the order of their
 * names.  A directory or file that another uid than root, ours or USER
 * (the [proxy] user the files were written as; -1 for none) owns,
 * that others may write, that is not a regular file or is larger than
 * PX_RTSESS_MAX_TEXT is skipped and told by SKIPPED(ARG, NAME, WHY).
 * No directory is no session.  Returns how many were read, or -ENOMEM.
 */
int px_rtsess_load(struct px_rtsess *rs, const char *state_dir, uid_t user,
    void (*skipped)(void *arg, const char *name, const char *why), void *arg);

#endif
