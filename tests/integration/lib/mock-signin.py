# mock-signin.py ADDR PORT CERT KEY LOG READY: a stand-in for Codex's device
# sign-in at auth.openai.com over HTTPS, enough for `codex login
# --device-auth`: a code (POST /api/accounts/deviceauth/usercode), the grant
# (POST /api/accounts/deviceauth/token), then tokens (POST /oauth/token: an
# unsigned id_token naming a ChatGPT account).  Anything else, and any other
# Host, is a 404.  Every request is logged to LOG as one JSON line (host,
# method, path).  READY is created once the socket listens.  Standard
# library only.
import base64, json, ssl, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
addr, port, cert, key, log, ready = sys.argv[1:7]
def b64(d):
    return base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()
claims = {"email": "t@example.test", "exp": int(time.time()) + 86400,
    "https://api.openai.com/auth": {"chatgpt_account_id": "acc_1",
        "chatgpt_plan_type": "plus", "chatgpt_user_id": "u1", "user_id": "u1"}}
jwt = b64({"alg": "none", "typ": "JWT"}) + "." + b64(claims) + ".c2ln"
answers = {
    "/api/accounts/deviceauth/usercode": {"device_auth_id": "da_1", "user_code": "ABCD-EFGH", "interval": "1"},
    "/api/accounts/deviceauth/token": {"authorization_code": "ac_1", "code_challenge": "cc", "code_verifier": "cv"},
    "/oauth/token": {"id_token": jwt, "access_token": jwt, "refresh_token": "rt_1", "expires_in": 3600},
}
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        n = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(n)
        path = self.path.split("?")[0]
        with open(log, "a") as f:
            f.write(json.dumps({"host": self.headers.get("Host"), "method": self.command, "path": path}) + "\n")
        r = answers.get(path) if self.headers.get("Host") == "auth.openai.com" else None
        d = json.dumps(r if r is not None else {}).encode()
        self.send_response(200 if r is not None else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(d)))
        self.end_headers()
        self.wfile.write(d)
    do_POST = do_GET
    def log_message(self, *a):
        pass
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
s = ThreadingHTTPServer((addr, int(port)), H)
s.socket = ctx.wrap_socket(s.socket, server_side=True)
open(ready, "w").close()
s.serve_forever()
