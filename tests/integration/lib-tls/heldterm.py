#!/usr/bin/env python3
"""heldterm.py: hold many terminated tunnels open, each after one request.

    heldterm.py PROXY_PORT TARGET CAFILE PLACEHOLDER N READY GO [--more M]

Opens N tunnels to TARGET (host:443) through the proxy at 127.0.0.1:PROXY_PORT,
each a TLS session with the proxy's leaf (trusting CAFILE) that sends one
keep-alive GET /held with x-api-key: PLACEHOLDER and reads a 200.  Prints
"held K" (K: the tunnels that got their 200), writes READY, and waits (60 s
at most) for GO to exist.  Then, the N still open, makes M more (default
20) the same way (GET /more), each closed after its answer, and prints
"more K"; then checks that each held tunnel still answers a second request
(GET /again): "again K".
"""
import os
import socket
import ssl
import sys
import time


def read_head(s, what):
    """Read from S to the end of a head: (head, what came after it)."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(65536)
        if not d:
            raise OSError("closed before " + what)
        buf += d
    head, rest = buf.split(b"\r\n\r\n", 1)
    return head, rest


def tunnel(port, target, ctx):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
    head, _ = read_head(s, "the answer to CONNECT")
    if not head.startswith(b"HTTP/1.1 200"):
        raise OSError(head.split(b"\r\n")[0].decode(errors="replace"))
    return ctx.wrap_socket(s, server_hostname=target.rsplit(":", 1)[0])


def get(t, host, ph, path):
    t.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nx-api-key: %s\r\n\r\n" % (path, host, ph)).encode())
    head, body = read_head(t, "an answer")
    n = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            n = int(v)
    while len(body) < n:
        d = t.recv(65536)
        if not d:
            raise OSError("closed in the body")
        body += d
    return head.split(b"\r\n")[0].startswith(b"HTTP/1.1 200")


def main():
    port, target, cafile, ph, n = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    ready, go = sys.argv[6], sys.argv[7]
    more = int(sys.argv[9]) if len(sys.argv) > 9 and sys.argv[8] == "--more" else 20
    host = target.rsplit(":", 1)[0]
    ctx = ssl.create_default_context(cafile=cafile)
    held, why = [], {}
    for _ in range(n):
        try:
            t = tunnel(port, target, ctx)
            if get(t, host, ph, "/held"):
                held.append(t)
            else:
                t.close()
        except (OSError, ssl.SSLError) as e:
            why[str(e)[:120]] = why.get(str(e)[:120], 0) + 1
    print("held %d" % len(held), flush=True)
    for w, k in why.items():
        print("# %d: %s" % (k, w), flush=True)
    open(ready, "w").close()
    end = time.time() + 60
    while not os.path.exists(go) and time.time() < end:
        time.sleep(0.05)
    ok, why = 0, {}
    for _ in range(more):
        try:
            t = tunnel(port, target, ctx)
            ok += get(t, host, ph, "/more")
            t.close()
        except (OSError, ssl.SSLError) as e:
            why[str(e)[:120]] = why.get(str(e)[:120], 0) + 1
    print("more %d" % ok, flush=True)
    for w, k in why.items():
        print("# %d: %s" % (k, w), flush=True)
    again = 0
    for t in held:
        try:
            again += get(t, host, ph, "/again")
        except (OSError, ssl.SSLError):
            pass
        t.close()
    print("again %d" % again, flush=True)


main()
