/*
 * proxy/core/log.h: the proxy's operational log is the shared one
 * (base/log.h: log_warn, log_err, fatal, ...), under the same names.
 */
#ifndef POSTERN_PROXY_LOG_H
#define POSTERN_PROXY_LOG_H

#include "base/log.h"

#endif
