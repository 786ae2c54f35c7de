#!/usr/bin/env python3
"""pipeflood.py HOST PORT HOSTNAME SECONDS [PATH]: on one keep-alive
connection to the proxy, ask HOSTNAME for /one, then for /delay/2, and while that answer is awaited
send a second request and then 'x' bytes for SECONDS, as fast as the
connection takes them.  Then read until the proxy closes (or 10 s), and
print "sent=N" (the flood bytes the connection took) and the status
code of every answer, one line each, "status=CODE".  PATH, when given,
is the second request's (default /two).  The reading starts a second
after the flood ends, so that answers wait in the socket buffers."""
import re
import select
import socket
import sys
import time

host, port, name, secs = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
second = sys.argv[5] if len(sys.argv) > 5 else "/two"
s = socket.create_connection((host, port))
# A first exchange, so that the awaited one goes to the proxy's pooled
# upstream connection (the way every keep-alive request after the first
# takes).
s.sendall(("GET http://%s/one HTTP/1.1\r\nHost: %s\r\n\r\n" % (name, name)).encode())
first = b""
while b"\r\n\r\n" not in first:
    b = s.recv(65536)
    if not b:
        sys.exit("no answer to the first request")
    first += b
head, _, rest = first.partition(b"\r\n\r\n")
cl = re.search(rb"\r\nContent-Length: *([0-9]+)", head, re.I)
need = int(cl.group(1)) if cl else 0
while len(rest) < need:
    b = s.recv(65536)
    if not b:
        sys.exit("the first answer was cut short")
    rest += b
print("status=%s" % head[9:12].decode("latin-1"), flush=True)
s.sendall(("GET http://%s/delay/2 HTTP/1.1\r\nHost: %s\r\n\r\n" % (name, name)).encode())
time.sleep(0.3)
s.sendall(("GET http://%s%s HTTP/1.1\r\nHost: %s\r\n\r\n" % (name, second, name)).encode())
s.setblocking(False)
chunk = b"x" * 65536
sent = 0
end = time.monotonic() + secs
while time.monotonic() < end:
    try:
        sent += s.send(chunk)
    except BlockingIOError:
        select.select([], [s], [], 0.05)
    except OSError:
        break
print("sent=%d" % sent, flush=True)
time.sleep(1)
s.setblocking(True)
s.settimeout(10)
got = b""
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        got += b
except OSError:
    pass
# The answers one after another, each head's Content-Length giving its
# body; one cut short ends the list with "status=CODE-short".
off = 0
while off < len(got):
    end = got.find(b"\r\n\r\n", off)
    m = re.match(rb"HTTP/1\.1 ([0-9]{3}) ", got[off:])
    if end < 0 or m is None:
        print("junk=%d" % (len(got) - off), flush=True)
        break
    code = m.group(1).decode("latin-1")
    cl = re.search(rb"\r\nContent-Length: *([0-9]+)\r\n", got[off:end + 2], re.I)
    n = int(cl.group(1)) if cl else 0
    body = end + 4
    if body + n > len(got):
        print("status=%s-short" % code, flush=True)
        break
    print("status=%s" % code, flush=True)
    off = body + n
