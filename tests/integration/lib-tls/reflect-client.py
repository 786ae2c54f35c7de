#!/usr/bin/env python3
"""reflect-client.py PROXY_PORT CAFILE HOST PORT PATH MODE [HEADER...]: one
request through the proxy's CONNECT, TLS with CAFILE (HTTP/1.1), as
tls-reflect.sh needs what curl does not show:
  ws   a WebSocket upgrade; prints the 101's head, then each frame's
       opcode and payload, one line each ("frame OP PAYLOAD")
  sse  prints each line of the body with the milliseconds since the
       request was sent ("MS LINE")"""
import socket, ssl, sys, time, base64, os

port, cafile, host, hport, path, mode = sys.argv[1:7]
extra = sys.argv[7:]
s = socket.create_connection(("127.0.0.1", int(port)), timeout=10)
s.sendall(("CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n" % (host, hport, host, hport)).encode())
buf = b""
while b"\r\n\r\n" not in buf:
    d = s.recv(4096)
    if not d:
        sys.exit("proxy closed")
    buf += d
if b" 200 " not in buf.split(b"\r\n")[0]:
    sys.exit("CONNECT refused: %r" % buf[:200])
ctx = ssl.create_default_context(cafile=cafile)
t = ctx.wrap_socket(s, server_hostname=host)
head = "GET %s HTTP/1.1\r\nHost: %s:%s\r\n" % (path, host, hport)
if mode != "ws":
    head += "Connection: close\r\n"
if mode == "ws":
    head += ("Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
             "Sec-WebSocket-Key: %s\r\n" % base64.b64encode(os.urandom(16)).decode())
for h in extra:
    head += h + "\r\n"
t0 = time.monotonic()
t.sendall((head + "\r\n").encode())
data = b""


def more():
    global data
    d = t.recv(65536)
    if not d:
        return False
    data += d
    return True


while b"\r\n\r\n" not in data:
    if not more():
        sys.exit("closed before the head")
h, data = data.split(b"\r\n\r\n", 1)
sys.stdout.write(h.decode("latin-1") + "\n\n")
if mode == "ws":
    while True:
        while len(data) < 2:
            if not more():
                sys.exit(0)
        b0, b1 = data[0], data[1]
        if b1 & 0x80:
            sys.exit("masked server frame")
        n, off = b1 & 0x7f, 2
        if n == 126:
            while len(data) < 4:
                more()
            n, off = int.from_bytes(data[2:4], "big"), 4
        while len(data) < off + n:
            if not more():
                sys.exit("frame cut short")
        sys.stdout.write("frame %d %s\n" % (b0 & 15, data[off:off + n].decode("latin-1").replace("\n", "|")))
        data = data[off + n:]
        if b0 & 15 == 8:
            break
else:
    # Lines as they come, with their times, until the server closes.
    while True:
        while b"\n" in data:
            l, data = data.split(b"\n", 1)
            sys.stdout.write("%d %s\n" % ((time.monotonic() - t0) * 1000, l.decode("latin-1").rstrip("\r")))
            sys.stdout.flush()
        if not more():
            break
