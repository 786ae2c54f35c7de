/*
 * proxy/flow/revoke.h: revoke = yes.  After a reload that keeps revoke = yes,
 * every open tunnel (a CONNECT, a WebSocket after its 101) is judged by
 * the new snapshot on its full decision: the name, port and path, then
 * the address it is connected to.  Below decide and forward, which both
 * ask it about a connection that became a tunnel after the reload.
 */
#ifndef POSTERN_PROXY_REVOKE_H
#define POSTERN_PROXY_REVOKE_H

struct px_conn;
struct px_server;

/*
 * Judge the connected tunnel C (a CONNECT, or a plain-HTTP request after its
 * 101 Switching Protocols, judged with its path) by the server's current
 * snapshot: the name and port (a tunnel an admin allowed stays unless a
 * deny grant came since), then the address it is connected to (deny_hosts
 * address rules, the never-reachable ranges unless the allowing rule says
 * "private", the proxy's own listeners).  A refused tunnel is logged as
 * "revoke" and closed, after a 403 when ANSWER (the client still waits for
 * the answer to its CONNECT or upgrade): returns 1, and C is freed or
 * closing.  Returns 0 when the tunnel may stay.
 */
int px_revoke_tunnel(struct px_conn *c, int answer);

/* Before C becomes a tunnel (a CONNECT connected upstream, a 101 from
 * upstream), still awaiting its answer: when a reload with revoke = yes
 * came since C's request was decided (the pass found no tunnel to revoke
 * then), judge it as the pass would have.  Returns 1 when refused (403 to
 * the client instead of the 200 or 101; C closing or freed), 0 when it may
 * go on. */
int px_revoke_late(struct px_conn *c);

/* revoke = yes, after a reload: judge every open tunnel of SRV, closing
 * (and logging) each the new snapshot refuses. */
void px_conn_revoke(struct px_server *srv);

/* A runtime session removed (DELETE /sessions/NAME): close every open
 * connection of SRV whose session is NAME, whatever its step.  A tunnel
 * gets a "revoke" line with reason session_removed; every close line
 * says "session_removed".  Returns 0 (a px_workers_each() callback, ARG
 * the name). */
int px_conn_end_session(struct px_server *srv, void *name);

#endif
