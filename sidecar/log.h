/*
 * sidecar/log.h: the sidecar's operational log, plain lines on stderr (the
 * relayd split: a variant that appends errno and one that does not).  The
 * proxy engine keeps its own JSON audit log; these lines only report what the
 * sidecar itself did to the namespace and why it refused to start.
 */
#ifndef POSTERN_SIDECAR_LOG_H
#define POSTERN_SIDECAR_LOG_H

/*
 * Print "postern-sidecar: MESSAGE" and a newline on stderr.  Never fails
 * visibly: a closed stderr loses the line, nothing else.
 */
void sc_logx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Like sc_logx() with ": strerror(ERR)" appended.  ERR is an errno value,
 * positive or negative (the negative errno returns of this code base can be
 * passed as they are).
 */
void sc_logerr(int err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
