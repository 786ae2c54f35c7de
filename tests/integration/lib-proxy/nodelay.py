#!/usr/bin/env python3
"""nodelay.py PID PORT: look at the TCP sockets of process PID (the proxy)
from outside it, through copies of its descriptors (pidfd_getfd(2), which
needs the right to ptrace PID: root), and print one line

    clients=A/B upstreams=C/D

B connected sockets whose local port is PORT (the clients it accepted),
A of them with TCP_NODELAY; D other connected TCP sockets (its upstreams),
C of them with TCP_NODELAY.  Listening sockets are not counted."""
import ctypes
import os
import socket
import sys

SYS_pidfd_getfd = 438  # the same number on every Linux architecture

pid, port = int(sys.argv[1]), int(sys.argv[2])
libc = ctypes.CDLL(None, use_errno=True)
pidfd = os.pidfd_open(pid)
count = {"clients": [0, 0], "upstreams": [0, 0]}
for name in os.listdir("/proc/%d/fd" % pid):
    try:
        if not os.readlink("/proc/%d/fd/%s" % (pid, name)).startswith("socket:"):
            continue
    except OSError:
        continue
    fd = libc.syscall(SYS_pidfd_getfd, pidfd, int(name), 0)
    if fd < 0:
        continue
    s = socket.socket(fileno=fd)
    try:
        if s.family not in (socket.AF_INET, socket.AF_INET6) or s.type != socket.SOCK_STREAM:
            continue
        try:
            s.getpeername()
        except OSError:
            continue  # a listener, or not connected
        kind = "clients" if s.getsockname()[1] == port else "upstreams"
        count[kind][1] += 1
        if s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY):
            count[kind][0] += 1
    finally:
        s.detach()
        os.close(fd)
print("clients=%d/%d upstreams=%d/%d" % (*count["clients"], *count["upstreams"]))
