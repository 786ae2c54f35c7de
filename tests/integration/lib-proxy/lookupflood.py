#!/usr/bin/env python3
"""lookupflood.py HOST PORT TARGET SECONDS: send CONNECT TARGET to the
proxy and, without waiting for its answer, send numbered bytes for
SECONDS as fast as the connection takes them (the proxy is still looking
TARGET up: proxy-dns-hostile.sh gives it a slow name).  Print "sent=N",
the bytes the connection took.  Then read the proxy's answer and, TARGET
being an echo service, the bytes echoed back, until the proxy closes
after our half-close (or 20 s), and print "status=CODE" and
"echoed=N intact" (or "echoed=N damaged at OFFSET")."""
import select
import socket
import sys
import time

host, port, target, secs = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])

# Byte i of the stream is (i mod 251 + i div 251) mod 256, repeating
# every 251 * 257 bytes: a run of bytes lost, doubled or moved shows at
# its offset unless its length is a multiple of that.
PERIOD = 251 * 257
stream = bytes(((i % 251 + i // 251) % 256) for i in range(PERIOD))


def expected(off, n):
    out = b""
    while n:
        o = off % PERIOD
        k = min(n, PERIOD - o)
        out += stream[o:o + k]
        off += k
        n -= k
    return out


s = socket.create_connection((host, port))
s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
s.setblocking(False)
sent = 0
end = time.monotonic() + secs
while time.monotonic() < end:
    try:
        sent += s.send(expected(sent, 65536))
    except BlockingIOError:
        select.select([], [s], [], 0.05)
    except OSError:
        break
print("sent=%d" % sent, flush=True)

s.setblocking(True)
s.settimeout(20)
got = b""
try:
    while b"\r\n\r\n" not in got:
        b = s.recv(65536)
        if not b:
            break
        got += b
except OSError:
    pass
head, sep, body = got.partition(b"\r\n\r\n")
print("status=%s" % head[9:12].decode("latin-1"), flush=True)
if not sep:
    sys.exit(0)
s.shutdown(socket.SHUT_WR)
n = 0
bad = -1


def check(data):
    global n, bad
    if bad < 0 and data != expected(n, len(data)):
        want = expected(n, len(data))
        bad = n + next(i for i in range(len(data)) if data[i] != want[i])
    n += len(data)


check(body)
try:
    while True:
        b = s.recv(1 << 20)
        if not b:
            break
        check(b)
except OSError:
    pass
if bad < 0 and n == sent:
    print("echoed=%d intact" % n, flush=True)
elif bad < 0:
    print("echoed=%d %s" % (n, "short" if n < sent else "long"), flush=True)
else:
    print("echoed=%d damaged at %d" % (n, bad), flush=True)
