/*
 * sidecar/log.c: plain-line operational log on stderr.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sidecar/log.h"

static void
sc_vlog(int err, const char *fmt, va_list ap)
{
	char line[1024];
	int n;

	/* One buffered write per line, so the lines of the probe child and of
	 * the parent do not interleave mid-line on a shared stderr. */
	n = vsnprintf(line, sizeof(line), fmt, ap);
	if (n < 0)
		return;
	if (err != 0)
		fprintf(stderr, "postern-sidecar: %s: %s\n", line,
		    strerror(err < 0 ? -err : err));
	else
		fprintf(stderr, "postern-sidecar: %s\n", line);
	fflush(stderr);
}

void
sc_logx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sc_vlog(0, fmt, ap);
	va_end(ap);
}

void
sc_logerr(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sc_vlog(err, fmt, ap);
	va_end(ap);
}
