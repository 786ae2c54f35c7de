#!/usr/bin/env python3
"""flood.py: push more bytes up a CONNECT tunnel than its budget allows.

    flood.py PROXY_HOST PROXY_PORT TARGET N [--pipelined]

Sends CONNECT TARGET, waits for the answer (with --pipelined, sends the
first 32 KiB right behind the CONNECT, before the answer: they are the
tunnel's first flight), then sends N bytes in 4 KiB writes while reading
whatever comes back (TARGET is an echo service), until the proxy closes
the tunnel, every byte came back, or 10 s pass.  Prints "STATUS sent=S echoed=E closed=yes|no",
where S counts only the bytes the socket took.
"""
import socket
import sys
import threading
import time


def main():
    host, port, target, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    pipelined = "--pipelined" in sys.argv[5:]
    s = socket.create_connection((host, port), timeout=10)
    head = ("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode()
    first = b"x" * 32768 if pipelined else b""
    s.sendall(head + first)
    sent = len(first)
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(4096)
        if not d:
            break
        buf += d
    line = buf.split(b"\r\n", 1)[0].decode("latin-1")
    status = line.split(" ")[1] if line.startswith("HTTP/1.1 ") else "none"
    echoed = [len(buf.split(b"\r\n\r\n", 1)[1]) if b"\r\n\r\n" in buf else 0]
    closed = [False]

    def reader():
        try:
            while True:
                d = s.recv(65536)
                if not d:
                    closed[0] = True
                    return
                echoed[0] += len(d)
        except OSError:
            closed[0] = True

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    chunk = b"y" * 4096
    deadline = time.time() + 10
    try:
        while sent < n and status == "200" and time.time() < deadline and not closed[0]:
            sent += s.send(chunk[:min(4096, n - sent)])
    except OSError:
        pass
    # Done when the proxy closed, or when every byte sent came back.
    while t.is_alive() and time.time() < deadline and echoed[0] < sent:
        time.sleep(0.02)
    print("%s sent=%d echoed=%d closed=%s" % (status, sent, echoed[0], "yes" if closed[0] else "no"))


main()
