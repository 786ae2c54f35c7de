#!/usr/bin/env python3
"""auditorder.py: the audit log's promises under load, read the way an
admin would rely on them.

    auditorder.py PROXY_PORT UPSTREAM_PORT AUDIT_LOG N FIRST_PORT

Every connection comes from a source port of its own, counted up from
FIRST_PORT (give each run in one namespace ports of its own), so that the audit lines' "peer" names one connection.
Runs a loopback upstream on 127.0.0.1:UPSTREAM_PORT and N rounds from 8
threads at once, each round one tunnel to it and one refused CONNECT
(nowhere.invalid), so that close and refusal lines are pending in the
proxy while allows are decided.  Each tunnel's client sends its own
address ("peer 127.0.0.1:PORT") as its first bytes; the upstream, when
they arrive, reads AUDIT_LOG and looks for that peer's "allow" decision
line: it must already be in the file, since nothing an allow lets through
may reach the upstream before the line that allowed it.  The upstream
answers "logged" or "missing", and the client checks the answer.

Prints one line "tunnels T refused R missing M errors E" and exits 0 when
every tunnel was answered "logged" and every refusal was a 403.
"""
import json
import socket
import sys
import threading

PROXY = ("127.0.0.1", int(sys.argv[1]))
UP_PORT = int(sys.argv[2])
LOG = sys.argv[3]
N = int(sys.argv[4])
THREADS = 8

lock = threading.Lock()
counts = {"tunnels": 0, "refused": 0, "missing": 0, "errors": 0}
errors = []


def count(key, why=None):
    with lock:
        counts[key] += 1
        if why is not None and len(errors) < 5:
            errors.append(why)


def allowed_in_log(peer):
    with open(LOG, "rb") as f:
        for raw in f:
            try:
                line = json.loads(raw)
            except ValueError:
                continue
            if line.get("event") == "decision" and line.get("peer") == peer:
                return line.get("decision") == "allow"
    return False


def serve(srv):
    while True:
        c, _ = srv.accept()
        threading.Thread(target=upstream_conn, args=(c,), daemon=True).start()


def read_line(s):
    """Bytes up to and with the first newline, or what came before EOF."""
    buf = b""
    while not buf.endswith(b"\n"):
        b = s.recv(256)
        if not b:
            break
        buf += b
    return buf


def upstream_conn(c):
    with c:
        buf = read_line(c)
        if not buf.endswith(b"\n"):
            return
        peer = buf.decode().split()[1]
        c.sendall(b"logged\n" if allowed_in_log(peer) else b"missing\n")


next_port = [int(sys.argv[5])]


def dial():
    """A connection to the proxy from a source port no other connection of
    the run had (keep them below the ephemeral range): the audit lines'
    "peer" names one connection (loopback reuses a port at once)."""
    with lock:
        port = next_port[0]
        next_port[0] += 1
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.settimeout(10)
    s.connect(PROXY)
    return s


def head(s):
    buf = b""
    while b"\r\n\r\n" not in buf:
        b = s.recv(4096)
        if not b:
            break
        buf += b
    return buf


def one_tunnel():
    with dial() as s:
        target = "127.0.0.1:%d" % UP_PORT
        s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
        h = head(s)
        if not h.startswith(b"HTTP/1.1 200"):
            count("errors", "tunnel: %r" % h[:60])
            return
        me = "%s:%d" % s.getsockname()[:2]
        s.sendall(("peer %s\n" % me).encode())
        ans = read_line(s)
        if ans == b"logged\n":
            count("tunnels")
        elif ans == b"missing\n":
            count("missing", "no allow line for %s when its bytes arrived" % me)
        else:
            count("errors", "tunnel answer %r" % ans)


def one_refusal():
    with dial() as s:
        s.sendall(b"CONNECT nowhere.invalid:443 HTTP/1.1\r\nHost: nowhere.invalid:443\r\n\r\n")
        h = head(s)
        if h.startswith(b"HTTP/1.1 403"):
            count("refused")
        else:
            count("errors", "refusal: %r" % h[:60])


def worker(rounds):
    for _ in range(rounds):
        try:
            one_tunnel()
            one_refusal()
        except OSError as e:
            count("errors", "%s" % e)


def main():
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", UP_PORT))
    srv.listen(64)
    threading.Thread(target=serve, args=(srv,), daemon=True).start()
    ts = [threading.Thread(target=worker, args=(N // THREADS,)) for _ in range(THREADS)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print("tunnels %(tunnels)d refused %(refused)d missing %(missing)d errors %(errors)d" % counts)
    for e in errors:
        print("# " + e)
    sys.exit(0 if counts["missing"] == 0 and counts["errors"] == 0 else 1)


if __name__ == "__main__":
    main()
