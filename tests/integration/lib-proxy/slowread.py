#!/usr/bin/env python3
"""slowread.py HOST PORT TARGET PATH RATE SECONDS: through a CONNECT tunnel
to TARGET (plain HTTP upstream), ask for PATH and read the answer at RATE
bytes per second for SECONDS, then print the number of bytes read."""
import socket
import sys
import time

host, port, target, path = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
rate, secs = int(sys.argv[5]), float(sys.argv[6])
s = socket.create_connection((host, port))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (path, target.split(":")[0])).encode())
got = 0
end = time.time() + secs
step = max(1, rate // 20)
while time.time() < end:
    b = s.recv(step)
    if not b:
        break
    got += len(b)
    time.sleep(0.05)
print(got, flush=True)
s.close()
