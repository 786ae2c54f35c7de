/*
 * conf/keys.h: the keys a config file may set.  One table per section
 * (keys.c) says for each key its name, how its value is parsed and
 * bounded, whether it may be repeated, where it may appear and which field
 * it sets; that table alone drives the parse, the "given twice", the
 * "belongs in [...]" and the "did you mean" of a misspelt key.
 */
#ifndef POSTERN_CONF_KEYS_H
#define POSTERN_CONF_KEYS_H

#include <stddef.h>

#include "conf/rule.h"

struct cf_build;
struct cf_sess_build;
struct cf_listen;
struct cf_proxy_settings;

/* Set every [proxy] setting that has a value by default to it (P is the
 * caller's; the others are left as they are). */
void cfk_proxy_defaults(struct cf_proxy_settings *p);

/* Call FN for each [proxy] key of the table that has a show function,
 * with its value in P as a file would write it (cf_config_show_proxy()). */
void cfk_proxy_show(const struct cf_proxy_settings *p,
    void (*fn)(const char *key, const char *value, void *arg), void *arg);

/*
 * inih's handler: apply KEY = VALUE of SECTION (on line B->line) to the
 * parse B (USER), or report with cfb_err() why it cannot be applied.
 * Always returns 1 (go on), so that every error of a file is reported.
 */
int cfk_handler(void *user, const char *section, const char *key, const char *value);

/*
 * Parse the listener VALUE (cf_listen_parse()) and append it to *V (*N
 * of them), noting B->file and B->line.  Returns 0, -EINVAL after
 * reporting why, or -ENOMEM.
 */
int cfk_add_listen(struct cf_build *b, struct cf_listen **v, size_t *n, const char *value);

/*
 * Parse the comma-separated patterns of VALUE into rules of TYPE appended
 * to session S, reporting each bad item (and each "taken as" warning)
 * under FILE:LINE.  Never fails: an item that cannot be parsed is
 * reported and skipped.
 */
void cfk_add_rules(struct cf_build *b, struct cf_sess_build *s, enum cf_rule_type type,
    const char *value, const char *file, int line);

#endif
