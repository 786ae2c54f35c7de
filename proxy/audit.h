/*
 * proxy/audit.h: the audit log, one JSON object per line: one per decision
 * and one per closed connection (DESIGN.md "Audit log").
 */
#ifndef POSTERN_PROXY_AUDIT_H
#define POSTERN_PROXY_AUDIT_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

struct px_audit;

/*
 * Open the audit log at TARGET ("stderr" or an absolute path, appended to,
 * created 0640).  Returns NULL with errno set when the file cannot be
 * opened.
 */
struct px_audit *px_audit_open(const char *target);
/* Reopen the file (SIGUSR1, after rotation); keeps the old one on failure.
 * Returns 0 or -errno. */
int px_audit_reopen(struct px_audit *a);

/*
 * Give the audit log file to UID:GID, at start, before the proxy drops to
 * them: a rotator that renames the file and creates a new one with the old
 * one's owner (logrotate's "create") then leaves one the proxy can reopen.
 * Only a regular file is given away (never stderr, /dev/null, a pipe).
 * Warns when UID could not search the file's directory, where a reopen
 * would fail.  Returns 0 (nothing to do counts) or -errno.
 */
int px_audit_chown(struct px_audit *a, uid_t uid, gid_t gid);
/* Close and free; NULL is a no-op. */
void px_audit_free(struct px_audit *a);
/* Lines that could not be written (disk full, file unwritable). */
uint64_t px_audit_lost(const struct px_audit *a);

/* A JSON line being built; fields are appended in call order. */
struct px_json {
	char buf[4096];
	size_t len;
	int overflow;
};

void px_json_begin(struct px_json *j, const char *event);
/* A string field; untrusted bytes are escaped and cut at 256 bytes. */
void px_json_str(struct px_json *j, const char *key, const char *val);
void px_json_strn(struct px_json *j, const char *key, const char *val, size_t len);
void px_json_num(struct px_json *j, const char *key, int64_t val);
void px_json_double(struct px_json *j, const char *key, double val);
/* Finish the line and write it to A (a lost line is counted). */
void px_json_emit(struct px_json *j, struct px_audit *a);

#endif
