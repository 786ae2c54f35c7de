/*
 * bridge/connect.h: "postern-bridge connect HOST PORT", one CONNECT through
 * the proxy relayed over stdin and stdout, for ssh's ProxyCommand (so that
 * an image needs neither nc nor socat).  See postern-bridge(8) "CONNECT".
 */
#ifndef POSTERN_BRIDGE_CONNECT_H
#define POSTERN_BRIDGE_CONNECT_H

/* Exit status when the proxy refused the CONNECT (or gave no answer). */
#define BR_CONNECT_REFUSED 1
/* Exit status for bad arguments or when the proxy cannot be reached. */
#define BR_CONNECT_SETUP 2

/*
 * The "connect" subcommand: ARGV[0] is "connect", then options
 * ("--via ADDR:PORT", the bridge's TCP listener, default 127.0.0.1:3128;
 * or "-c SOCK"/"--connect SOCK", the proxy's UNIX socket) and HOST PORT.
 * Asks the proxy for CONNECT HOST:PORT (an IPv6 HOST is bracketed), and on
 * a 2xx relays stdin to the tunnel and the tunnel to stdout until both
 * ends are closed; returns 0 then.  On a refusal, says on stderr the
 * status, X-Postern-Reason and the proxy's explanation (the body) and
 * returns BR_CONNECT_REFUSED; on bad arguments or an unreachable proxy,
 * BR_CONNECT_SETUP.
 */
int br_connect_main(int argc, char **argv);

#endif
