/*
 * proxy/core/conncount.c: connection counts per session and per (session, peer
 * uid).  A plain list: it holds one entry per session and per uid that
 * has a connection open, which is a handful in any real deployment, and an
 * entry goes as soon as its last connection closes.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/core/conncount.h"

struct px_conncount {
	LIST_ENTRY(px_conncount) entry;
	unsigned n;
	long uid;           /* -1: the whole session */
	char session[72];
};

static struct px_conncount *
find(struct px_conncount_list *list, const char *session, long uid)
{
	struct px_conncount *sh;

	LIST_FOREACH(sh, list, entry)
		if (sh->uid == uid && strcmp(sh->session, session) == 0)
			return sh;
	return NULL;
}

static struct px_conncount *
find_or_add(struct px_conncount_list *list, const char *session, long uid)
{
	struct px_conncount *sh = find(list, session, uid);
	size_t n;

	if (sh != NULL)
		return sh;
	sh = calloc(1, sizeof(*sh));
	if (sh == NULL)
		return NULL;
	sh->uid = uid;
	/* As snprintf("%s") would, cut to fit, without the format. */
	n = strnlen(session, sizeof(sh->session) - 1);
	memcpy(sh->session, session, n);
	LIST_INSERT_HEAD(list, sh, entry);
	return sh;
}

int
px_conncount_take(struct px_conncount_list *list, const char *session, long uid, unsigned max,
    unsigned max_uid, struct px_conncount **sess, struct px_conncount **user, unsigned *held)
{
	struct px_conncount *s, *u = NULL;

	*sess = *user = NULL;
	s = find(list, session, -1);
	if (s != NULL && s->n >= max) {
		*held = s->n;
		return -EDQUOT;
	}
	if (uid >= 0) {
		u = find(list, session, uid);
		if (u != NULL && u->n >= max_uid) {
			*held = u->n;
			return -EUSERS;
		}
	}
	if (s == NULL && (s = find_or_add(list, session, -1)) == NULL)
		return -ENOMEM;
	if (uid >= 0 && u == NULL && (u = find_or_add(list, session, uid)) == NULL) {
		if (s->n == 0) {
			LIST_REMOVE(s, entry);
			free(s);
		}
		return -ENOMEM;
	}
	s->n++;
	if (u != NULL)
		u->n++;
	*sess = s;
	*user = u;
	return 0;
}

void
px_conncount_put(struct px_conncount *sh)
{
	if (sh == NULL)
		return;
	if (--sh->n == 0) {
		LIST_REMOVE(sh, entry);
		free(sh);
	}
}
