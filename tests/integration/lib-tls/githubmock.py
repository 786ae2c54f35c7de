#!/usr/bin/env python3
"""githubmock.py: GitHub's API for an App, or git's smart HTTP behind it.

    githubmock.py api ADDR PORT CERT KEY DIR PUBKEY APP_ID INSTALLATION
    githubmock.py git ADDR PORT CERT KEY DIR ROOT

The API (TLS with CERT/KEY) takes POST /app/installations/INSTALLATION/
access_tokens only with "Authorization: Bearer JWT", a JWT signed RS256
with the app's key (checked with PUBKEY by python3-jwt: the signature,
iss = APP_ID, exp - iat at most 10 minutes), and answers 201 with a new
token ("ghs_..." and expires_at, an hour on), kept in DIR/tokens.json with
the repositories and permissions asked.  DELETE /installation/token with
"Authorization: Bearer TOKEN" revokes TOKEN (204).  GET of anything else
answers 200 to a live token, else 401.  Every request goes to DIR/api.log
(one JSON line: method, path, body, jwt_ok, token).

The git server serves ROOT's repositories (ROOT/OWNER/REPO.git) with git
http-backend, and only to "Basic x-access-token:TOKEN" for a live TOKEN
whose repositories hold REPO; each request goes to DIR/git.log.
"""
import base64
import datetime
import http.server
import json
import os
import secrets
import ssl
import sys
import threading
import time

import jwt

# Beside this file: the request body reader and git http-backend.
from githttps import http_backend, read_body

lock = threading.Lock()


def load(d):
    try:
        with open(os.path.join(d, "tokens.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def save(d, v):
    tmp = os.path.join(d, "tokens.json.tmp")
    with open(tmp, "w") as f:
        json.dump(v, f)
    os.rename(tmp, os.path.join(d, "tokens.json"))


def log(d, name, obj):
    with open(os.path.join(d, name), "a") as f:
        f.write(json.dumps(obj) + "\n")


class Api(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, code, obj=None):
        body = json.dumps(obj).encode() if obj is not None else b""
        self.send_response(code)
        if body:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self):
        cfg = self.server.cfg
        d = cfg["dir"]
        body = read_body(self)
        auth = self.headers.get("Authorization", "")
        bearer = auth[7:] if auth.startswith("Bearer ") else ""
        entry = {"method": self.command, "path": self.path, "body": body.decode("latin-1"),
                 "authorization": auth}
        want = "/app/installations/%s/access_tokens" % cfg["installation"]
        if self.command == "POST" and self.path == want:
            try:
                claims = jwt.decode(bearer, cfg["pubkey"], algorithms=["RS256"],
                                    options={"require": ["iat", "exp", "iss"]}, leeway=5)
                ok = str(claims["iss"]) == cfg["app_id"] and claims["exp"] - claims["iat"] <= 600
            except jwt.PyJWTError as e:
                entry["jwt_error"] = str(e)
                ok = False
            entry["jwt_ok"] = ok
            if not ok:
                log(d, "api.log", entry)
                return self.answer(401, {"message": "A JSON web token could not be decoded"})
            asked = json.loads(body or b"{}")
            token = "ghs_" + secrets.token_hex(18)
            exp = datetime.datetime.utcnow() + datetime.timedelta(hours=1)
            with lock:
                t = load(d)
                t[token] = {"repositories": asked.get("repositories"),
                            "permissions": asked.get("permissions")}
                save(d, t)
            with open(os.path.join(d, "issued"), "a") as f:
                f.write(token + "\n")
            entry["token"] = token
            log(d, "api.log", entry)
            return self.answer(201, {"token": token, "expires_at": exp.strftime("%Y-%m-%dT%H:%M:%SZ"),
                                     "permissions": asked.get("permissions", {}),
                                     "repository_selection": "selected"})
        with lock:
            t = load(d)
            live = bearer in t
            if self.command == "DELETE" and self.path == "/installation/token" and live:
                del t[bearer]
                save(d, t)
                entry["revoked"] = bearer
                log(d, "api.log", entry)
                return self.answer(204)
        entry["live"] = live
        log(d, "api.log", entry)
        if live:
            return self.answer(200, {"ok": True, "path": self.path})
        self.answer(401, {"message": "Bad credentials"})

    do_GET = handle_any
    do_POST = handle_any
    do_DELETE = handle_any
    do_PATCH = handle_any


class Git(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def handle_any(self):
        d, root = self.server.cfg["dir"], self.server.cfg["root"]
        auth = self.headers.get("Authorization", "")
        body = read_body(self)
        path = self.path.partition("?")[0]
        parts = path.split("/")
        repo = parts[2][:-4] if len(parts) > 2 and parts[2].endswith(".git") else ""
        token = ""
        if auth.startswith("Basic "):
            user, _, token = base64.b64decode(auth[6:]).decode().partition(":")
            if user != "x-access-token":
                token = ""
        with lock:
            t = load(d)
        ok = token in t and repo in (t[token]["repositories"] or [])
        log(d, "git.log", {"line": self.requestline, "authorization": auth, "ok": ok})
        if not ok:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        http_backend(self, root, body)

    do_GET = handle_any
    do_POST = handle_any


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


def main():
    kind, addr, port, cert, key, d = sys.argv[1:7]
    cfg = {"dir": d}
    if kind == "api":
        with open(sys.argv[7]) as f:
            cfg["pubkey"] = f.read()
        cfg["app_id"], cfg["installation"] = sys.argv[8], sys.argv[9]
    else:
        cfg["root"] = sys.argv[7]
    with open(os.path.join(d, kind + ".pid"), "w") as f:
        f.write("%d\n" % os.getpid())
    srv = Server((addr, int(port)), Api if kind == "api" else Git)
    srv.cfg = cfg
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
