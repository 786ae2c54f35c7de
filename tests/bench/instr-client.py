# tests/bench/instr-client.py KIND PORT TARGET N: the load of
# bench-instr.sh, through the proxy on 127.0.0.1:PORT.  KIND tunnel:
# N x (CONNECT TARGET, expect 200, 64-byte echo through proxy-load's raw
# port, close); http: N GETs of http://TARGET/ on one keep-alive
# connection; refuse: N x (CONNECT TARGET, expect 403, close).  Exits
# non-zero on any other answer.
import socket, sys
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
if kind == "http":
    http_keepalive(n)
else:
    for i in range(n): tunnel()
