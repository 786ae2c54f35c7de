#!/usr/bin/env python3
"""tlsclient.py: a TLS client through a CONNECT proxy, with control over
how its ClientHello is cut into records and segments.

    tlsclient.py PROXY_HOST PROXY_PORT TARGET SNI [--cafile F] [--path P]
                 [--reframe N] [--segment N] [--nosni] [--nocheck]

Sends CONNECT TARGET, expects 200, then runs a TLS handshake over the
tunnel with server_hostname SNI (none with --nosni).  With --reframe N the
first flight (the ClientHello) is re-framed into TLS records of at most N
bytes of handshake data; with --segment N it is written N bytes per send
with a short pause.  Then GET P; prints the HTTP response body and exits 0,
or prints "CLOSED: reason" and exits 1 when the tunnel was cut.
"""
import argparse
import socket
import ssl
import sys
import time


def reframe(flight, size):
    """Split the handshake records of FLIGHT into records of SIZE bytes."""
    out = bytearray()
    i = 0
    while i + 5 <= len(flight):
        ctype, ver, ln = flight[i], flight[i + 1:i + 3], int.from_bytes(flight[i + 3:i + 5], "big")
        body = flight[i + 5:i + 5 + ln]
        i += 5 + ln
        if ctype != 22:
            out += flight[i - 5 - ln:i]
            continue
        for j in range(0, len(body), size):
            part = body[j:j + size]
            out += bytes([22]) + ver + len(part).to_bytes(2, "big") + part
    out += flight[i:]
    return bytes(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("target")
    ap.add_argument("sni")
    ap.add_argument("--cafile")
    ap.add_argument("--path", default="/")
    ap.add_argument("--reframe", type=int, default=0)
    ap.add_argument("--segment", type=int, default=0)
    ap.add_argument("--nosni", action="store_true")
    ap.add_argument("--nocheck", action="store_true", help="send SNI but skip the name check")
    a = ap.parse_args()

    s = socket.create_connection((a.host, a.port), timeout=10)
    s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (a.target, a.target)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        b = s.recv(1)
        if not b:
            print("CLOSED: no answer to CONNECT")
            return 1
        head += b
    if not head.startswith(b"HTTP/1.1 200"):
        print("CLOSED: CONNECT answered " + head.split(b"\r\n")[0].decode("latin-1"))
        return 1

    ctx = ssl.create_default_context(cafile=a.cafile)
    if a.nosni or a.nocheck:
        ctx.check_hostname = False
    inc, outg = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ctx.wrap_bio(inc, outg, server_hostname=None if a.nosni else a.sni)
    first = True

    def flush():
        nonlocal first
        data = outg.read()
        if not data:
            return
        if first:
            first = False
            if a.reframe:
                data = reframe(data, a.reframe)
            if a.segment:
                for j in range(0, len(data), a.segment):
                    s.sendall(data[j:j + a.segment])
                    time.sleep(0.002)
                return
        s.sendall(data)

    def pump():
        b = s.recv(65536)
        if not b:
            raise ConnectionError("the tunnel was closed")
        inc.write(b)

    try:
        while True:
            try:
                tls.do_handshake()
                flush()
                break
            except ssl.SSLWantReadError:
                flush()
                pump()
        tls.write(("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (a.path, a.sni)).encode())
        flush()
        resp = b""
        while True:
            try:
                chunk = tls.read(65536)
                if not chunk:
                    break
                resp += chunk
            except ssl.SSLWantReadError:
                try:
                    pump()
                except ConnectionError:
                    break
            except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                break
    except (ConnectionError, ssl.SSLError, socket.timeout, OSError) as e:
        print("CLOSED: %s" % e)
        return 1
    body = resp.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in resp else resp
    sys.stdout.write(body.decode("latin-1"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
