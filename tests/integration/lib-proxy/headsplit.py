#!/usr/bin/env python3
"""headsplit.py: heads that arrive in pieces, for proxy-headsplit.sh.

    headsplit.py serve ADDR PORT
        An upstream whose answers can be cut into pieces.  For every request
        head on a connection it answers by the path:
          /big/whole, /big/bytewise   RESP_BIG (a 200 with a head of about
                                      27 KB), at once or one byte per send
          /seq/K                      RESP_SEQ (a 103, then a 200 with a
                                      body) in two sends cut at byte K (0:
                                      at once), 3 ms apart
        Keep-alive; TCP_NODELAY.

    headsplit.py send HOST PORT [--bytewise] < bytes
        Send the bytes at once or one byte per send (TCP_NODELAY), read
        until the proxy closes, print the answer with the world upstream's
        X-Conn lines (a connection counter) taken out.

    headsplit.py every HOST PORT < bytes
        Send the bytes at once, then once for every cut: the first K bytes,
        3 ms, the rest.  Prints "N cuts, D differ" and, for the first that
        differs, the cut and both answers.  Exit 1 when any differs.

    headsplit.py every-up HOST PORT TEMPLATE
        The same over the upstream's cuts: TEMPLATE (the request bytes)
        with {K} replaced by 0 (the reference) and by every cut of RESP_SEQ.
"""
import re
import socket
import sys
import threading
import time

PAD = [b"X-Pad-%02d: %s\r\n" % (i, bytes([97 + i % 26]) * 985) for i in range(27)]
RESP_BIG = (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n" + b"".join(PAD) +
            b"Content-Length: 4\r\n\r\nbig\n")
RESP_SEQ = (b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Up: seq\r\n"
            b"Content-Length: 6\r\n\r\nhello\n")
GAP = 0.003


def nodelay(s):
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def bytewise(s, data):
    for i in range(len(data)):
        s.sendall(data[i:i + 1])


def serve_conn(s):
    nodelay(s)
    buf = b""
    try:
        while True:
            while b"\r\n\r\n" not in buf:
                b = s.recv(65536)
                if not b:
                    return
                buf += b
            head, buf = buf.split(b"\r\n\r\n", 1)
            target = head.split(b"\r\n", 1)[0].split(b" ")[1]
            if target == b"/big/whole":
                s.sendall(RESP_BIG)
            elif target == b"/big/bytewise":
                bytewise(s, RESP_BIG)
            elif target.startswith(b"/seq/"):
                k = int(target[5:])
                if k == 0:
                    s.sendall(RESP_SEQ)
                else:
                    s.sendall(RESP_SEQ[:k])
                    time.sleep(GAP)
                    s.sendall(RESP_SEQ[k:])
            else:
                s.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
    except OSError:
        pass
    finally:
        s.close()


def serve(addr, port):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port))
    ls.listen(64)
    while True:
        s, _ = ls.accept()
        threading.Thread(target=serve_conn, args=(s,), daemon=True).start()


def exchange(host, port, data, cut=None, one_by_one=False):
    s = socket.create_connection((host, port), timeout=10)
    nodelay(s)
    try:
        if one_by_one:
            bytewise(s, data)
        elif cut:
            s.sendall(data[:cut])
            time.sleep(GAP)
            s.sendall(data[cut:])
        else:
            s.sendall(data)
        out = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except (OSError, socket.timeout) as e:
        out = b"(client: %s)" % str(e).encode()
    finally:
        s.close()
    return re.sub(rb"X-Conn: [0-9]+\r\n", b"", out)


def report(ref, answers):
    bad = [(k, a) for k, a in answers if a != ref]
    print("%d cuts, %d differ" % (len(answers), len(bad)))
    if bad:
        k, a = bad[0]
        print("first that differs: cut at %d" % k)
        print("at once: %r" % ref[:600])
        print("cut:     %r" % a[:600])
        return 1
    return 0


def main():
    cmd = sys.argv[1]
    if cmd == "serve":
        serve(sys.argv[2], int(sys.argv[3]))
        return 0
    host, port = sys.argv[2], int(sys.argv[3])
    if cmd == "send":
        data = sys.stdin.buffer.read()
        sys.stdout.buffer.write(exchange(host, port, data, one_by_one="--bytewise" in sys.argv))
        return 0
    if cmd == "every":
        data = sys.stdin.buffer.read()
        ref = exchange(host, port, data)
        return report(ref, [(k, exchange(host, port, data, cut=k)) for k in range(1, len(data))])
    if cmd == "every-up":
        tmpl = sys.argv[4].encode().decode("unicode_escape").encode("latin-1")
        ref = exchange(host, port, tmpl.replace(b"{K}", b"0"))
        return report(ref, [(k, exchange(host, port, tmpl.replace(b"{K}", b"%d" % k)))
                            for k in range(1, len(RESP_SEQ))])
    return 2


if __name__ == "__main__":
    sys.exit(main())
