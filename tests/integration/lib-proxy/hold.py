#!/usr/bin/env python3
"""hold.py: open N CONNECT tunnels at once, hold the ones that open, then
prove each still carries bytes.

    hold.py ADDR TARGET N OUT_FILE GO_FILE [--timeout S] [--uid UID]

ADDR is HOST:PORT or unix:PATH (a UNIX listener, no relay).  With --uid,
the process first becomes UID (and gid UID), so that the proxy's
SO_PEERCRED sees that uid.  Sends CONNECT TARGET on N connections and
waits (at most 5 s) for each answer.  Then writes one line per connection
to OUT_FILE ("200", "503 REASON", or "none" when no answer came), then the
line "ready", and closes the refused ones.  Then it waits (at most
--timeout seconds) for GO_FILE to exist, sends a distinct line through each
open tunnel (TARGET is an echo service) and appends "echoed M of K".  Exits
0 when every open tunnel echoed.
"""
import os
import selectors
import socket
import sys
import time


def connect(addr):
    if addr.startswith("unix:"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(addr[5:])
        return s
    host, port = addr.rsplit(":", 1)
    return socket.create_connection((host, int(port)))


def main():
    addr, target, n, out, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
    opts = sys.argv[6:]
    limit = float(opts[opts.index("--timeout") + 1]) if "--timeout" in opts else 60.0
    if "--uid" in opts:
        uid = int(opts[opts.index("--uid") + 1])
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    deadline = time.time() + limit
    sel = selectors.DefaultSelector()
    socks, answers = [], []
    req = ("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode()
    for i in range(n):
        s = connect(addr)
        s.sendall(req)
        s.setblocking(False)
        socks.append(s)
        answers.append(b"")
        sel.register(s, selectors.EVENT_READ, i)
    pending = n
    answer_by = time.time() + 5
    while pending and time.time() < answer_by:
        for key, _ in sel.select(timeout=0.5):
            i = key.data
            try:
                b = key.fileobj.recv(4096)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                b = b""
            answers[i] += b
            if not b or b"\r\n\r\n" in answers[i]:
                sel.unregister(key.fileobj)
                pending -= 1
    lines, open_ = [], []
    for i, a in enumerate(answers):
        head = a.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
        status = head[0].split(" ")[1] if head[0].startswith("HTTP/1.") and " " in head[0] else ""
        reason = ""
        for h in head[1:]:
            if h.lower().startswith("x-postern-reason:"):
                reason = h.split(":", 1)[1].strip()
        if status == "200":
            lines.append("200")
            open_.append(socks[i])
        elif status:
            lines.append(("%s %s" % (status, reason)).strip())
            socks[i].close()
        else:
            lines.append("none")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\nready\n")
    while not os.path.exists(go) and time.time() < deadline:
        time.sleep(0.05)
    echoed = 0
    for i, s in enumerate(open_):
        s.setblocking(True)
        s.settimeout(5)
        line = ("tunnel %d\n" % i).encode()
        try:
            s.sendall(line)
            got = b""
            while len(got) < len(line):
                b = s.recv(4096)
                if not b:
                    break
                got += b
            if got == line:
                echoed += 1
        except OSError:
            pass
    with open(out, "a") as f:
        f.write("echoed %d of %d\n" % (echoed, len(open_)))
    for s in socks:
        s.close()
    return 0 if echoed == len(open_) else 1


if __name__ == "__main__":
    sys.exit(main())
