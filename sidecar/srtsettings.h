/*
 * sidecar/srtsettings.h: the network policy of a sandbox-runtime (srt)
 * settings file (~/.srt-settings.json: {"network": {...}, ...}) or of a
 * Claude Code settings.json ({"sandbox": {"network": {...}}, "permissions":
 * {...}}), as postern allow_hosts and deny_hosts items
 * (postern-sidecar run --settings).  The file is untrusted bytes: it is
 * parsed by jansson, and every item is checked to be one srt domain
 * pattern and one postern host pattern before it is handed out.
 */
#ifndef POSTERN_SIDECAR_SRTSETTINGS_H
#define POSTERN_SIDECAR_SRTSETTINGS_H

#include <stddef.h>

/* A settings file bigger than this is refused. */
#define SC_SRT_MAX_BYTES (1u << 20)
/* Items (domains, permission rules) read at most. */
#define SC_SRT_MAX_ITEMS 4096u

struct sc_srt {
	char **allow;       /* allow_hosts items: example.com, *.example.com */
	size_t nallow;
	char **deny;        /* deny_hosts items, the same forms */
	size_t ndeny;
	char **unmapped;    /* the keys read but not applied, escaped */
	size_t nunmapped;
	char **warnings;    /* "NAME: KEY: why", one per key not applied */
	size_t nwarnings;
	char **errors;      /* "NAME:LINE:COLUMN: why" or "NAME: KEY: why" */
	size_t nerrors;
	int nomem;          /* memory ran out: nothing here is to be used */
};

/*
 * Read the settings in LEN bytes of TEXT (not NUL-terminated), reported
 * under NAME, into OUT (its old contents are not freed).  srt's
 * "example.com" becomes the item example.com, "*.example.com" the item
 * *.example.com (any name below it, at any depth, not example.com
 * itself: srt's match and postern's); network.allowedDomains and, in
 * Claude Code's shape, sandbox.network.allowedDomains and permissions.allow
 * "WebFetch(domain:D)" are allow items, the deniedDomains and
 * permissions.deny "WebFetch(domain:D)" deny items.  A key postern cannot
 * apply where leaving it out only narrows the policy is a warning; a key
 * of "network" it does not know, a domain that is no srt pattern or no
 * postern pattern, and a value of the wrong type are errors.  Returns 0,
 * or -1 when OUT->errors is not empty or OUT->nomem is set (the items
 * are then not to be used).  OUT is the caller's, released with sc_srt_free().
 */
int sc_srt_parse(const char *name, const char *text, size_t len, struct sc_srt *out);

/* The same from the file PATH (a regular file of at most SC_SRT_MAX_BYTES);
 * a file that cannot be read is one error "PATH: why". */
int sc_srt_load(const char *path, struct sc_srt *out);

/*
 * The postern.ini the items of S stand for: comments (NAME, what was not
 * applied) and one [defaults] section, every line of it a rule S holds.
 * NULL when out of memory; the caller frees it.
 */
char *sc_srt_ini(const struct sc_srt *s, const char *name);

/* Release what S holds (S itself is the caller's); NULL is a no-op. */
void sc_srt_free(struct sc_srt *s);

#endif
