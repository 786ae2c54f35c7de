/*
 * conf/grantfile.c: the grants_file (see grantfile.h).  inih does the
 * lines, with the config's own line reader (reader.c) counting them; this
 * file judges sections, keys and items.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "conf/build.h"
#include "conf/grantfile.h"
#include "conf/reader.h"

/* The grants file is an admin's few lines, not a config. */
#define GRANTS_FILE_MAX (1024 * 1024)

struct gparse {
	struct cf_build b;          /* the reader's state, and the errors */
	const struct cf_config *c;
	struct cf_grant_entry *v;
	size_t n, cap;
	int oom;
	char bad_section[128];
};

static void
add(struct gparse *g, const char *session, const struct cf_host *h, uint16_t port, int deny)
{
	struct cf_grant_entry *e;

	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 16;
		struct cf_grant_entry *nv = realloc(g->v, cap * sizeof(*nv));

		if (nv == NULL) {
			g->oom = 1;
			return;
		}
		g->v = nv;
		g->cap = cap;
	}
	e = &g->v[g->n++];
	memset(e, 0, sizeof(*e));
	snprintf(e->session, sizeof(e->session), "%s", session);
	cf_host_format(h, e->host, sizeof(e->host));
	e->port = port;
	e->deny = deny;
	e->line = g->b.line;
}

/* inih's handler: one key of one section. */
static int
handler(void *arg, const char *section, const char *name, const char *value)
{
	struct gparse *g = arg;
	struct cf_build *b = &g->b;
	const char *sname = NULL, *kind = cfb_section_kind(section, &sname), *p = value;
	char shown[128];
	int deny;

	if (kind == NULL || strcmp(kind, "session") != 0 || sname == NULL) {
		cfb_show(shown, sizeof(shown), section);
		cfb_err(b, b->line, "a grants file has [session NAME] sections only, not [%s]", shown);
		return 1;
	}
	if (cf_config_find_session(g->c, sname) == NULL) {
		/* Said once per section, at its first key (inih names no
		 * header's line). */
		if (strcmp(g->bad_section, section) != 0) {
			cfb_show(shown, sizeof(shown), sname);
			cfb_err(b, b->line, "[session %s]: no such session in %s", shown,
			    cf_config_path(g->c));
			snprintf(g->bad_section, sizeof(g->bad_section), "%s", section);
		}
		return 1;
	}
	if (strcmp(name, "allow_hosts") != 0 && strcmp(name, "deny_hosts") != 0) {
		cfb_show(shown, sizeof(shown), name);
		cfb_err(b, b->line, "a grants file has allow_hosts and deny_hosts only, not %s", shown);
		return 1;
	}
	deny = name[0] == 'd';
	/* HOST:PORT, ... with blanks around each item. */
	for (;;) {
		const char *why = NULL, *end;
		size_t len;
		struct cf_host h;
		uint16_t port = 0;

		while (cfb_blank(*p))
			p++;
		end = strchr(p, ',');
		len = end != NULL ? (size_t)(end - p) : strlen(p);
		while (len > 0 && cfb_blank(p[len - 1]))
			len--;
		if (len == 0 || cf_authority_parse(p, len, 0, &h, &port, &why) != 0 || port == 0) {
			char item[CF_HOST_TEXT_MAX + 16];

			snprintf(item, sizeof(item), "%.*s", (int)(len < CF_HOST_TEXT_MAX ? len : CF_HOST_TEXT_MAX), p);
			cfb_show(shown, sizeof(shown), item);
			cfb_err(b, b->line, "a grant is HOST:PORT (%s%s%s)", shown, why ? ": " : "",
			    why ? why : port == 0 && len > 0 ? ": no port" : "");
		} else {
			add(g, sname, &h, port, deny);
		}
		if (end == NULL)
			break;
		p = end + 1;
	}
	return 1;
}

int
cf_grants_parse(const char *file, const char *text, size_t len, const struct cf_config *c,
    struct cf_diag *diag, struct cf_grant_entry **out, size_t *n)
{
	struct gparse g;
	int rc;

	*out = NULL;
	*n = 0;
	memset(&g, 0, sizeof(g));
	g.b.file = file;
	g.b.diag = diag;
	g.b.text = text;
	g.b.len = len;
	g.c = c;
	rc = ini_parse_stream(cfr_read_line, &g.b, handler, &g);
	if (g.oom) {
		rc = -ENOMEM;
		goto out;
	}
	if (rc != 0 && g.b.nerrors == 0)
		cfb_err(&g.b, rc > 0 ? rc : 0, "cannot be parsed");
	if (g.b.nerrors > 0) {
		rc = -EINVAL;
		goto out;
	}
	*out = g.v;
	*n = g.n;
	g.v = NULL;
	rc = 0;
out:
	free(g.v);
	return rc;
}

int
cf_grants_load(const char *path, const struct cf_config *c, struct cf_diag *diag,
    struct cf_grant_entry **out, size_t *n)
{
	struct cf_build b;
	struct stat st;
	char *text = NULL;
	size_t len = 0;
	int fd, rc;

	*out = NULL;
	*n = 0;
	memset(&b, 0, sizeof(b));
	b.file = path;
	b.diag = diag;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		rc = -errno;
		cfb_err(&b, 0, "cannot read the grants file: %s", strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > GRANTS_FILE_MAX) {
		cfb_err(&b, 0, "the grants file is not a regular file of at most 1 MiB");
		rc = -EINVAL;
		goto out;
	}
	text = malloc((size_t)st.st_size + 1);
	if (text == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	while (len < (size_t)st.st_size) {
		ssize_t r = read(fd, text + len, (size_t)st.st_size - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	text[len] = '\0';
	rc = cf_grants_parse(path, text, len, c, diag, out, n);
out:
	free(text);
	close(fd);
	return rc;
}
