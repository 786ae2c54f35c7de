/*
 * proxy/check.h: --check, a config judged and summarised without serving
 * it (postern-proxy --check, postern-sidecar run --check).
 */
#ifndef POSTERN_PROXY_CHECK_H
#define POSTERN_PROXY_CHECK_H

struct cf_overrides;

/*
 * Load PATH (NULL: the built-in default) with the overrides OV, as the
 * caller would serve it, and its grants_file if it names one.  On success,
 * print the summary (proxy settings, each session's listeners, rules and
 * secrets, pins, warnings) on stdout and return 0; else print every
 * FILE:LINE error and one "PROG: PATH: N errors, config refused" line on
 * stderr and return 2.  LISTEN_NOTE, when not NULL, is printed in place
 * of each session's listeners (those the caller will make itself).
 */
int px_check(const char *path, const struct cf_overrides *ov, const char *prog,
    const char *listen_note);

#endif
