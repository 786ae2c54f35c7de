/*
 * sidecar/srtsettings.c: an srt or Claude Code settings file as postern
 * rules (see srtsettings.h).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "base/text.h"
#include "conf/rule.h"
#include "sidecar/srtsettings.h"

/* A domain pattern of srt is a host name: 253 bytes and "*." at most. */
#define SRT_PATTERN_MAX 256
/* The longest item that fits a line of postern.ini (inih's 200 bytes, less
 * "allow_hosts = " and the newline). */
#define SRT_ITEM_MAX 180
/* A line of comment of the ini stays below that too. */
#define SRT_SHOWN_MAX 150
/* Errors and warnings told at most, each kind: a person reads them. */
#define SRT_NOTES_MAX 64

/* A key postern reads but does not apply, and why. */
struct srt_key {
	const char *name;
	const char *why;
};

static const char why_files[] =
    "no postern equivalent: postern-sidecar run confines the network, not files "
    "(CMD reads and writes what its uid may)";
static const char why_none[] = "no postern equivalent";
static const char why_claude[] =
    "Claude Code's own, not the sandbox's: postern-sidecar run seals CMD and all it starts";

/* srt's top level (sandbox-config.ts), but for "network". */
static const struct srt_key srt_top[] = {
	{ "filesystem", why_files },
	{ "ignoreViolations", "no postern equivalent: it only quiets srt's violation log" },
	{ "enableWeakerNestedSandbox", why_none },
	{ "ripgrep", why_none },
	{ "mandatoryDenySearchDepth", why_files },
	{ "allowPty", why_none },
	{ NULL, NULL },
};

/* Claude Code's "sandbox", but for "network" and "enabled". */
static const struct srt_key claude_sandbox[] = {
	{ "filesystem", why_files },
	{ "credentials", why_files },
	{ "autoAllowBashIfSandboxed", why_claude },
	{ "excludedCommands", why_claude },
	{ "allowUnsandboxedCommands", why_claude },
	{ "ignoreViolations", "no postern equivalent: it only quiets the violation log" },
	{ "enableWeakerNestedSandbox", why_none },
	{ "enableWeakerNetworkIsolation", why_none },
	{ "ripgrep", why_none },
	{ "bwrapPath", why_none },
	{ "socatPath", why_none },
	{ "failIfUnavailable", why_none },
	{ "enabledPlatforms", why_none },
	{ "allowAppleEvents", why_none },
	{ "allowNestedUserNamespaces", why_none },
	{ NULL, NULL },
};

/* "network" in both shapes, but for the domain lists.  Each of these
 * left out only narrows what CMD reaches. */
static const struct srt_key net_keys[] = {
	{ "allowUnixSockets", "not applied: give CMD a host socket with run --socket PATH" },
	{ "allowAllUnixSockets", "not applied: CMD reaches only the host sockets given with "
	    "run --socket" },
	{ "allowLocalBinding", "no postern equivalent: CMD may listen in its own network "
	    "namespace, which nothing outside reaches (see run --forward)" },
	{ "httpProxyPort", "not applied: postern is the proxy" },
	{ "socksProxyPort", "not applied: postern is the proxy" },
	{ "allowManagedDomainsOnly", "no postern equivalent: the file given is the whole policy" },
	{ NULL, NULL },
};

/* A string lost to a lack of memory could be a deny rule or an error:
 * the whole result is then refused. */
static int srt_nomem;

static int
srt_push(char ***v, size_t *n, char *s)
{
	char **nv;

	if (s == NULL) {
		srt_nomem = 1;
		return -1;
	}
	nv = realloc(*v, (*n + 1) * sizeof(*nv));
	if (nv == NULL) {
		free(s);
		srt_nomem = 1;
		return -1;
	}
	nv[(*n)++] = s;
	*v = nv;
	return 0;
}

static char *
srt_fmt(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

/* Untrusted text (a key, a value) made safe to show. */
static const char *
srt_esc(const char *s, size_t len, char *buf, size_t size)
{
	bs_escape(s, len, buf, size, BS_ESC_MARK_CUT);
	return buf;
}

/* One more note "NAME: KEY: why" in V, or past SRT_NOTES_MAX one line
 * that says more were left out. */
static int
srt_note(char ***v, size_t *n, const char *name, const char *key, const char *why)
{
	if (*n > SRT_NOTES_MAX)
		return -1;
	if (*n == SRT_NOTES_MAX)
		return srt_push(v, n, srt_fmt("%s: more not shown", name));
	return srt_push(v, n, srt_fmt("%s: %s: %s", name, key, why));
}

static void
srt_error(struct sc_srt *o, const char *name, const char *key, const char *why)
{
	(void)srt_note(&o->errors, &o->nerrors, name, key, why);
}

static void
srt_unmapped(struct sc_srt *o, const char *name, const char *key, const char *why)
{
	if (srt_note(&o->warnings, &o->nwarnings, name, key, why) == 0 &&
	    o->nwarnings <= SRT_NOTES_MAX)
		(void)srt_push(&o->unmapped, &o->nunmapped, strdup(key));
}

/*
 * One domain pattern of srt (sandbox-config.ts's domainPatternSchema:
 * "example.com", "*.example.com" with two labels or more under the
 * wildcard, "localhost") at S, LEN bytes, into OUT in lower case.
 * Returns 1 for a pattern, 0 for "localhost", 2 for an IPv4 address,
 * -1 with *WHY.
 */
static int
srt_pattern(const char *s, size_t len, enum cf_rule_type type, char *out, const char **why)
{
	struct cf_rule rule;
	const char *host;
	size_t i;
	int r;

	if (len == 0) {
		*why = "empty";
		return -1;
	}
	if (len > SRT_ITEM_MAX) {
		*why = "longer than a line of postern.ini holds (180 characters)";
		return -1;
	}
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!isascii(c) || (!isalnum(c) && c != '.' && c != '-' && c != '*')) {
			*why = "not a domain pattern: srt takes example.com or *.example.com, "
			    "with no scheme, port, path, space or comma";
			return -1;
		}
		out[i] = (char)tolower(c);
	}
	out[len] = '\0';
	if (strcmp(out, "localhost") == 0)
		return 0;
	host = out;
	if (strncmp(out, "*.", 2) == 0)
		host = out + 2;
	if (strchr(host, '*') != NULL) {
		*why = "a wildcard is only the whole first label (*.example.com)";
		return -1;
	}
	/* srt refuses "*.com" and a name without a dot as too broad; a
	 * deny rule for one only narrows. */
	if ((strchr(host, '.') == NULL && (host != out || type == CF_RULE_ALLOW)) ||
	    host[0] == '.' || host[strlen(host) - 1] == '.' || strstr(host, "..") != NULL) {
		*why = host != out ? "too broad: a wildcard needs two labels or more under it "
		    "(*.example.com, not *.com)" : "not a domain name (example.com)";
		return -1;
	}
	if (cf_rule_parse(out, strlen(out), type, &rule, why) < 0)
		return -1;
	r = rule.kind == CF_PAT_NET4 || rule.kind == CF_PAT_NET6 ? 2 : 1;
	cf_rule_clear(&rule);
	return r;
}

/* One pattern of KEY (shown) into the allow or the deny items. */
static void
srt_item(struct sc_srt *o, const char *name, const char *key, const char *s, size_t len,
    enum cf_rule_type type)
{
	char pat[SRT_PATTERN_MAX], shown[96], msg[256];
	const char *why = NULL;
	int r;

	r = srt_pattern(s, len, type, pat, &why);
	if (r < 0) {
		snprintf(msg, sizeof(msg), "\"%s\": %s", srt_esc(s, len, shown, sizeof(shown)), why);
		srt_error(o, name, key, msg);
		return;
	}
	if (r == 0 && type == CF_RULE_ALLOW) {
		/* CMD's localhost is its own loopback; the proxy never
		 * connects to one. */
		srt_unmapped(o, name, key, "\"localhost\": not applied: CMD's localhost is its "
		    "own, and the proxy never connects to a loopback address");
		return;
	}
	/* An allow rule naming an address lets a private one through
	 * without the flag: only the command line may do that. */
	if (r == 2 && type == CF_RULE_ALLOW) {
		snprintf(msg, sizeof(msg), "\"%s\": not applied: an address; allow it with "
		    "run --allow %s", pat, pat);
		srt_unmapped(o, name, key, msg);
		return;
	}
	if (o->nallow + o->ndeny >= SC_SRT_MAX_ITEMS) {
		srt_error(o, name, key, "too many domains");
		return;
	}
	if (type == CF_RULE_ALLOW)
		(void)srt_push(&o->allow, &o->nallow, strdup(pat));
	else
		(void)srt_push(&o->deny, &o->ndeny, strdup(pat));
}

/* An array of domain patterns at KEY. */
static void
srt_domains(struct sc_srt *o, const char *name, const char *key, json_t *v,
    enum cf_rule_type type)
{
	char k[128];
	size_t i;
	json_t *e;

	if (!json_is_array(v)) {
		srt_error(o, name, key, "not an array of domain names");
		return;
	}
	json_array_foreach(v, i, e) {
		snprintf(k, sizeof(k), "%s[%zu]", key, i);
		if (!json_is_string(e)) {
			srt_error(o, name, k, "not a string");
			continue;
		}
		srt_item(o, name, k, json_string_value(e), json_string_length(e), type);
	}
}

static const struct srt_key *
srt_find(const struct srt_key *t, const char *key)
{
	for (; t->name != NULL; t++)
		if (strcmp(t->name, key) == 0)
			return t;
	return NULL;
}

/* "network" under PREFIX ("network" or "sandbox.network"). */
static void
srt_network(struct sc_srt *o, const char *name, const char *prefix, json_t *net)
{
	const struct srt_key *known;
	const char *key;
	char k[160], shown[96];
	json_t *v;

	if (!json_is_object(net)) {
		srt_error(o, name, prefix, "not an object");
		return;
	}
	json_object_foreach(net, key, v) {
		snprintf(k, sizeof(k), "%s.%s", prefix, srt_esc(key, strlen(key), shown,
		    sizeof(shown)));
		if (strcmp(key, "allowedDomains") == 0)
			srt_domains(o, name, k, v, CF_RULE_ALLOW);
		else if (strcmp(key, "deniedDomains") == 0)
			srt_domains(o, name, k, v, CF_RULE_DENY);
		else if ((known = srt_find(net_keys, key)) != NULL)
			srt_unmapped(o, name, k, known->why);
		else
			/* It could be a limit postern would then not keep. */
			srt_error(o, name, k, "unknown key: leaving it out could widen what "
			    "CMD reaches");
	}
}

static void srt_others(struct sc_srt *, const char *, const char *, json_t *,
    const struct srt_key *, const char *const *);

/* Every file setting (filesystem.denyRead, ...) says the same. */
static const struct srt_key srt_none[] = { { NULL, NULL } };
static const char *const skip_none[] = { NULL };

/* The keys of OBJ under PREFIX that TABLE names are warnings, and so are
 * those it does not (unknown), but for SKIP, read by the caller. */
static void
srt_others(struct sc_srt *o, const char *name, const char *prefix, json_t *obj,
    const struct srt_key *table, const char *const *skip)
{
	const struct srt_key *known;
	const char *key;
	char k[160], shown[96];
	size_t i;
	json_t *v;

	json_object_foreach(obj, key, v) {
		for (i = 0; skip[i] != NULL; i++)
			if (strcmp(skip[i], key) == 0)
				break;
		if (skip[i] != NULL)
			continue;
		srt_esc(key, strlen(key), shown, sizeof(shown));
		if (prefix != NULL)
			snprintf(k, sizeof(k), "%s.%s", prefix, shown);
		else
			snprintf(k, sizeof(k), "%s", shown);
		known = srt_find(table, key);
		/* Each file setting by name: none of them is kept. */
		if (strcmp(key, "filesystem") == 0 && json_is_object(v) &&
		    json_object_size(v) != 0) {
			srt_others(o, name, k, v, srt_none, skip_none);
			continue;
		}
		srt_unmapped(o, name, k, known != NULL ? known->why : table == srt_none ?
		    why_files : "unknown key: no postern equivalent");
	}
}

/* Claude Code's permission rules "WebFetch(domain:D)" of KEY. */
static void
srt_permissions(struct sc_srt *o, const char *name, const char *key, json_t *v,
    enum cf_rule_type type)
{
	static const char pre[] = "WebFetch(domain:";
	const char *s;
	char k[128];
	size_t i, len;
	json_t *e;

	if (!json_is_array(v)) {
		srt_error(o, name, key, "not an array of permission rules");
		return;
	}
	json_array_foreach(v, i, e) {
		snprintf(k, sizeof(k), "%s[%zu]", key, i);
		if (!json_is_string(e)) {
			srt_error(o, name, k, "not a string");
			continue;
		}
		s = json_string_value(e);
		len = json_string_length(e);
		/* Only a domain rule is about the network; Bash(...),
		 * Read(...) and the rest are Claude Code's tools'. */
		if (len < sizeof(pre) || strncmp(s, pre, sizeof(pre) - 1) != 0 ||
		    s[len - 1] != ')')
			continue;
		srt_item(o, name, k, s + sizeof(pre) - 1, len - sizeof(pre), type);
	}
}

/* Claude Code's settings.json. */
static void
srt_claude(struct sc_srt *o, const char *name, json_t *root)
{
	static const char *const skip[] = { "network", "enabled", NULL };
	json_t *sb, *perm, *v;

	sb = json_object_get(root, "sandbox");
	if (sb != NULL && !json_is_object(sb)) {
		srt_error(o, name, "sandbox", "not an object");
		return;
	}
	if (sb != NULL) {
		v = json_object_get(sb, "enabled");
		if (v != NULL && !json_is_boolean(v))
			srt_error(o, name, "sandbox.enabled", "not true or false");
		else if (json_is_false(v))
			srt_unmapped(o, name, "sandbox.enabled", "false: Claude Code would not "
			    "sandbox; postern-sidecar run seals CMD all the same");
		if ((v = json_object_get(sb, "network")) != NULL)
			srt_network(o, name, "sandbox.network", v);
		srt_others(o, name, "sandbox", sb, claude_sandbox, skip);
	}
	/* Claude Code merges its WebFetch domain rules into the sandbox's
	 * lists; the other top-level keys are its own settings. */
	perm = json_object_get(root, "permissions");
	if (perm == NULL)
		return;
	if (!json_is_object(perm)) {
		srt_error(o, name, "permissions", "not an object");
		return;
	}
	if ((v = json_object_get(perm, "allow")) != NULL)
		srt_permissions(o, name, "permissions.allow", v, CF_RULE_ALLOW);
	if ((v = json_object_get(perm, "deny")) != NULL)
		srt_permissions(o, name, "permissions.deny", v, CF_RULE_DENY);
}

int
sc_srt_parse(const char *name, const char *text, size_t len, struct sc_srt *out)
{
	static const char *const skip[] = { "network", NULL };
	char shown[160];
	json_error_t jerr;
	json_t *root, *net;

	memset(out, 0, sizeof(*out));
	srt_nomem = 0;
	if (len > SC_SRT_MAX_BYTES) {
		srt_error(out, name, "the file", "too big for a settings file");
		return -1;
	}
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		/* jansson quotes the input near the error: escaped. */
		(void)srt_push(&out->errors, &out->nerrors, srt_fmt("%s:%d:%d: %s", name,
		    jerr.line, jerr.column, srt_esc(jerr.text, strlen(jerr.text), shown,
		    sizeof(shown))));
		return -1;
	}
	if (!json_is_object(root)) {
		srt_error(out, name, "the top level", "not an object");
	} else if (json_object_get(root, "sandbox") != NULL ||
	    json_object_get(root, "permissions") != NULL) {
		if (json_object_get(root, "network") != NULL)
			srt_error(out, name, "network", "beside Claude Code's \"sandbox\" or "
			    "\"permissions\": which file is this?");
		else
			srt_claude(out, name, root);
	} else if ((net = json_object_get(root, "network")) != NULL) {
		srt_network(out, name, "network", net);
		srt_others(out, name, NULL, root, srt_top, skip);
	} else {
		srt_error(out, name, "the top level", "no \"network\" (srt's settings) and no "
		    "\"sandbox\" or \"permissions\" (Claude Code's): not a settings file");
	}
	json_decref(root);
	out->nomem = srt_nomem;
	return out->nerrors != 0 || out->nomem ? -1 : 0;
}

int
sc_srt_load(const char *path, struct sc_srt *out)
{
	struct stat st;
	char *buf;
	ssize_t n;
	size_t len = 0;
	int fd, r;

	memset(out, 0, sizeof(*out));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > (off_t)SC_SRT_MAX_BYTES) {
		(void)srt_push(&out->errors, &out->nerrors, srt_fmt("%s: %s", path,
		    fd < 0 ? strerror(errno) : !S_ISREG(st.st_mode) ? "not a regular file" :
		    "too big for a settings file"));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	buf = malloc(SC_SRT_MAX_BYTES + 1);
	if (buf == NULL) {
		close(fd);
		(void)srt_push(&out->errors, &out->nerrors, srt_fmt("%s: out of memory", path));
		return -1;
	}
	/* Read to the end, bounded: the size may change under us. */
	while ((n = read(fd, buf + len, SC_SRT_MAX_BYTES + 1 - len)) > 0 &&
	    (len += (size_t)n) <= SC_SRT_MAX_BYTES)
		;
	close(fd);
	if (n < 0) {
		free(buf);
		(void)srt_push(&out->errors, &out->nerrors, srt_fmt("%s: %s", path,
		    strerror(errno)));
		return -1;
	}
	r = sc_srt_parse(path, buf, len, out);
	free(buf);
	return r;
}

char *
sc_srt_ini(const struct sc_srt *s, const char *name)
{
	char shown[SRT_SHOWN_MAX], *text = NULL;
	size_t i, size = 0;
	FILE *f;

	f = open_memstream(&text, &size);
	if (f == NULL)
		return NULL;
	fprintf(f, "; postern.ini from the srt settings %s\n",
	    srt_esc(name, strlen(name), shown, sizeof(shown)));
	fprintf(f, "; (postern-sidecar run --settings FILE --print-config; see postern-sidecar(8)).\n");
	fprintf(f, "; srt allows every port of a domain; an item here allows 443 (CONNECT)\n"
	    "; and 80 (plain HTTP): add HOST:PORT items for others.\n");
	for (i = 0; i < s->nunmapped; i++)
		fprintf(f, "; not applied: %s\n", s->unmapped[i]);
	fprintf(f, "[defaults]\n");
	if (s->nallow == 0)
		fprintf(f, "; no allowed domain: nothing is allowed\n");
	for (i = 0; i < s->nallow; i++)
		fprintf(f, "allow_hosts = %s\n", s->allow[i]);
	for (i = 0; i < s->ndeny; i++)
		fprintf(f, "deny_hosts = %s\n", s->deny[i]);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

static void
srt_strv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void
sc_srt_free(struct sc_srt *s)
{
	if (s == NULL)
		return;
	srt_strv_free(s->allow, s->nallow);
	srt_strv_free(s->deny, s->ndeny);
	srt_strv_free(s->unmapped, s->nunmapped);
	srt_strv_free(s->warnings, s->nwarnings);
	srt_strv_free(s->errors, s->nerrors);
	memset(s, 0, sizeof(*s));
}
