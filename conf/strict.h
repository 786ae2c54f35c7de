/*
 * conf/strict.h: StrictModes (sshd's), the check that a config file and
 * the directories above it can be changed by nobody but the uids trusted
 * (root and the proxy's own user); see cf_config_load() in config.h.
 */
#ifndef POSTERN_CONF_STRICT_H
#define POSTERN_CONF_STRICT_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

struct cf_build;

/* The uids that may own and write the config and its directories. */
struct cfs_trust {
	uid_t uid[4];
	size_t n;
};

/*
 * Check PATH, already open with status FST, and every directory it
 * depends on against the uids of T; each reason to refuse it is reported
 * with cfb_err() on B (line 0).  The file is refused when B->nerrors grew.
 */
void cfs_check_modes(struct cf_build *b, const char *path, const struct stat *fst,
    const struct cfs_trust *t);

#endif
