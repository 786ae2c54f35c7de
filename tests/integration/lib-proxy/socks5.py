#!/usr/bin/env python3
"""socks5.py: a raw SOCKS5 client (RFC 1928), byte by byte when asked.

    socks5.py HOST PORT [--methods HEX] [--cmd N] [--ver N] [--atyp name|v4|v6|N]
              [--target T] [--tport P] [--split] [--delay S] [--send TEXT]
              [--greeting-only] [--timeout S]

Sends the greeting (VER 5, the METHODS given, default 00), reads the
server's choice, and prints "method=XX"; unless the choice is FF or
--greeting-only, sends the request (VER --ver, CMD --cmd, ATYP, DST.ADDR
--target, DST.PORT --tport) and prints "rep=XX" with the reply code; on
rep=00 sends --send (if any) and prints what comes back as "data=...".
With --split every byte goes out alone, --delay seconds apart.  Prints
"closed" when the server closes before a whole answer, "timeout" when it
sends nothing for --timeout seconds.  Exit status 0.
"""
import argparse
import ipaddress
import socket
import sys
import time


def send(s, data, split, delay):
    if not split:
        s.sendall(data)
        return
    for i in range(len(data)):
        s.sendall(data[i:i + 1])
        time.sleep(delay)


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        try:
            b = s.recv(n - len(buf))
        except socket.timeout:
            return None, "timeout"
        except ConnectionResetError:
            return None, "closed"
        if not b:
            return None, "closed"
        buf += b
    return buf, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("--methods", default="00")
    ap.add_argument("--cmd", type=int, default=1)
    ap.add_argument("--ver", type=int, default=5)
    ap.add_argument("--atyp", default="name")
    ap.add_argument("--target", default="allowed.test")
    ap.add_argument("--tport", type=int, default=7)
    ap.add_argument("--split", action="store_true")
    ap.add_argument("--delay", type=float, default=0.02)
    ap.add_argument("--send", default=None)
    ap.add_argument("--greeting-only", action="store_true")
    ap.add_argument("--timeout", type=float, default=5.0)
    a = ap.parse_args()
    s = socket.create_connection((a.host, a.port), timeout=a.timeout)
    methods = bytes.fromhex(a.methods)
    send(s, bytes([5, len(methods)]) + methods, a.split, a.delay)
    if a.greeting_only:
        r, why = recv_exact(s, 2)
        print(why if r is None else "method=%02x" % r[1])
        return 0
    r, why = recv_exact(s, 2)
    if r is None:
        print(why)
        return 0
    print("method=%02x" % r[1])
    if r[1] == 0xFF:
        return 0
    if a.atyp == "name":
        t = a.target.encode()
        addr = bytes([3, len(t)]) + t
    elif a.atyp == "v4":
        addr = bytes([1]) + ipaddress.IPv4Address(a.target).packed
    elif a.atyp == "v6":
        addr = bytes([4]) + ipaddress.IPv6Address(a.target).packed
    else:
        addr = bytes([int(a.atyp)]) + a.target.encode()
    req = bytes([a.ver, a.cmd, 0]) + addr + a.tport.to_bytes(2, "big")
    send(s, req, a.split, a.delay)
    r, why = recv_exact(s, 10)
    if r is None:
        print(why)
        return 0
    print("rep=%02x" % r[1])
    if r[1] == 0 and a.send is not None:
        s.sendall(a.send.encode())
        s.shutdown(socket.SHUT_WR)
        data = b""
        while True:
            try:
                b = s.recv(4096)
            except socket.timeout:
                break
            if not b:
                break
            data += b
        print("data=" + data.decode(errors="replace").strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
