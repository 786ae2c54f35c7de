/*
 * proxy/log.c: the operational log (see log.h).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/log.h"

static const char *log_name = "postern";
static int log_debug_on;
static int log_quiet_on;
static int log_starting_on;

void
log_quiet(int quiet)
{
	log_quiet_on = quiet;
}

void
log_notice(const char *fmt, ...)
{
	va_list ap;
	char msg[1024];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\n", log_name, msg);
}

void
log_init(const char *progname, int debug)
{
	log_name = progname;
	log_debug_on = debug;
}

static void
vlog(const char *level, const char *fmt, va_list ap, const char *err)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (err != NULL)
		fprintf(stderr, "%s: %s%s: %s\n", log_name, level, msg, err);
	else
		fprintf(stderr, "%s: %s%s\n", log_name, level, msg);
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;
	const char *err = strerror(errno);

	va_start(ap, fmt);
	vlog("warning: ", fmt, ap, err);
	va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("warning: ", fmt, ap, NULL);
	va_end(ap);
}

void
log_starting(int on)
{
	log_starting_on = on;
}

void
log_err(const char *fmt, ...)
{
	va_list ap;
	const char *err = strerror(errno);

	va_start(ap, fmt);
	vlog(log_starting_on ? "error: " : "warning: ", fmt, ap, err);
	va_end(ap);
}

void
log_errx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(log_starting_on ? "error: " : "warning: ", fmt, ap, NULL);
	va_end(ap);
}

void
log_not_starting(void)
{
	fprintf(stderr, "%s: not starting\n", log_name);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	if (log_quiet_on)
		return;
	va_start(ap, fmt);
	vlog("", fmt, ap, NULL);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list ap;

	if (!log_debug_on)
		return;
	va_start(ap, fmt);
	vlog("debug: ", fmt, ap, NULL);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list ap;
	const char *err = strerror(errno);

	va_start(ap, fmt);
	vlog("error: ", fmt, ap, err);
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
	vlog("error: ", fmt, ap, NULL);
	va_end(ap);
	if (log_starting_on)
		log_not_starting();
	exit(1);
}
