/*
 * tests/unit/test-rtsess.c: a runtime session is read after the file by
 * the same reader and keys (cf_config_load_extra()): its errors say
 * session:NAME:LINE, it holds no section, it cannot share a name with a
 * file session, and it builds the session a file section would.  The set
 * of them and their files in state_dir (proxy/policy/rtsess.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "conf/config.h"
#include "proxy/policy/rtsess.h"
#include "tests/unit/tap.h"
#include "tests/unit/conferr.h"

static char dir[] = "/tmp/test-rtsess.XXXXXX";
static char file[300];

static void
write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0)
		abort();
	chmod(path, mode);
}

/* Load FILE with the runtime session NAME of TEXT; the error wanted (NULL:
 * none) must be among those given. */
static struct cf_config *
load1(const char *name, const char *text, const char *want, const char *what)
{
	struct cf_extra ex = { name, text, strlen(text) };
	struct cf_diag d;
	struct cf_config *c;

	memset(&d, 0, sizeof(d));
	c = cf_config_load_extra(file, NULL, &ex, 1, &d);
	if (want == NULL)
		tap_ok(c != NULL, "%s: taken%s%s", what, d.nerrors ? ", got: " : "",
		    d.nerrors ? d.errors[0] : "");
	else
		tap_ok(c == NULL && has_error(&d, want), "%s: \"%s\"%s%s", what, want,
		    d.nerrors ? ", got: " : ", no error", d.nerrors ? d.errors[0] : "");
	cf_diag_free(&d);
	return c;
}

static void
test_conf(void)
{
	char text[600], want[400];
	struct cf_config *c, *f;
	const struct cf_session *rs, *fs;
	struct cf_diag d;
	size_t k;
	int same;

	snprintf(text, sizeof(text), "[proxy]\nlisten = unix:%s/main.sock\n[session filed]\n"
	    "listen = unix:%s/f.sock\nallow_hosts = a.test\n", dir, dir);
	write_file(file, text, 0600);

	cf_config_free(load1("t1", "listen = unix:/run/t1.sock\nallow_hosts = b.test, c..test\n",
	    "session:t1:2: empty label in host name (c..test)", "a bad pattern"));
	cf_config_free(load1("t1", "listen = unix:/run/t1.sock\nmax_connections = lots",
	    "session:t1:2: max_connections must be", "a bad number, no final newline"));
	cf_config_free(load1("t1", "listen = unix:/run/t1.sock\nallow_host = b.test\n",
	    "session:t1:2: unknown key in [session t1] (allow_host)", "an unknown key"));
	cf_config_free(load1("t1", "allow_hosts = b.test\n",
	    "session:t1: session t1 has no listen address", "no listener"));
	cf_config_free(load1("t1", "listen = unix:/run/t1.sock\n\t[session x]\nlisten = unix:/run/x.sock\n",
	    "session:t1:2: a runtime session holds key = value lines only", "a section header"));
	cf_config_free(load1("t1", "listen = unix:/run/t1.sock\n\v[proxy]\n",
	    "session:t1:2: a runtime session holds key = value lines only",
	    "a section header after a vertical tab"));
	cf_config_free(load1("t1", "listen = unix:/run/t1.sock\nmode = report\nmode = enforce\n",
	    "session:t1:3: mode is given twice (first on line 2)", "a key given twice"));
	cf_config_free(load1("t1", "listen = unix:/run/t1.sock\nadmin = unix:/run/a.sock\n",
	    "session:t1:2: admin belongs in [proxy]", "a [proxy] key"));
	snprintf(want, sizeof(want), "session:t1:1: unix:%s/f.sock is already the listener of filed", dir);
	snprintf(text, sizeof(text), "listen = unix:%s/f.sock\n", dir);
	cf_config_free(load1("t1", text, want, "a file session's listener"));
	cf_config_free(load1("t/1", "listen = unix:/run/t1.sock\n", "bad session name", "a bad name"));
	cf_config_free(load1("default", "listen = unix:/run/t1.sock\n", "bad session name",
	    "the default session's name"));
	snprintf(want, sizeof(want), "%s:3: session filed exists at run time (remove it first)", file);
	cf_config_free(load1("filed", "listen = unix:/run/t1.sock\n", want,
	    "a file section with a runtime session's name"));

	/* Two runtime sessions, one listener: the second's line is named. */
	{
		struct cf_extra ex[2] = {
			{ "t1", "listen = unix:/run/t.sock\n", 26 },
			{ "t2", "allow_hosts = x.test\nlisten = unix:/run/t.sock\n", 47 },
		};
		memset(&d, 0, sizeof(d));
		c = cf_config_load_extra(file, NULL, ex, 2, &d);
		tap_ok(c == NULL && has_error(&d, "session:t2:2: unix:/run/t.sock is already the listener of t1 "
		    "(session:t1:1)"),
		    "two runtime sessions on one listener: the second's line%s%s",
		    d.nerrors ? ", got: " : "", d.nerrors ? d.errors[0] : "");
		cf_config_free(c);
		cf_diag_free(&d);
	}

	/* A valid one is the session a file section makes. */
	c = load1("t1", "; a comment\nlisten = unix:/run/t1.sock mode=0600\nallow_hosts = b.test, *.c.test\n"
	    "deny_hosts = x.c.test\nmax_connections = 7\nmode = report", NULL, "a valid session");
	rs = c != NULL ? cf_config_find_session(c, "t1") : NULL;
	tap_ok(rs != NULL && rs->runtime, "it is marked runtime");
	tap_ok(rs != NULL && strcmp(rs->file, "session:t1") == 0 && rs->line == 0,
	    "it names session:t1");
	tap_ok(rs != NULL && rs->nallow == 2 && strcmp(rs->allow[1]->file, "session:t1") == 0 &&
	    rs->allow[1]->line == 3, "its rules say session:t1:3");
	tap_ok(rs != NULL && rs->nlisten == 1 && strcmp(rs->listen[0].file, "session:t1") == 0 &&
	    rs->listen[0].line == 2 && rs->listen[0].mode == 0600, "its listener says session:t1:2");
	fs = c != NULL ? cf_config_find_session(c, "filed") : NULL;
	tap_ok(fs != NULL && !fs->runtime && strcmp(fs->file, file) == 0 && fs->line == 3 &&
	    fs->allow[0]->line == 5 && fs->allow[0]->file == cf_config_path(c),
	    "the file's session still names the file");

	/* The same lines as a file section. */
	snprintf(text, sizeof(text), "[proxy]\nlisten = unix:%s/main.sock\n[session filed]\n"
	    "listen = unix:%s/f.sock\nallow_hosts = a.test\n[session t1]\n; a comment\n"
	    "listen = unix:/run/t1.sock mode=0600\nallow_hosts = b.test, *.c.test\n"
	    "deny_hosts = x.c.test\nmax_connections = 7\nmode = report\n", dir, dir);
	memset(&d, 0, sizeof(d));
	f = cf_config_parse("f.ini", text, strlen(text), NULL, &d);
	fs = f != NULL ? cf_config_find_session(f, "t1") : NULL;
	same = rs != NULL && fs != NULL && rs->nallow == fs->nallow && rs->ndeny == fs->ndeny &&
	    rs->max_connections == fs->max_connections && rs->report == fs->report &&
	    rs->ask == fs->ask && rs->nlisten == fs->nlisten;
	for (k = 0; same && k < rs->nallow; k++)
		same = strcmp(rs->allow[k]->text, fs->allow[k]->text) == 0 &&
		    rs->allow[k]->line + 6 == fs->allow[k]->line;
	tap_ok(same, "it is the session the same lines make in the file");
	tap_ok(f != NULL && c != NULL && strcmp(cf_config_hash(f), cf_config_hash(c)) == 0,
	    "its hash is that of the file with the section added");
	cf_config_free(f);
	cf_diag_free(&d);
	cf_config_free(c);

	/* No runtime session: the file's own snapshot, hash and all. */
	memset(&d, 0, sizeof(d));
	c = cf_config_load_extra(file, NULL, NULL, 0, &d);
	f = cf_config_load(file, NULL, &d);
	tap_ok(c != NULL && f != NULL && strcmp(cf_config_hash(c), cf_config_hash(f)) == 0,
	    "without runtime sessions the snapshot is the file's");
	cf_config_free(c);
	cf_config_free(f);
	cf_diag_free(&d);

	/* A file without a final newline. */
	snprintf(text, sizeof(text), "[proxy]\nlisten = unix:%s/main.sock", dir);
	write_file(file, text, 0600);
	cf_config_free(load1("t1", "listen = unix:/run/t1.sock\nallow_hosts = b..test\n",
	    "session:t1:2: empty label", "after a file without a final newline, lines still count"));
}

static void
test_set(void)
{
	struct px_rtsess *rs = px_rtsess_new(), *back = px_rtsess_new();
	const struct cf_extra *ex;
	char why[300], path[400];
	struct stat st;
	size_t n;

	tap_ok(rs != NULL && back != NULL, "sets made");
	tap_ok(px_rtsess_insert(rs, SIZE_MAX, "b", "x = 1\n", 6) == 0 &&
	    px_rtsess_insert(rs, SIZE_MAX, "c", "y = 2\n", 6) == 0 &&
	    px_rtsess_insert(rs, 0, "a", "z", 1) == 0, "three inserted");
	ex = px_rtsess_list(rs, &n);
	tap_ok(n == 3 && strcmp(ex[0].name, "a") == 0 && strcmp(ex[2].name, "c") == 0 &&
	    ex[0].len == 1, "in order");
	tap_ok(px_rtsess_find(rs, "b") == 1 && px_rtsess_find(rs, "d") == -1, "found by name");
	px_rtsess_remove(rs, 1);
	ex = px_rtsess_list(rs, &n);
	tap_ok(n == 2 && strcmp(ex[1].name, "c") == 0 && px_rtsess_find(rs, "b") == -1, "one removed");

	tap_ok(px_rtsess_name_ok("a-b_c.1") && !px_rtsess_name_ok(".x") && !px_rtsess_name_ok("a/b") &&
	    !px_rtsess_name_ok("") && !px_rtsess_name_ok(
	    "01234567890123456789012345678901234567890123456789012345678901234"),
	    "names for files: no dot first, no slash, at most 64");

	tap_ok(px_rtsess_save(dir, "k2", "listen = unix:/run/k2.sock\n", 26, why, sizeof(why)) == 0 &&
	    px_rtsess_save(dir, "k1", "listen = unix:/run/k1.sock\n", 26, why, sizeof(why)) == 0,
	    "two kept");
	snprintf(path, sizeof(path), "%s/sessions/k1.ini", dir);
	tap_ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "a kept file is 0600");
	snprintf(path, sizeof(path), "%s/sessions", dir);
	tap_ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0700, "their directory 0700");
	tap_ok(px_rtsess_save(dir, "../x", "y", 1, why, sizeof(why)) == -EINVAL, "no file for a bad name");
	snprintf(path, sizeof(path), "%s/sessions/k3.ini", dir);
	write_file(path, "listen = unix:/run/k3.sock\n", 0666);
	snprintf(path, sizeof(path), "%s/sessions/.k4.ini.tmp", dir);
	write_file(path, "half", 0600);
	tap_ok(px_rtsess_load(back, dir, (uid_t)-1, NULL, NULL) == 2, "two read back (k3 is writable by others, "
	    "a temp file is no session)");
	ex = px_rtsess_list(back, &n);
	tap_ok(n == 2 && strcmp(ex[0].name, "k1") == 0 && strcmp(ex[1].name, "k2") == 0 &&
	    ex[1].len == 26 && memcmp(ex[1].text, "listen = unix:/run/k2.sock\n", 26) == 0,
	    "in the order of their names, as written");
	tap_ok(px_rtsess_forget(dir, "k1", why, sizeof(why)) == 0 &&
	    px_rtsess_forget(dir, "k1", why, sizeof(why)) == 0, "forgotten, twice");
	px_rtsess_free(back);
	back = px_rtsess_new();
	tap_ok(px_rtsess_load(back, dir, (uid_t)-1, NULL, NULL) == 1, "one left");
	px_rtsess_free(back);
	/* Kept by the proxy's user after the privilege drop, read as root at
	 * the next start: that user's files are trusted, no other's. */
	if (geteuid() == 0) {
		snprintf(path, sizeof(path), "%s/sessions/k2.ini", dir);
		back = px_rtsess_new();
		tap_ok(chown(path, 4243, 4243) == 0 &&
		    px_rtsess_load(back, dir, (uid_t)-1, NULL, NULL) == 0,
		    "a file of another uid is skipped");
		px_rtsess_free(back);
		back = px_rtsess_new();
		tap_ok(px_rtsess_load(back, dir, 4243, NULL, NULL) == 1,
		    "unless that uid is the proxy's user");
		px_rtsess_free(back);
	}
	/* Every kept session ended: the directory stays, empty. */
	tap_ok(px_rtsess_forget(dir, "k2", why, sizeof(why)) == 0 &&
	    px_rtsess_forget(dir, "k3", why, sizeof(why)) == 0, "the last ones forgotten");
	back = px_rtsess_new();
	tap_ok(px_rtsess_load(back, dir, (uid_t)-1, NULL, NULL) == 0, "an empty directory: none read");
	px_rtsess_free(back);
	px_rtsess_free(rs);
}

int
main(void)
{
	char cmd[400];
	int rc;

	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(file, sizeof(file), "%s/t.ini", dir);
	test_conf();
	test_set();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	rc = tap_done();
	if (system(cmd) != 0)
		return 1;
	return rc;
}
