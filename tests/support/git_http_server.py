#!/usr/bin/env python3
"""Smart HTTP Git server for the Git catalog tests: `git http-backend` (Debian's `git` package)
run as a CGI program per request. Used by tests/integration/git.rs; not part of the product.

    git_http_server.py ROOT LOG [--cert CERT --key KEY]

Paths:  /<repo>/...            served by git http-backend from the repositories under ROOT
        /moved/<repo>/...      301 to /<repo>/... (a redirect hop)
        /private/<repo>/...    /<repo>/... for Basic x-access-token:TOKEN only, else 401
        /slow/<repo>/...       /<repo>/..., a POST's answer (the pack) in 20 pieces over two seconds
Every request (method and path, then ` [Authorization]` when the request carried that header) is
appended to LOG. The chosen port is printed on stdout.
"""
import base64, http.server, os, subprocess, sys, threading, time

import loopback  # beside this file

root, log = sys.argv[1], sys.argv[2]
opt = loopback.options(sys.argv[3:])
lock = threading.Lock()
BACKEND = "/usr/lib/git-core/git-http-backend"
TOKEN = "s3cret-test-token"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        self.serve()

    def do_POST(self):
        self.serve()

    def serve(self):
        with lock, open(log, "a") as f:
            auth = " [Authorization]" if self.headers.get("Authorization") is not None else ""
            f.write(self.command + " " + self.path + auth + "\n")
        path, _, query = self.path.partition("?")
        if path.startswith("/moved/"):
            self.send_response(301)
            self.send_header("Location", self.path[len("/moved"):])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if path.startswith("/private/"):
            wanted = "Basic " + base64.b64encode(("x-access-token:" + TOKEN).encode()).decode()
            if self.headers.get("Authorization") != wanted:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="git"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            path = path[len("/private"):]
        slow = path.startswith("/slow/") and self.command == "POST"
        if path.startswith("/slow/"):
            path = path[len("/slow"):]
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": root,
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": "127.0.0.1",
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
        }
        if self.headers.get("Content-Encoding") == "gzip":
            env["HTTP_CONTENT_ENCODING"] = "gzip"
        out = subprocess.run([BACKEND], input=body, env=env, capture_output=True).stdout
        sep = b"\r\n\r\n" if b"\r\n\r\n" in out else b"\n\n"
        head, _, payload = out.partition(sep)
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.strip().split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if not slow:
            self.wfile.write(payload)
            return
        step = max(1, -(-len(payload) // 20))
        for at in range(0, len(payload), step):
            self.wfile.write(payload[at:at + step])
            self.wfile.flush()
            time.sleep(0.1)


loopback.serve(Handler, opt)
