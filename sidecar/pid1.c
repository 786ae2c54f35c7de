/*
 * sidecar/pid1.c: the sidecar's signals and children (see pid1.h).
 */
#include "config.h"

#include <signal.h>
#include <unistd.h>

#include "sidecar/pid1.h"

static const int sc_signals[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGCHLD };
#define SC_NSIGNALS (sizeof(sc_signals) / sizeof(sc_signals[0]))

int
sc_sigfd_open(void)
{
	return bs_sigfd_open(sc_signals, SC_NSIGNALS, BS_SIG_CATCH);
}

void
sc_child_signals_reset(void)
{
	bs_child_signals_reset(sc_signals, SC_NSIGNALS);
}

void
sc_child_die_with_parent(pid_t parent, int sig)
{
	if (bs_child_die_with_parent(parent, sig) < 0)
		_exit(127);
}
