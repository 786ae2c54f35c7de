/*
 * proxy/log.h: the operational log (plain lines on stderr), relayd's split.
 * The audit log of decisions is separate (audit.h).
 */
#ifndef POSTERN_PROXY_LOG_H
#define POSTERN_PROXY_LOG_H

/* Set the program name shown before every line, and the verbosity. */
void log_init(const char *progname, int debug);

/* Nonzero: log_info lines are not shown (a terminal user's quiet mode);
 * warnings, notices and errors still are. */
void log_quiet(int quiet);

/* A line meant for a person, shown even in quiet mode. */
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
 * failed, "PROG: not starting", the same words as the bridge and the
 * sidecar use.
 */
void log_starting(int on);
void log_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_errx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_not_starting(void);
/* Only at start-up or for a broken invariant: log and exit(1). */
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
