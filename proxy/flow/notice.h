/*
 * proxy/flow/notice.h: what a refusal says to a person at a terminal
 * (postern-sidecar run, or any proxy started with human lines): the
 * request and the admin's way to allow it in words, and one log line per
 * host:port, reason and fix (the repeats are counted for the summary,
 * proxy/policy/summary.h).  Reads a connection's current request; changes nothing
 * but the tallies.
 */
#ifndef POSTERN_PROXY_NOTICE_H
#define POSTERN_PROXY_NOTICE_H

#include <stddef.h>

#include "conf/decide.h"

struct cf_rule;
struct px_conn;

/* The refusals file holds at most this many lines, and bytes. */
#define PX_NOTICE_FILE_LINES 64
#define PX_NOTICE_FILE_BYTES 16384

/*
 * From now on, also append each refusal line told to a person to FD (a
 * regular file, open for reading and appending; postern-sidecar run's
 * refusals file, which the refused command reads): escaped as untrusted
 * text, each distinct line once, at most PX_NOTICE_FILE_LINES lines and
 * PX_NOTICE_FILE_BYTES bytes, the last of them saying that more were left
 * out.  What FD already holds (an engine started after a crash) counts.
 * FD stays the caller's.  -1: no file.
 */
void px_notice_file(int fd);

/* A refusal told otherwise than by px_notice_human() (a tunnel whose SNI
 * does not match): the line, as log_notice() and to the refusals file. */
void px_notice_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * The words of a refusal of C's current request: SUGG (SUGGSZ bytes), an
 * admin's way to allow it (cf_suggest(), "" when there is none), WHAT,
 * the request ("CONNECT host:port", "GET host:port path /p"), and H, its
 * host as text.
 */
void px_notice_words(const struct px_conn *c, enum cf_reason reason, const struct cf_rule *rule,
    char *sugg, size_t suggsz, char *what, size_t whatsz, char *h, size_t hsz);

/*
 * The human line of a refusal with those words ("refused ...", or, WOULD
 * nonzero, "report mode, allowed; would refuse ..."), with the pattern to
 * pass to --allow, told once per host:port, reason and pattern (a client
 * that retries would fill the terminal); the caller checks that the proxy
 * writes for a person.
 */
void px_notice_human(const struct px_conn *c, int would, enum cf_reason reason, const char *detail,
    const char *sugg, const char *what, const char *h);

/* Only the human line of a refusal, for one answered otherwise (an HTTP/2
 * stream inside a terminated tunnel).  Nothing when the proxy does not
 * write for a person. */
void px_notice_refusal(const struct px_conn *c, enum cf_reason reason, const struct cf_rule *rule,
    const char *detail);

/* In report mode, the human line of a request allowed that the allowlist
 * would have refused (C->req.dec.would): "would refuse", with its --allow
 * hint.  Nothing otherwise. */
void px_notice_would(const struct px_conn *c);

#endif
