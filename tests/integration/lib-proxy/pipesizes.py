#!/usr/bin/env python3
"""pipesizes.py PID STOPFILE: until STOPFILE exists, look at the pipes
process PID holds (each through its /proc/PID/fd link: the same pipe, so
F_GETPIPE_SZ tells its size) and print, at the end, the most pipes of at
least 1 MiB and the most pipes it held at one moment, and the samples:
"big=N pipes=M samples=K"."""
import fcntl
import os
import sys
import time

F_GETPIPE_SZ = 1032
pid, stop = sys.argv[1], sys.argv[2]
fddir = "/proc/%s/fd" % pid
most_big = most = samples = 0
while not os.path.exists(stop):
    seen = {}
    try:
        names = os.listdir(fddir)
    except OSError:
        break
    for name in names:
        path = os.path.join(fddir, name)
        try:
            link = os.readlink(path)
        except OSError:
            continue
        if not link.startswith("pipe:") or link in seen:
            continue
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            seen[link] = fcntl.fcntl(fd, F_GETPIPE_SZ)
        except OSError:
            pass
        finally:
            os.close(fd)
    samples += 1
    most = max(most, len(seen))
    most_big = max(most_big, sum(1 for v in seen.values() if v >= 1 << 20))
    time.sleep(0.01)
print("big=%d pipes=%d samples=%d" % (most_big, most, samples), flush=True)
