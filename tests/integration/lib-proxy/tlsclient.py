#!/usr/bin/env python3
"""tlsclient.py: a TLS client through a CONNECT proxy, with control over
how its ClientHello is cut into records and segments.

    tlsclient.py PROXY_HOST PROXY_PORT TARGET SNI [--cafile F] [--path P]
                 [--reframe N] [--segment N] [--nosni] [--nocheck]
                 [--record-version HHHH] [--pipeline] [--drip N --drip-for S]

Sends CONNECT TARGET, expects 200, then runs a TLS handshake over the
tunnel with server_hostname SNI (none with --nosni).  With --reframe N the
first flight (the ClientHello) is re-framed into TLS records of at most N
bytes of handshake data; with --segment N it is written N bytes per send
with a short pause.  Then GET P; prints the HTTP response body and exits 0,
or prints "CLOSED: reason" and exits 1 when the tunnel was cut.

--record-version HHHH rewrites bytes 1-2 of the first record (the record
version) to HHHH.  --pipeline sends the CONNECT and the first flight in
one write, before the proxy answered; a refusal prints "CLOSED: CONNECT
answered STATUS-LINE" and "reason=X-Postern-Reason".  --drip N sends the
first N bytes of the first flight, then one byte a second for at most
--drip-for seconds, and prints "CLOSED after S s" (seconds since the 200)
when the proxy cuts the tunnel, "OPEN after S s" when it did not.
"""
import argparse
import select
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
    ap.add_argument("--record-version")
    ap.add_argument("--pipeline", action="store_true")
    ap.add_argument("--drip", type=int, default=-1)
    ap.add_argument("--drip-for", type=float, default=10.0)
    a = ap.parse_args()

    ctx = ssl.create_default_context(cafile=a.cafile)
    if a.nosni or a.nocheck:
        ctx.check_hostname = False
    inc, outg = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ctx.wrap_bio(inc, outg, server_hostname=None if a.nosni else a.sni)
    first = True

    def first_flight(data):
        if a.reframe:
            data = reframe(data, a.reframe)
        if a.record_version:
            data = data[:1] + bytes.fromhex(a.record_version) + data[3:]
        return data

    s = socket.create_connection((a.host, a.port), timeout=10)
    connect = ("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (a.target, a.target)).encode()
    if a.pipeline:
        try:
            tls.do_handshake()
        except ssl.SSLWantReadError:
            pass
        first = False
        connect += first_flight(outg.read())
    s.sendall(connect)
    head = b""
    while b"\r\n\r\n" not in head:
        try:
            b = s.recv(1)
        except OSError as e:
            print("CLOSED: no answer to CONNECT: %s" % e)
            return 1
        if not b:
            print("CLOSED: no answer to CONNECT")
            return 1
        head += b
    t200 = time.monotonic()
    if not head.startswith(b"HTTP/1.1 200"):
        lines = head.decode("latin-1").split("\r\n")
        print("CLOSED: CONNECT answered " + lines[0])
        for ln in lines[1:]:
            if ln.lower().startswith("x-postern-reason:"):
                print("reason=" + ln.split(":", 1)[1].strip())
        return 1

    def drip(data):
        s.sendall(data[:a.drip])
        for j in range(a.drip, len(data)):
            left = t200 + a.drip_for - time.monotonic()
            if left <= 0:
                break
            r, _, _ = select.select([s], [], [], min(1.0, left))
            if r:
                try:
                    got = s.recv(65536)
                except OSError:
                    got = b""
                if not got:
                    print("CLOSED after %.1f s" % (time.monotonic() - t200))
                    sys.exit(1)
            try:
                s.sendall(data[j:j + 1])
            except OSError:
                print("CLOSED after %.1f s" % (time.monotonic() - t200))
                sys.exit(1)
        print("OPEN after %.1f s" % (time.monotonic() - t200))
        sys.exit(0)

    def flush():
        nonlocal first
        data = outg.read()
        if not data:
            return
        if first:
            first = False
            data = first_flight(data)
            if a.drip >= 0:
                drip(data)
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
