# tests/bench/instr-client.py KIND PORT TARGET N: the load of
# bench-instr.sh, through the proxy on 127.0.0.1:PORT.  KIND tunnel:
# N x (CONNECT TARGET, expect 200, 64-byte echo through proxy-load's raw
# port, close); http: N GETs of http://TARGET/ on one keep-alive
# connection; refuse: N x (CONNECT TARGET, expect 403, close).  KIND
# tls: CONNECT TARGET (NAME:PORT), TLS for NAME trusting the CA file
# $INSTR_CA, N GETs of /key on that one keep-alive connection, each
# answer (tls-load serve's: the SHA-256 in hex of the x-api-key it
# received) checked against $INSTR_EXPECT; the client sends the key itself only when $INSTR_KEY is
# set (an opaque tunnel); tlsdown: the same connection, one GET /bytes/N
# (N bytes down); tlsup: the same connection, one POST /sink of N bytes
# (up), its count checked.  With $INSTR_SYNC set, a tls, tlsdown or tlsup
# client makes
# its connection and handshake and sends $INSTR_WARM (50) requests first,
# then prints "ready" and waits for a line on its standard input before
# the N: the caller counts only those.  Exits non-zero on any other answer.
import os, socket, ssl, sys
kind, port, target, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
def tunnel():
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target.encode(), target.encode()))
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(4096)
        if not d: raise SystemExit("closed")
        buf += d
    if kind == "tunnel":
        assert b" 200 " in buf.split(b"\r\n")[0], buf
        s.sendall(b"E" + b"x" * 63)
        got = 0
        while got < 63:
            d = s.recv(4096)
            if not d: raise SystemExit("short echo")
            got += len(d)
    else:
        assert b" 403 " in buf.split(b"\r\n")[0], buf
    s.close()
def http_keepalive(n):
    s = socket.create_connection(("127.0.0.1", port))
    req = b"GET http://%s/ HTTP/1.1\r\nHost: %s\r\n\r\n" % (target.encode(), target.encode())
    for i in range(n):
        s.sendall(req)
        buf = b""
        while b"\r\n\r\n" not in buf:
            d = s.recv(65536)
            if not d: raise SystemExit("closed")
            buf += d
        head, _, rest = buf.partition(b"\r\n\r\n")
        cl = 0
        for l in head.split(b"\r\n"):
            if l.lower().startswith(b"content-length:"): cl = int(l.split(b":")[1])
        while len(rest) < cl:
            rest += s.recv(65536)
    s.close()
def read_answer(f):
    status = f.readline()
    if not status.startswith(b"HTTP/1.1 200 "): raise SystemExit("answer: %r" % status)
    cl = 0
    while True:
        l = f.readline()
        if l in (b"\r\n", b""): break
        if l.lower().startswith(b"content-length:"): cl = int(l.split(b":")[1])
    return cl
def tls(n):
    name = target.rsplit(":", 1)[0]
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target.encode(), target.encode()))
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(1)
        if not d: raise SystemExit("closed")
        buf += d
    assert b" 200 " in buf.split(b"\r\n")[0], buf
    ctx = ssl.create_default_context(cafile=os.environ["INSTR_CA"])
    ctx.set_alpn_protocols(["http/1.1"])
    t = ctx.wrap_socket(s, server_hostname=name)
    f = t.makefile("rb")
    key = os.environ.get("INSTR_KEY")
    hk = b"x-api-key: %s\r\n" % key.encode() if key else b""
    want = os.environ["INSTR_EXPECT"].encode()
    req = b"GET /key HTTP/1.1\r\nHost: %s\r\n%s\r\n" % (name.encode(), hk)
    def keyed(m):
        for i in range(m):
            t.sendall(req)
            got = f.read(read_answer(f))
            if got != want: raise SystemExit("the upstream got an x-api-key of SHA-256 %r" % got[:16])
    if os.environ.get("INSTR_SYNC"):
        keyed(int(os.environ.get("INSTR_WARM", "50")))
        print("ready", flush=True)
        sys.stdin.readline()
    if kind == "tlsdown":
        t.sendall(b"GET /bytes/%d HTTP/1.1\r\nHost: %s\r\n%s\r\n" % (n, name.encode(), hk))
        left = read_answer(f)
        while left > 0:
            d = f.read(min(left, 1 << 20))
            if not d: raise SystemExit("short body")
            left -= len(d)
    elif kind == "tlsup":
        t.sendall(b"POST /sink HTTP/1.1\r\nHost: %s\r\n%sContent-Length: %d\r\n\r\n" %
                  (name.encode(), hk, n))
        chunk = b"u" * (1 << 20)
        left = n
        while left > 0:
            m = min(left, len(chunk))
            t.sendall(chunk[:m])
            left -= m
        got = f.read(read_answer(f))
        if got != b"%d" % n: raise SystemExit("the upstream counted %r" % got[:20])
    else:
        keyed(n)
    t.close()
if kind == "http":
    http_keepalive(n)
elif kind in ("tls", "tlsdown", "tlsup"):
    tls(n)
else:
    for i in range(n): tunnel()
