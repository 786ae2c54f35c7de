# mock-anthropic-tool.py ADDR PORT CERT KEY LOG READY COMMAND...: a stand-in
# for the Anthropic Messages API over HTTPS that drives `claude -p` through
# tool calls.  A POST /v1/messages that offers the Bash tool is answered
# with a call of it: the first with COMMAND 1, the next (the request that
# carries the first tool_result) with COMMAND 2, and so on; once every
# COMMAND has its result, with the text "done".  A request without the
# Bash tool (Claude Code's side calls) gets plain text.  LOG gets one JSON
# line per request: method, path, and the text of each tool_result the
# request carries, in order.  READY is created once the socket listens.
# Standard library only.
import json
import socket
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

addr, port, cert, key, log_path, ready = sys.argv[1:7]
commands = sys.argv[7:]
lock = threading.Lock()


def log(entry):
    with lock, open(log_path, "a") as f:
        f.write(json.dumps(entry) + "\n")


def text_of(content):
    """The text of a tool_result's content: a string or a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def tool_results(req):
    out = []
    for m in req.get("messages", []) if isinstance(req, dict) else []:
        if not isinstance(m, dict) or not isinstance(m.get("content"), list):
            continue
        for b in m["content"]:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                out.append(text_of(b.get("content")))
    return out


def sse(events):
    return "".join("event: %s\ndata: %s\n\n" % (ev["type"], json.dumps(ev))
                   for ev in events).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, ctype, body):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("request-id", "req_mock")
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n > 0 else b""
        try:
            req = json.loads(raw) if raw else {}
        except ValueError:
            req = {}
        if not isinstance(req, dict):
            req = {}
        path = self.path.split("?", 1)[0]
        tools = [t.get("name") for t in req.get("tools", []) if isinstance(t, dict)]
        results = tool_results(req)
        log({"method": self.command, "path": self.path, "bash": "Bash" in tools,
             "tool_results": results})
        if self.command == "POST" and path == "/v1/messages/count_tokens":
            self.reply(200, "application/json", b'{"input_tokens": 12}')
            return
        if self.command != "POST" or path != "/v1/messages":
            self.reply(404, "application/json",
                       b'{"type":"error","error":{"type":"not_found_error","message":"mock"}}')
            return
        usage = {"input_tokens": 12, "output_tokens": 6,
                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        msg = {"id": "msg_mock%d" % len(results), "type": "message", "role": "assistant",
               "model": req.get("model", "claude-mock"), "content": [],
               "stop_reason": None, "stop_sequence": None, "usage": usage}
        if "Bash" in tools and len(results) < len(commands):
            block = {"type": "tool_use", "id": "toolu_mock%d" % len(results), "name": "Bash",
                     "input": {"command": commands[len(results)],
                               "description": "step %d" % (len(results) + 1)}}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": "done"}
            stop = "end_turn"
        if not req.get("stream"):
            msg["content"] = [block]
            msg["stop_reason"] = stop
            self.reply(200, "application/json", json.dumps(msg).encode())
            return
        if block["type"] == "tool_use":
            start = dict(block, input={})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        body = sse([
            {"type": "message_start", "message": msg},
            {"type": "content_block_start", "index": 0, "content_block": start},
            {"type": "content_block_delta", "index": 0, "delta": delta},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
             "usage": {"output_tokens": 6}},
            {"type": "message_stop"},
        ])
        self.reply(200, "text/event-stream", body)

    do_GET = do_POST = do_PUT = do_HEAD = handle_any


class Server(ThreadingHTTPServer):
    daemon_threads = True
    address_family = socket.AF_INET


ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
srv = Server((addr, int(port)), Handler)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
open(ready, "w").close()
srv.serve_forever()
