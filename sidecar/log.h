/*
 * sidecar/log.h: the sidecar's operational log, plain lines on stderr
 * written by the shared log (base/log.h), always signed
 * "postern-sidecar:" even in the process that also runs the proxy engine
 * (which names its own lines).  The proxy engine keeps its own JSON audit
 * log; these lines only report what the sidecar itself did to the
 * namespace and why it refused to start.
 *
 * sc_logx(FMT, ...) prints "postern-sidecar: MESSAGE"; sc_logerr(ERR, FMT,
 * ...) appends ": strerror(ERR)", ERR an errno value, positive or negative
 * (the negative errno returns of this code base can be passed as they
 * are).  Neither fails visibly: a closed stderr loses the line.
 */
#ifndef POSTERN_SIDECAR_LOG_H
#define POSTERN_SIDECAR_LOG_H

#include "base/log.h"

#define SC_LOG_NAME "postern-sidecar"
#define sc_logx(...) log_line(SC_LOG_NAME, "", 0, __VA_ARGS__)
#define sc_logerr(err, ...) log_line(SC_LOG_NAME, "", (err), __VA_ARGS__)

#endif
