/*
 * base/log.h: the operational log of all three binaries (plain lines on
 * stderr), relayd's split: log_warn/log_err/fatal add strerror(errno),
 * the x variants do not, and none of them changes errno.  The proxy's
 * audit log of decisions is separate (proxy/core/audit.h).  libc only: the
 * bridge links it.
 *
 * Every line is "PROG: LEVELMESSAGE[: strerror]" written in one write, so
 * that the lines of a child and of its parent on a shared stderr do not
 * interleave mid-line; a message is cut at 1023 bytes.  A closed stderr
 * loses the line, nothing else.
 */
#ifndef POSTERN_BASE_LOG_H
#define POSTERN_BASE_LOG_H

#include <stdarg.h>

/* Set the program name shown before every line (borrowed: it must
 * outlive the log, a string literal or argv[0]), and whether log_debug
 * lines are shown. */
void log_init(const char *progname, int debug);

/* Nonzero: log_info lines are not shown (a terminal user's quiet mode);
 * warnings, notices and errors still are. */
void log_quiet(int quiet);

/* A line meant for a person, shown even in quiet mode: "PROG: MESSAGE". */
void log_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* log_warn adds strerror(errno); log_warnx does not. */
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * While start-up is under way (log_starting(1), from log_init until the
 * engine serves), a condition that stops the process is an error, and
 * log_err/log_errx print "error: "; afterwards the same condition (a
 * listener a reload cannot bind) only refuses that change, and they print
 * "warning: ".  log_not_starting() prints the last line of a start that
 * failed, "PROG: not starting", the same words in all three binaries.
 */
void log_starting(int on);
void log_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_errx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_not_starting(void);
/* Only at start-up or for a broken invariant: log and exit(1). */
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/*
 * For code that holds an error code rather than errno: the same lines as
 * log_notice and log_err with ": strerror(ERR)" appended, ERR an errno
 * value, positive or negative (this code base's negative errno returns
 * can be passed as they are); ERR 0 appends nothing.
 */
void log_notice_errno(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_err_errno(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The one writer under all of the above: "PROG: LEVELMESSAGE" and, when
 * ERR is not 0, ": strerror(ERR)".  PROG NULL is the name given to
 * log_init; a module that must sign its lines whatever the process's
 * name (the sidecar, which also runs the proxy engine) passes its own.
 * LEVEL is "" or a prefix such as "warning: ".
 */
void log_line(const char *prog, const char *level, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void log_vline(const char *prog, const char *level, int err, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

#endif
