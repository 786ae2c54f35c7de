/*
 * proxy/flow/notice.c: what a refusal (or, in report mode, a request that would
 * be refused) says to a person at a terminal: the words and the one log
 * line, told once per host:port, reason and fix (notice.h).  Below the
 * connection code (conn.c answers refusals with it, record.c tells the
 * relaxed ones, h2tunnel.c refused streams): it reads a connection, never
 * changes one.  With a refusals file (px_notice_file()), each refusal line
 * goes there too, for the command that was refused.
 */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "base/text.h"
#include "conf/config.h"
#include "conf/decide.h"
#include "conf/host.h"
#include "proxy/flow/conn.h"
#include "proxy/core/lock.h"
#include "proxy/core/log.h"
#include "proxy/core/server.h"
#include "proxy/policy/summary.h"
#include "proxy/flow/notice.h"

/* The refusals file: its descriptor (-1: none), what it holds, and
 * whether its last line says that more were left out.  Shared by the
 * workers' threads. */
static pthread_mutex_t tell_lock = PX_LOCK_INIT;
static int tell_fd = -1;
static uint64_t tell_seen[PX_NOTICE_FILE_LINES];
static size_t tell_nseen;
static off_t tell_size;
static int tell_full;

static const char tell_more[] = "postern: more refusals were left out (this file keeps the "
    "first ones only)\n";

/* FNV-1a: tells lines apart, no adversary gains by a collision but the
 * loss of its own line. */
static uint64_t
tell_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (n-- > 0) {
		h ^= (unsigned char)*s++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

void
px_notice_file(int fd)
{
	char buf[PX_NOTICE_FILE_BYTES];
	struct stat st;
	ssize_t n;
	size_t off = 0, k;

	PX_LOCKED(&tell_lock);
	tell_fd = -1;
	tell_nseen = 0;
	tell_full = 0;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	tell_fd = fd;
	tell_size = st.st_size;
	/* An engine started after a crash goes on with what is there. */
	n = pread(fd, buf, sizeof(buf), 0);
	while (n > 0 && off < (size_t)n) {
		const char *nl = memchr(buf + off, '\n', (size_t)n - off);

		k = nl != NULL ? (size_t)(nl - (buf + off)) : (size_t)n - off;
		if (k + 1 == sizeof(tell_more) - 1 && memcmp(buf + off, tell_more, k) == 0)
			tell_full = 1;
		else if (tell_nseen < PX_NOTICE_FILE_LINES)
			tell_seen[tell_nseen++] = tell_hash(buf + off, k);
		off += k + 1;
	}
}

/*
 * Add MSG, a line as the terminal shows it after "postern: ", to the
 * refusals file: escaped as untrusted (it holds names and paths from the
 * request), once, and while there is room; then one last line says that
 * more were left out.
 */
static void
tell_file_add(const char *msg)
{
	char line[4 * 1024 + 16];
	size_t len;
	uint64_t h;
	size_t i;

	PX_LOCKED(&tell_lock);
	if (tell_fd < 0 || tell_full)
		return;
	memcpy(line, "postern: ", 9);
	len = 9 + bs_escape(msg, strlen(msg), line + 9, sizeof(line) - 10,
	    BS_ESC_TAB_SPACE | BS_ESC_KEEP_BACKSLASH | BS_ESC_MARK_CUT);
	h = tell_hash(line, len);
	for (i = 0; i < tell_nseen; i++)
		if (tell_seen[i] == h)
			return;
	line[len++] = '\n';
	if (tell_nseen >= PX_NOTICE_FILE_LINES - 1 ||
	    tell_size + (off_t)len > PX_NOTICE_FILE_BYTES - (off_t)(sizeof(tell_more) - 1)) {
		/* One write each: O_APPEND puts it whole at the end. */
		if (write(tell_fd, tell_more, sizeof(tell_more) - 1) > 0)
			tell_size += sizeof(tell_more) - 1;
		tell_full = 1;
		return;
	}
	if (write(tell_fd, line, len) == (ssize_t)len)
		tell_size += (off_t)len;
	tell_seen[tell_nseen++] = h;
}

void
px_notice_printf(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_notice("%s", msg);
	tell_file_add(msg);
}

/*
 * What a refusal of C's current request says to people: SUGG, an admin's
 * way to allow it (cf_suggest(), "" when there is none), WHAT, the request
 * ("CONNECT host:port", "GET host:port path /p"), and H, its host as text.
 */
void
px_notice_words(const struct px_conn *c, enum cf_reason reason, const struct cf_rule *rule, char *sugg,
    size_t suggsz, char *what, size_t whatsz, char *h, size_t hsz)
{
	struct bs_str w;

	sugg[0] = '\0';
	h[0] = '\0';
	/* Unanswered in mode = ask: the allowlist's refusal (still in
	 * C->req.dec) says what would allow it for good. */
	if (reason == CF_R_ASK_TIMEOUT && !c->req.dec.allow) {
		reason = c->req.dec.reason;
		rule = c->req.dec.rule;
	}
	if (c->sess != NULL && c->req.host.kind != 0 &&
	    (reason == CF_R_HOST_NOT_ALLOWED || reason == CF_R_PORT_NOT_ALLOWED ||
	    reason == CF_R_PATH_NOT_ALLOWED || reason == CF_R_METHOD_NOT_ALLOWED ||
	    reason == CF_R_BUDGET_EXCEEDED ||
	    reason == CF_R_PRIVATE_ADDRESS || reason == CF_R_DENIED_BY_RULE)) {
		struct cf_decision d;
		memset(&d, 0, sizeof(d));
		d.reason = reason;
		d.rule = rule;
		cf_suggest(c->sess, c->req.mode, &c->req.host, c->req.port, c->req.path, strlen(c->req.path), &d,
		    sugg, suggsz);
	}
	/* Appended, not printf()'d: this runs on every refusal. */
	bs_str_init(&w, what, whatsz);
	bs_str_add(&w, c->req.method[0] ? c->req.method : "request");
	if (c->req.host.kind != 0) {
		cf_host_format(&c->req.host, h, hsz);
		bs_str_addn(&w, " ", 1);
		bs_str_add(&w, h);
		bs_str_addn(&w, ":", 1);
		bs_str_uint(&w, c->req.port);
		if (c->req.path[0]) {
			bs_str_add(&w, " path ");
			bs_str_add(&w, c->req.path);
		}
	}
}

/*
 * For a person at a terminal (run): the refusal as one log line with the
 * pattern to pass to --allow (cf_suggest() words it "pass --allow
 * 'PATTERN'" in run), told once per host:port, reason and pattern (a
 * client that retries would fill the terminal); the summary at the end
 * counts the repeats (summary.h).
 */
void
px_notice_human(const struct px_conn *c, int would, enum cf_reason reason, const char *detail,
    const char *sugg, const char *what, const char *h)
{
	static const char lead[] = "pass --allow '";
	char patbuf[CF_HOST_TEXT_MAX + 600];
	const char *pat = NULL, *p;
	char where[CF_HOST_TEXT_MAX + 8];

	/* The pattern ends the suggestion, after its own words for a private
	 * address ("if this private address is intended, pass --allow"). */
	if ((p = strstr(sugg, lead)) != NULL) {
		size_t k;

		p += sizeof(lead) - 1;
		k = strcspn(p, "'");
		if (p[k] == '\'' && p[k + 1] == '\0' && k < sizeof(patbuf)) {
			memcpy(patbuf, p, k);
			patbuf[k] = '\0';
			/* Said as --allow '...' and in the summary: one rule
			 * for one host, or not said at all. */
			if (cf_suggest_check(patbuf, c->req.mode, NULL, 0, NULL, 0, -1))
				pat = patbuf;
		}
	}
	if (c->req.host.kind != 0)
		snprintf(where, sizeof(where), "%s:%u", h, c->req.port);
	else
		snprintf(where, sizeof(where), "%s", what);
	if (px_summary_add(would ? px_server_would_tally(c->srv) : px_server_tally(c->srv), where,
	    cf_reason_code(reason), pat) == 1) {
		const char *verb = would ? "report mode, allowed; would refuse" : "refused";
		char msg[1024];

		/* The terminal's line, and the refusals file's (no "would":
		 * those requests were not refused). */
		if (pat != NULL && strncmp(sugg, lead, sizeof(lead) - 1) == 0)
			snprintf(msg, sizeof(msg), "%s %s: %s (%s); to allow it: --allow '%s'",
			    verb, what, cf_reason_code(reason), detail ? detail : "", pat);
		else
			snprintf(msg, sizeof(msg), "%s %s: %s (%s)%s%s", verb, what,
			    cf_reason_code(reason), detail ? detail : "", sugg[0] ? "; " : "", sugg);
		log_notice("%s", msg);
		if (!would)
			tell_file_add(msg);
	}
}

void
px_notice_would(const struct px_conn *c)
{
	static const char lead[] = "report mode: would refuse: ";
	char sugg[512], h[CF_HOST_TEXT_MAX], what[600];
	const char *detail = c->req.dec.detail;

	if (!px_server_human(c->srv) || c->req.dec.would == CF_R_ALLOWED)
		return;
	/* The line says "would refuse" itself (cf_decide()'s words). */
	if (strncmp(detail, lead, sizeof(lead) - 1) == 0)
		detail += sizeof(lead) - 1;
	px_notice_words(c, c->req.dec.would, c->req.dec.would_rule, sugg, sizeof(sugg), what, sizeof(what),
	    h, sizeof(h));
	px_notice_human(c, 1, c->req.dec.would, detail, sugg, what, h);
}

void
px_notice_refusal(const struct px_conn *c, enum cf_reason reason, const struct cf_rule *rule,
    const char *detail)
{
	char sugg[512], h[CF_HOST_TEXT_MAX], what[600];

	if (!px_server_human(c->srv))
		return;
	px_notice_words(c, reason, rule, sugg, sizeof(sugg), what, sizeof(what), h, sizeof(h));
	px_notice_human(c, 0, reason, detail, sugg, what, h);
}

