/*
 * conf/reader.c: the line reader that feeds inih, and the check of the
 * section headers (see reader.h).
 *
 * inih is fed through our own line reader, which gives us exact line
 * numbers for every key (the system inih is built without
 * INI_HANDLER_LINENO), refuses lines longer than inih's buffer (inih would
 * otherwise parse the rest of such a line as a line of its own: the tail of
 * a long allow_hosts list would become a new key), and lets us report every
 * malformed line, not only the first.
 */
#include "conf/reader.h"

#include <stdlib.h>
#include <string.h>

#include "conf/build.h"

/*
 * inih's reader: hand it one physical line at a time, counting lines and
 * checking each line's shape so that every malformed line is reported with
 * its number.
 */
char *
cfr_read_line(char *str, int num, void *stream)
{
	struct cf_build *b = stream;
	const char *start, *nl, *p, *e;
	size_t linelen, copy;

	if (b->pos >= b->len)
		return NULL;
	start = b->text + b->pos;
	nl = memchr(start, '\n', b->len - b->pos);
	linelen = nl ? (size_t)(nl - start) + 1 : b->len - b->pos;
	b->pos += linelen;
	b->line++;

	/* inih's buffer holds num - 1 bytes; a longer line must not be split. */
	if (linelen + 1 > (size_t)num) {
		cfb_err(b, b->line, "line longer than %d characters (split a long list over several allow_hosts lines)",
		    num - 2);
		str[0] = '\n';
		str[1] = '\0';
		return str;
	}
	for (p = start; p < start + linelen; p++) {
		if (*p == '\0') {
			cfb_err(b, b->line, "NUL byte in line");
			str[0] = '\n';
			str[1] = '\0';
			return str;
		}
	}
	/*
	 * Leading blanks are dropped before inih sees the line: inih would
	 * take an indented line as the continuation of the previous value,
	 * so an indented "allow_hosts = x" would silently become part of
	 * another key's value.  Here it is simply a line of its own.
	 */
	p = start;
	while (p < start + linelen && cfb_blank(*p) && *p != '\r')
		p++;
	copy = linelen - (size_t)(p - start);
	memcpy(str, p, copy);
	str[copy] = '\0';

	/* Shape check, mirroring inih: blank, comment, [section] or
	 * key = value; anything else is reported with its line. */
	p = start;
	e = start + linelen;
	if (b->line == 1 && linelen >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
		p += 3;
	while (p < e && cfb_blank(*p))
		p++;
	if (p == e || *p == '\n' || *p == ';' || *p == '#')
		return str;
	if (*p == '[') {
		const char *close = memchr(p, ']', (size_t)(e - p));
		size_t n;
		if (close == NULL) {
			cfb_err(b, b->line, "section header without ] (%.*s)", (int)(e - p - (nl ? 1 : 0)), p);
			b->cursect_ok = 0;
			return str;
		}
		n = (size_t)(close - p - 1);
		if (n >= sizeof(b->cursect))
			n = sizeof(b->cursect) - 1;
		memcpy(b->cursect, p + 1, n);
		b->cursect[n] = '\0';
		b->cursect_ok = 1;
		return str;
	}
	{
		const char *eq = p;
		while (eq < e && *eq != '=' && *eq != ':')
			eq++;
		if (eq == e) {
			char buf[80];
			char tmp[200];
			size_t n = (size_t)(e - p);
			if (n >= sizeof(tmp))
				n = sizeof(tmp) - 1;
			memcpy(tmp, p, n);
			tmp[n] = '\0';
			if (n > 0 && tmp[n - 1] == '\n')
				tmp[--n] = '\0';
			cfb_show(buf, sizeof(buf), tmp);
			cfb_err(b, b->line, "not a \"key = value\" line (%s)", buf);
		}
	}
	return str;
}

/* Sections are checked as the reader meets their headers, so that an
 * unknown or duplicate section is reported once, with its line. */
void
cfr_sections(struct cf_build *b)
{
	const char *p = b->text, *e = b->text + b->len;
	int line = 0;

	while (p < e) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		const char *le = nl ? nl : e, *q = p;
		line++;
		if (line == 1 && le - q >= 3 && memcmp(q, "\xEF\xBB\xBF", 3) == 0)
			q += 3;
		while (q < le && cfb_blank(*q))
			q++;
		if (q < le && *q == '[' && (le - q) < 200) {
			const char *close = memchr(q, ']', (size_t)(le - q));
			if (close != NULL) {
				char sect[200], shown[120];
				const char *sname, *kind;
				size_t n = (size_t)(close - q - 1);
				memcpy(sect, q + 1, n);
				sect[n] = '\0';
				cfb_show(shown, sizeof(shown), sect);
				kind = cfb_section_kind(sect, &sname);
				if (kind == NULL) {
					static const char *const sections[] = { "proxy", "defaults", "hosts", NULL };
					const char *near = cfb_nearest(sect, sections);
					cfb_err(b, line, "unknown section [%s] (known: [proxy], [defaults], [session NAME], [secret NAME], [hosts])%s%s%s",
					    shown, near ? "; did you mean [" : "", near ? near : "", near ? "]?" : "");
				} else if (strcmp(kind, "secret") == 0) {
					struct cf_secret_build *nv;
					/* The same names as sessions' (but "default" is
					 * no special name here). */
					if (strcmp(sname, "default") != 0 && !cfb_session_name_ok(sname)) {
						cfb_err(b, line, "bad secret name: letters, digits, '-', '_', '.', at most 64 (%s)", shown);
					} else if (cfb_find_secret(b, sname) != NULL) {
						cfb_show(shown, sizeof(shown), sname);
						cfb_err(b, line, "duplicate secret %s (first on line %d)", shown,
						    cfb_find_secret(b, sname)->line);
					} else if ((nv = realloc(b->secrets, (b->nsecrets + 1) * sizeof(*nv))) != NULL) {
						b->secrets = nv;
						memset(&nv[b->nsecrets], 0, sizeof(nv[0]));
						nv[b->nsecrets].name = strdup(sname);
						nv[b->nsecrets].line = line;
						if (nv[b->nsecrets].name != NULL)
							b->nsecrets++;
					}
				} else if (strcmp(kind, "hosts") == 0) {
					if (b->hosts_line)
						cfb_err(b, line, "[hosts] given twice (first on line %d)", b->hosts_line);
					else
						b->hosts_line = line;
				} else if (strcmp(kind, "proxy") == 0) {
					if (b->proxy_line)
						cfb_err(b, line, "[proxy] given twice (first on line %d)", b->proxy_line);
					else
						b->proxy_line = line;
				} else if (strcmp(kind, "defaults") == 0) {
					if (b->defaults_line)
						cfb_err(b, line, "[defaults] given twice (first on line %d)", b->defaults_line);
					else
						b->defaults_line = line;
				} else if (!cfb_session_name_ok(sname)) {
					cfb_err(b, line, "bad session name: letters, digits, '-', '_', '.', at most 64, not \"default\" (%s)", shown);
				} else if (cfb_find_sess(b, sname) != NULL) {
					int at = line;
					cfb_show(shown, sizeof(shown), sname);
					/* Runtime sessions come after the file: the
					 * file's section is the one to remove. */
					if (cfb_locate(b, &at) > 0)
						cfb_err(b, cfb_find_sess(b, sname)->line,
						    "session %s exists at run time (remove it first)", shown);
					else
						cfb_err(b, line, "duplicate session %s (first on line %d)", shown,
						    cfb_find_sess(b, sname)->line);
				} else {
					struct cf_sess_build *nv = realloc(b->sess, (b->nsess + 1) * sizeof(*nv));
					char *name = NULL;

					if (nv != NULL) {
						b->sess = nv;
						name = strdup(sname);
					}
					if (name == NULL) {
						/* Never a config without the session. */
						cfb_err(b, line, "out of memory");
					} else {
						memset(&nv[b->nsess], 0, sizeof(nv[0]));
						nv[b->nsess].name = name;
						nv[b->nsess].line = line;
						b->nsess++;
					}
				}
			}
		}
		p = nl ? nl + 1 : e;
	}
}
