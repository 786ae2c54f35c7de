#!/usr/bin/env python3
"""githttps.py: git's smart HTTP over TLS for the termination tests.

    githttps.py ADDR PORT CERT KEY ROOT LOG EXPECT

Serves the repositories under ROOT with git http-backend (CGI, RFC 3875)
on ADDR:PORT in TLS with CERT/KEY, one request per connection.  Every
request's line and Authorization header go to LOG (one JSON line each).
A request whose Authorization is not EXPECT ("Basic ...") is answered 401,
so a clone or a push works only when the proxy put the credential on; an
authorised request runs as user x-access-token (REMOTE_USER), which lets
http-backend take a push (receive-pack).
"""
import http.server
import json
import os
import ssl
import subprocess
import sys


def read_body(h):
    if h.headers.get("Transfer-Encoding", "").lower() == "chunked":
        out = b""
        while True:
            line = h.rfile.readline().strip()
            size = int(line.split(b";")[0], 16)
            if size == 0:
                while h.rfile.readline().strip():
                    pass
                return out
            out += h.rfile.read(size)
            h.rfile.readline()
    n = int(h.headers.get("Content-Length", "0") or "0")
    return h.rfile.read(n) if n else b""


def http_backend(h, root, body):
    """Answer request H (its BODY read) with git http-backend over ROOT,
    as user x-access-token (so that a push is taken)."""
    path, _, query = h.path.partition("?")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "GIT_PROJECT_ROOT": root, "GIT_HTTP_EXPORT_ALL": "1",
        "REQUEST_METHOD": h.command, "PATH_INFO": path, "QUERY_STRING": query,
        "CONTENT_TYPE": h.headers.get("Content-Type", ""),
        "CONTENT_LENGTH": str(len(body)), "REMOTE_ADDR": h.client_address[0],
        "GIT_PROTOCOL": h.headers.get("Git-Protocol", ""),
        "REMOTE_USER": "x-access-token",
    }
    p = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True)
    head, sep, out = p.stdout.partition(b"\r\n\r\n")
    if not sep:
        head, sep, out = p.stdout.partition(b"\n\n")
    status = 200
    hdrs = []
    for l in head.decode("latin-1").splitlines():
        k, _, v = l.partition(":")
        if k.lower() == "status":
            status = int(v.strip().split()[0])
        elif k:
            hdrs.append((k, v.strip()))
    h.send_response(status)
    for k, v in hdrs:
        h.send_header(k, v)
    h.send_header("Content-Length", str(len(out)))
    h.end_headers()
    h.wfile.write(out)


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def handle_any(self):
        auth = self.headers.get("Authorization", "")
        with open(LOG, "a") as f:
            f.write(json.dumps({"line": self.requestline, "authorization": auth,
                                "host": self.headers.get("Host", "")}) + "\n")
        body = read_body(self)
        if auth != EXPECT:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        http_backend(self, ROOT, body)

    do_GET = handle_any
    do_POST = handle_any


if __name__ == "__main__":
    addr, port, cert, key, ROOT, LOG, EXPECT = sys.argv[1:8]
    srv = http.server.HTTPServer((addr, int(port)), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    srv.serve_forever()
