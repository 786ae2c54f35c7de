/*
 * tests/unit/test-base-super.c: the shared supervision module
 * (base/super.h): exit-status mapping, reaping, signalling children.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/super.h"
#include "tests/unit/tap.h"

/* Fork a child that exits with CODE, or kills itself with SIG. */
static int
status_of(int code, int sig)
{
	pid_t pid = fork();
	int st = -1;

	if (pid == 0) {
		if (sig != 0)
			raise(sig);
		_exit(code);
	}
	if (pid > 0)
		(void)waitpid(pid, &st, 0);
	return st;
}

static void
test_exit_code(void)
{
	static const struct {
		int code, sig, want;
	} cases[] = {
		{ 0, 0, 0 },
		{ 3, 0, 3 },
		{ 127, 0, 127 },
		{ 255, 0, 255 },
		{ 0, SIGTERM, 128 + SIGTERM },
		{ 0, SIGKILL, 128 + SIGKILL },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = bs_exit_code(status_of(cases[i].code, cases[i].sig));

		tap_ok(got == cases[i].want, "exit %d / signal %d -> %d (got %d)",
		    cases[i].code, cases[i].sig, cases[i].want, got);
	}
}

static void
test_children(void)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	pid_t a, b, pid;
	int st = 0, n, i;

	tap_ok(bs_reap_one(&st) == -ECHILD, "no child: -ECHILD");
	a = fork();
	if (a == 0) {
		pause();
		_exit(0);
	}
	b = fork();
	if (b == 0) {
		pause();
		_exit(0);
	}
	tap_ok(bs_reap_one(&st) == 0, "children alive: nothing reaped");
	n = bs_signal_children(0, -1);
	tap_ok(n == 2 || n == -ENOENT, "two children counted (%d)", n);
	n = bs_signal_children(SIGTERM, b);
	tap_ok(n == 1 || n == -ENOENT, "all but one signalled (%d)", n);
	if (n == -ENOENT)
		kill(a, SIGTERM);
	for (i = 0; i < 500 && (pid = bs_reap_one(&st)) == 0; i++)
		nanosleep(&ts, NULL);
	tap_ok(pid == a && bs_exit_code(st) == 128 + SIGTERM, "the signalled one is reaped");
	kill(b, SIGKILL);
	for (i = 0; i < 500 && (pid = bs_reap_one(NULL)) == 0; i++)
		nanosleep(&ts, NULL);
	tap_ok(pid == b, "reaped without a status");
	tap_ok(bs_reap_one(&st) == -ECHILD, "none left");
}

int
main(void)
{
	test_exit_code();
	test_children();
	return tap_done();
}
