/*
 * conf/canary.c: a session's canaries (canary.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/build.h"
#include "conf/canary.h"
#include "conf/config.h"
#include "conf/secret.h"

/* The shape of a canary: the most common key in an agent's environment. */
#define CANARY_PREFIX "sk-ant-api03-"

size_t
cf_session_ncanaries(const struct cf_session *s)
{
	return s != NULL ? s->ncanaries : 0;
}

const char *
cf_session_canary_env(const struct cf_session *s, size_t i)
{
	return s != NULL && i < s->ncanaries ? s->canaries[i] : NULL;
}

long
cf_session_canary_value(const struct cf_session *s, size_t i, char *out, size_t size)
{
	char name[160];

	if (s == NULL || i >= s->ncanaries)
		return -EINVAL;
	/* A space: no secret is named so, so no placeholder is the same. */
	snprintf(name, sizeof(name), "canary %s", s->canaries[i]);
	return cf_placeholder_make(s->name, name, CANARY_PREFIX, "-", 1, out, size);
}

int
cfcan_attach(struct cf_session *s, const struct cf_sess_build *def, const struct cf_sess_build *own)
{
	const struct cf_sess_build *from[2] = { def, own };
	size_t f, i, k;

	for (f = 0; f < 2; f++) {
		if (from[f] == NULL)
			continue;
		for (i = 0; i < from[f]->ncanary_names; i++) {
			const char *name = from[f]->canary_names[i];
			char **nn;

			for (k = 0; k < s->ncanaries; k++)
				if (strcmp(s->canaries[k], name) == 0)
					break;
			if (k < s->ncanaries || s->ncanaries == CF_CANARY_MAX)
				continue;
			if ((nn = realloc(s->canaries, (s->ncanaries + 1) * sizeof(*nn))) == NULL)
				return -ENOMEM;
			s->canaries = nn;
			if ((nn[s->ncanaries] = strdup(name)) == NULL)
				return -ENOMEM;
			s->ncanaries++;
		}
	}
	return 0;
}

void
cfcan_check(struct cf_build *b, const struct cf_session *s, int line)
{
	size_t i, k, n = cf_session_nsecrets(s);

	for (i = 0; i < s->ncanaries; i++)
		for (k = 0; k < n; k++) {
			const struct cf_secret *sec = cf_session_secret(s, k);
			const char *also = cf_secret_also_env(sec);

			if (strcmp(s->canaries[i], cf_secret_placeholder_env(sec)) == 0 ||
			    (also != NULL && strcmp(s->canaries[i], also) == 0))
				cfb_err(b, line, "canaries: %s is where secret %s's placeholder goes "
				    "(placeholder_env); a canary needs a variable of its own",
				    s->canaries[i], cf_secret_name(sec));
		}
}

void
cfcan_session_clear(struct cf_session *s)
{
	size_t i;

	for (i = 0; i < s->ncanaries; i++)
		free(s->canaries[i]);
	free(s->canaries);
	s->canaries = NULL;
	s->ncanaries = 0;
}
