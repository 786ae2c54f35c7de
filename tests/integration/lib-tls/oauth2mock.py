#!/usr/bin/env python3
"""oauth2mock.py: an OAuth 2 token endpoint, or an API that takes its tokens.

    oauth2mock.py token ADDR PORT CERT KEY DIR CLIENT_ID CLIENT_SECRET REFRESH LIFE
    oauth2mock.py api   ADDR PORT CERT KEY DIR

Both keep their state in DIR so that the API knows what the endpoint
issued.  The token endpoint (POST /token) takes RFC 6749's refresh_token
grant with Basic client authentication: the refresh token must be the
current one (DIR/refresh; REFRESH at first), and each use rotates it (the
old one is refused with invalid_grant from then on).  Each access token is
good for LIFE seconds, or as many as DIR/life.json says (DIR/tokens.json:
token -> expiry).  Every grant is
logged to DIR/token.log (one JSON line: grant, refresh token presented, ok)
and every token issued to DIR/issued (one a line).

The API answers 200 "ok" to a request whose Authorization is "Bearer T"
for a T issued and not expired (GET /echo: that header back), else 401; it logs each request to
DIR/api.log.  POST /revoke-all (sent straight to it, not through the
proxy) makes every token issued so far invalid.
"""
import base64
import http.server
import json
import os
import secrets
import ssl
import sys
import threading
import time
import urllib.parse

lock = threading.Lock()


def load(d, name, default):
    try:
        with open(os.path.join(d, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def save(d, name, value):
    tmp = os.path.join(d, name + ".tmp")
    with open(tmp, "w") as f:
        json.dump(value, f)
    os.rename(tmp, os.path.join(d, name))


def log(d, name, obj):
    with open(os.path.join(d, name), "a") as f:
        f.write(json.dumps(obj) + "\n")


class Token(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        cfg = self.server.cfg
        d = cfg["dir"]
        n = int(self.headers.get("Content-Length", "0") or "0")
        form = urllib.parse.parse_qs(self.rfile.read(n).decode(), keep_blank_values=True)
        want = "Basic " + base64.b64encode(
            (cfg["client_id"] + ":" + cfg["client_secret"]).encode()).decode()
        grant = form.get("grant_type", [""])[0]
        presented = form.get("refresh_token", [""])[0]
        with lock:
            current = load(d, "refresh.json", cfg["refresh"])
            entry = {"grant": grant, "refresh": presented, "path": self.path}
            if self.path != "/token" or self.headers.get("Authorization") != want:
                entry["ok"] = False
                log(d, "token.log", entry)
                return self.answer(401, {"error": "invalid_client"})
            if grant != "refresh_token" or presented != current:
                entry["ok"] = False
                log(d, "token.log", entry)
                return self.answer(400, {"error": "invalid_grant",
                                         "error_description": "the refresh token is not the current one"})
            life = load(d, "life.json", cfg["life"])
            access = "at-" + secrets.token_hex(16)
            rotated = "rt-" + secrets.token_hex(16)
            tokens = load(d, "tokens.json", {})
            tokens[access] = time.time() + life
            save(d, "tokens.json", tokens)
            save(d, "refresh.json", rotated)
            with open(os.path.join(d, "issued"), "a") as f:
                f.write(access + "\n" + rotated + "\n")
            entry["ok"] = True
            log(d, "token.log", entry)
        self.answer(200, {"access_token": access, "token_type": "Bearer",
                          "expires_in": life, "refresh_token": rotated,
                          "scope": form.get("scope", [""])[0]})


class Api(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, code, text):
        body = text.encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        d = self.server.cfg["dir"]
        auth = self.headers.get("Authorization", "")
        with lock:
            tokens = load(d, "tokens.json", {})
            revoked = load(d, "revoked.json", [])
        tok = auth[7:] if auth.startswith("Bearer ") else ""
        good = tok in tokens and tokens[tok] > time.time() and tok not in revoked
        log(d, "api.log", {"path": self.path, "auth": auth, "ok": good})
        if good and self.path == "/echo":
            self.answer(200, "auth=%s\n" % auth)
        elif good:
            self.answer(200, "ok\n")
        else:
            self.answer(401, "unauthorized\n")

    def do_POST(self):
        d = self.server.cfg["dir"]
        n = int(self.headers.get("Content-Length", "0") or "0")
        self.rfile.read(n)
        if self.path == "/revoke-all":
            with lock:
                save(d, "revoked.json", list(load(d, "tokens.json", {}).keys()))
            return self.answer(200, "revoked\n")
        self.answer(404, "no\n")


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


def main():
    kind, addr, port, cert, key, d = sys.argv[1:7]
    cfg = {"dir": d}
    if kind == "token":
        cfg.update(client_id=sys.argv[7], client_secret=sys.argv[8], refresh=sys.argv[9],
                   life=int(sys.argv[10]))
    with open(os.path.join(d, kind + ".pid"), "w") as f:
        f.write("%d\n" % os.getpid())
    srv = Server((addr, int(port)), Token if kind == "token" else Api)
    srv.cfg = cfg
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
