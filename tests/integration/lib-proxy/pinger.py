#!/usr/bin/env python3
"""pinger.py: one CONNECT tunnel to an echo service, pinged until told to
stop; says how long the worst round trip took.

    pinger.py HOST PORT TARGET READY_FILE STOP_FILE [--limit S]

Opens the tunnel, writes "ready" to READY_FILE once the 200 and the first
echo came back, then sends 64 bytes and waits for their echo, over and
over, until STOP_FILE exists.  A round trip that takes more than --limit
seconds (10) ends it.  Prints "pings=N worst_ms=W" and exits 0, or 1 when
the tunnel failed or an echo did not come back (the line says which).
"""
import os
import socket
import sys
import time


def echo(s, data, limit):
    s.settimeout(limit)
    s.sendall(data)
    got = b""
    while len(got) < len(data):
        b = s.recv(len(data) - len(got))
        if not b:
            raise OSError("the tunnel closed")
        got += b
    if got != data:
        raise OSError("the echo differs")


def main():
    host, port, target, ready, stop = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
    opts = sys.argv[6:]
    limit = float(opts[opts.index("--limit") + 1]) if "--limit" in opts else 10.0
    s = socket.create_connection((host, port), timeout=limit)
    s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        b = s.recv(1)
        if not b:
            print("pings=0 worst_ms=- no answer to the CONNECT")
            return 1
        head += b
    if not head.startswith(b"HTTP/1.1 200"):
        print("pings=0 worst_ms=- answer %r" % head.split(b"\r\n")[0])
        return 1
    n, worst = 0, 0.0
    try:
        echo(s, b"first", limit)
        with open(ready, "w") as f:
            f.write("ready\n")
        while not os.path.exists(stop):
            t0 = time.monotonic()
            echo(s, b"%064d" % n, limit)
            worst = max(worst, time.monotonic() - t0)
            n += 1
            time.sleep(0.005)
    except (OSError, socket.timeout) as e:
        print("pings=%d worst_ms=%.0f failed: %s" % (n, worst * 1000, e or "timeout"))
        return 1
    print("pings=%d worst_ms=%.0f" % (n, worst * 1000))
    return 0


if __name__ == "__main__":
    sys.exit(main())
