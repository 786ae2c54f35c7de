/*
 * proxy/core/audit.h: the audit log, one JSON object per line: one per decision
 * and one per closed connection (postern-proxy(8), AUDIT LOG).
 */
#ifndef POSTERN_PROXY_AUDIT_H
#define POSTERN_PROXY_AUDIT_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct px_audit;
typedef struct evp_pkey_st EVP_PKEY;

/* audit_format = */
#define PX_AUDIT_JSON 0
#define PX_AUDIT_OCSF 1

/*
 * Open the audit log at TARGET ("stderr" or an absolute path, appended to,
 * created 0640).  Returns NULL with errno set when the file cannot be
 * opened.
 */
struct px_audit *px_audit_open(const char *target);
/*
 * Start A's hash chain (proxy/proto/auditline.h) and write its audit_open
 * line: the chain goes on from the file's last line when it is a
 * checkpoint KEY signed (a restart), else a new one starts.  KEY (NULL:
 * no checkpoints; a reference is taken) signs the checkpoints; FORMAT is
 * PX_AUDIT_JSON or PX_AUDIT_OCSF, for the event lines.  0 or -errno.
 */
int px_audit_start(struct px_audit *a, EVP_PKEY *key, int format);
/* A checkpoint every MS milliseconds on BASE (while lines came since the
 * last), until px_audit_free().  0 or -ENOMEM. */
int px_audit_checkpoints(struct px_audit *a, struct event_base *base, unsigned ms);
/* A checkpoint now, when there is a key and a line since the last. */
void px_audit_checkpoint(struct px_audit *a);
/*
 * The Ed25519 private key in PEM at PATH, made (mode 0600) when it does
 * not exist and CREATE is set.  A key readable by anyone but its owner
 * is refused.  NULL with ERR saying why.
 */
EVP_PKEY *px_audit_key_load(const char *path, int create, char *err, size_t errsz);
/* Reopen the file (SIGUSR1, after rotation); keeps the old one on failure.
 * The old file gets a checkpoint; the new one's audit_open line continues
 * the chain.  Returns 0 or -errno. */
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
/* Write a checkpoint, close and free; NULL is a no-op. */
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
/*
 * A field named KEY, a string literal: its ,"KEY": is put together by the
 * compiler (a name with a quote or backslash in it would need escaping;
 * none has one).  A string field's untrusted bytes are escaped and cut at
 * 256 bytes; a NULL one is null.
 */
#define PX_JSON_KEY(key) ",\"" key "\":", sizeof(",\"" key "\":") - 1
#define px_json_str(j, key, val) px_json_kstr((j), PX_JSON_KEY(key), (val))
#define px_json_strn(j, key, val, len) px_json_kstrn((j), PX_JSON_KEY(key), (val), (len))
#define px_json_num(j, key, val) px_json_knum((j), PX_JSON_KEY(key), (val))
#define px_json_double(j, key, val) px_json_kdouble((j), PX_JSON_KEY(key), (val))
void px_json_kstr(struct px_json *j, const char *key, size_t klen, const char *val);
void px_json_kstrn(struct px_json *j, const char *key, size_t klen, const char *val, size_t len);
void px_json_knum(struct px_json *j, const char *key, size_t klen, int64_t val);
void px_json_kdouble(struct px_json *j, const char *key, size_t klen, double val);
/* Finish the line and write it to A (a lost line is counted), now, after
 * the calling thread's lines that wait (px_json_emit_later()), in the
 * same write(2). */
void px_json_emit(struct px_json *j, struct px_audit *a);
/*
 * Finish the line and have it written to A by the end of the loop pass
 * of BASE, the calling thread's loop, in one write(2) with the other
 * lines of the pass; or with the next px_json_emit() of the thread,
 * ahead of its line.  For a line nothing waits on: a close line (the
 * connection is gone), a refusal's (nothing went through), a request's
 * after its answer.  A line that must be in the file before what it
 * allows happens (an allow's decision) is px_json_emit()'s.  Lines wait
 * only on a loop's thread: each such thread calls px_audit_batch_end()
 * before its loop is freed, and any line px_audit_free() finds waiting on
 * its own thread it writes first.
 */
void px_json_emit_later(struct px_json *j, struct px_audit *a, struct event_base *base);
/* Write the calling thread's waiting lines and forget its batch (its
 * event is freed: call it while its loop still exists). */
void px_audit_batch_end(void);

#endif
