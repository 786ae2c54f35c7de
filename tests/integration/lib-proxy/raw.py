#!/usr/bin/env python3
"""raw.py: send raw bytes to a TCP server and print what comes back.

    raw.py HOST PORT [--split N] [--delay S] [--shut] [--timeout S] < request

Sends standard input (in pieces of N bytes with S seconds between them when
--split is given) and half-closes with --shut, while it reads the answer
until EOF or until --timeout seconds pass without a byte once the request
is out, and writes the bytes received to
standard output.  Exit status 0 on EOF, 3 on timeout, 4 when the peer
reset the connection.
"""
import argparse
import socket
import threading
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("--split", type=int, default=0)
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--shut", action="store_true")
    ap.add_argument("--timeout", type=float, default=5.0)
    a = ap.parse_args()
    data = sys.stdin.buffer.read()
    s = socket.create_connection((a.host, a.port), timeout=a.timeout)

    def send():
        try:
            if a.split > 0:
                for i in range(0, len(data), a.split):
                    s.sendall(data[i:i + a.split])
                    if a.delay:
                        time.sleep(a.delay)
            else:
                s.sendall(data)
            if a.shut:
                s.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError, socket.timeout, OSError):
            pass

    # Sent while the answer is read: a request bigger than what the
    # socket buffers on the way hold (an echo of megabytes) would
    # otherwise wait for a reader that is not reading yet.
    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    out = bytearray()
    rc = 0
    while True:
        try:
            b = s.recv(65536)
        except socket.timeout:
            if sender.is_alive():
                # The timeout counts from the end of the request.
                continue
            rc = 3
            break
        except ConnectionResetError:
            rc = 4
            break
        if not b:
            break
        out += b
    sys.stdout.buffer.write(bytes(out))
    sys.stdout.flush()
    return rc


if __name__ == "__main__":
    sys.exit(main())
