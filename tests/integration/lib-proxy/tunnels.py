#!/usr/bin/env python3
"""tunnels.py: hold many CONNECT tunnels open, then prove each still works.

    tunnels.py HOST PORT TARGET N READY_FILE GO_FILE [--timeout S]

Opens N connections to the proxy at HOST:PORT, sends CONNECT TARGET on
each and waits for every 200 (non-blocking, all at once).  Then writes
"ready N" to READY_FILE and waits (at most --timeout seconds) for GO_FILE
to exist; then sends a distinct line through every tunnel (TARGET is an
echo service) and checks that each comes back.  Prints "established N",
"echoed M" and exits 0 when M == N.
"""
import os
import selectors
import socket
import sys
import time


def main():
    host, port, target, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    ready, go = sys.argv[5], sys.argv[6]
    limit = float(sys.argv[8]) if len(sys.argv) > 8 and sys.argv[7] == "--timeout" else 120.0
    deadline = time.time() + limit
    sel = selectors.DefaultSelector()
    socks = []
    req = ("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode()
    for i in range(n):
        s = socket.create_connection((host, port))
        s.sendall(req)
        s.setblocking(False)
        socks.append(s)
        sel.register(s, selectors.EVENT_READ, [i, b""])
    established = 0
    pending = n
    while pending and time.time() < deadline:
        for key, _ in sel.select(timeout=1):
            data = key.data
            try:
                b = key.fileobj.recv(4096)
            except BlockingIOError:
                continue
            if not b:
                sel.unregister(key.fileobj)
                pending -= 1
                continue
            data[1] += b
            if b"\r\n\r\n" in data[1]:
                if data[1].startswith(b"HTTP/1.1 200"):
                    established += 1
                sel.unregister(key.fileobj)
                pending -= 1
    print("established %d" % established, flush=True)
    with open(ready, "w") as f:
        f.write("ready %d\n" % established)
    while not os.path.exists(go) and time.time() < deadline:
        time.sleep(0.05)
    echoed = 0
    for i, s in enumerate(socks):
        s.setblocking(True)
        s.settimeout(5)
        line = ("tunnel %d\n" % i).encode()
        try:
            s.sendall(line)
            got = b""
            while len(got) < len(line):
                b = s.recv(4096)
                if not b:
                    break
                got += b
            if got == line:
                echoed += 1
        except OSError:
            pass
    print("echoed %d" % echoed, flush=True)
    for s in socks:
        s.close()
    return 0 if echoed == n and established == n else 1


if __name__ == "__main__":
    sys.exit(main())
