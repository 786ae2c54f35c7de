/*
 * base/log.c: the operational log (see log.h).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"

static const char *log_name = "postern";
static int log_debug_on;
static int log_quiet_on;
static int log_starting_on;

void
log_init(const char *progname, int debug)
{
	log_name = progname;
	log_debug_on = debug;
}

void
log_quiet(int quiet)
{
	log_quiet_on = quiet;
}

void
log_starting(int on)
{
	log_starting_on = on;
}

void
log_vline(const char *prog, const char *level, int err, const char *fmt, va_list ap)
{
	char msg[1024];
	int saved = errno;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (prog == NULL)
		prog = log_name;
	/* One formatted write per line, flushed, whatever stderr's buffering. */
	if (err != 0)
		fprintf(stderr, "%s: %s%s: %s\n", prog, level, msg, strerror(err < 0 ? -err : err));
	else
		fprintf(stderr, "%s: %s%s\n", prog, level, msg);
	fflush(stderr);
	errno = saved;
}

void
log_line(const char *prog, const char *level, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline(prog, level, err, fmt, ap);
	va_end(ap);
}

/* The level of log_err and friends: see log_starting(). */
static const char *
err_level(void)
{
	return log_starting_on ? "error: " : "warning: ";
}

void
log_notice(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline(NULL, "", 0, fmt, ap);
	va_end(ap);
}

void
log_notice_errno(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline(NULL, "", err, fmt, ap);
	va_end(ap);
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;
	int err = errno;

	va_start(ap, fmt);
	log_vline(NULL, "warning: ", err, fmt, ap);
	va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline(NULL, "warning: ", 0, fmt, ap);
	va_end(ap);
}

void
log_err(const char *fmt, ...)
{
	va_list ap;
	int err = errno;

	va_start(ap, fmt);
	log_vline(NULL, err_level(), err, fmt, ap);
	va_end(ap);
}

void
log_err_errno(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline(NULL, err_level(), err, fmt, ap);
	va_end(ap);
}

void
log_errx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline(NULL, err_level(), 0, fmt, ap);
	va_end(ap);
}

void
log_not_starting(void)
{
	int saved = errno;

	fprintf(stderr, "%s: not starting\n", log_name);
	fflush(stderr);
	errno = saved;
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	if (log_quiet_on)
		return;
	va_start(ap, fmt);
	log_vline(NULL, "", 0, fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list ap;

	if (!log_debug_on)
		return;
	va_start(ap, fmt);
	log_vline(NULL, "debug: ", 0, fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list ap;
	int err = errno;

	va_start(ap, fmt);
	log_vline(NULL, "error: ", err, fmt, ap);
	va_end(ap);
	if (log_starting_on)
		log_not_starting();
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline(NULL, "error: ", 0, fmt, ap);
	va_end(ap);
	if (log_starting_on)
		log_not_starting();
	exit(1);
}
