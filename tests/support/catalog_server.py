#!/usr/bin/env python3
"""Test server for remote catalogs: serves files over HTTPS (or HTTP), injects failures, and
counts requests. Used by tests/integration/remote.rs; not part of the product.

    catalog_server.py ROOT LOG [--cert CERT --key KEY] [--proxy HOST:PORT]

Paths:  /<file>                       the file under ROOT
        /fail/<n>/<key>/<file>         HTTP 503 for the first n requests with that key, then the file
        /hang/<file>                   never answers
        /truncate/<file>               announces the full length, sends half, closes
        /slow/<file>                   sends the file in 20 pieces over about two seconds
        /v2/...                        (with --proxy) forwarded to a registry; the first
                                       --fail-manifests N manifest requests answer 503
Every request path is appended to LOG. The chosen port is printed on stdout.
"""
import http.server, os, sys, threading, time, urllib.request, urllib.error

import loopback  # beside this file

root, log = sys.argv[1], sys.argv[2]
args = sys.argv[3:]
opt = loopback.options(args)
failures = {}
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def record(self):
        with lock, open(log, "a") as f:
            f.write(self.command + " " + self.path + "\n")

    def do_HEAD(self):
        self.handle_request(head=True)

    def do_GET(self):
        self.handle_request(head=False)

    def handle_request(self, head):
        self.record()
        path = self.path
        parts = path.lstrip("/").split("/")
        if parts[0] == "fail" and len(parts) > 3:
            n, key = int(parts[1]), parts[2]
            with lock:
                seen = failures.get(key, 0)
                failures[key] = seen + 1
            if seen < n:
                return self.reply(503, b"try again\n", head)
            path = "/" + "/".join(parts[3:])
            parts = path.lstrip("/").split("/")
        if parts[0] == "hang":
            time.sleep(3600)
            return
        if parts[0] == "v2" and "--proxy" in opt:
            if "/manifests/" in path:
                with lock:
                    seen = failures.get("manifests", 0)
                    failures["manifests"] = seen + 1
                if seen < int(opt.get("--fail-manifests", "0")):
                    return self.reply(503, b"registry overloaded\n", head)
            return self.proxy(path, head)
        truncate = parts[0] == "truncate"
        slow = parts[0] == "slow"
        if truncate or slow:
            parts = parts[1:]
        file = os.path.join(root, *parts)
        if not os.path.isfile(file):
            return self.reply(404, b"not found\n", head)
        data = open(file, "rb").read()
        if truncate:
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        if slow and not head:
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            step = max(1, len(data) // 20 + 1)
            for i in range(0, len(data), step):
                self.wfile.write(data[i : i + step])
                self.wfile.flush()
                time.sleep(0.1)
            return
        self.reply(200, data, head)

    def proxy(self, path, head):
        req = urllib.request.Request("http://" + opt["--proxy"] + path, method="HEAD" if head else "GET")
        for k in ("Accept", "Authorization"):
            if self.headers.get(k):
                req.add_header(k, self.headers.get(k))
        try:
            with urllib.request.urlopen(req) as r:
                body = r.read()
                self.send_response(r.status)
                for k, v in r.getheaders():
                    if k.lower() not in ("content-length", "connection", "transfer-encoding"):
                        self.send_header(k, v)
        except urllib.error.HTTPError as e:
            body = e.read()
            self.send_response(e.code)
            for k, v in e.headers.items():
                if k.lower() not in ("content-length", "connection", "transfer-encoding"):
                    self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def reply(self, code, body, head):
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)


loopback.serve(Handler, opt)
