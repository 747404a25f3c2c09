#!/usr/bin/env python3
"""Hostile server for the hardening tests (issue 9): redirects, endless bodies and a fake OCI
registry that lies about sizes. Used by tests/integration/hardening_net.rs; not part of the
product.

    hostile_server.py ROOT [--cert CERT --key KEY]

Paths:  /<file>                            the file under ROOT
        /redirect/<code>?to=<url>          answers <code> with Location: <url>
        /endless/<name>                    200 without a length, then bytes until the client leaves
        /slow/<name>                       200 with a length, then one byte a second
        /v2/                               200 (a registry without auth)
        /v2/endless-manifest/<r>/manifests/<ref>   200, then an endless manifest
        /v2/<mode>/<r>/manifests/<ref>     a manifest with one catalog layer whose blob is:
            endless-blob     declared 100 bytes, sent without a length and without end
            lying-blob       declared 100 bytes, sent as 16 MiB with that Content-Length
            huge-blob        declared 1 TiB (nothing is sent)
            index-bomb       (manifest) an image index, for `catalog verify` of images
        /v2/to-localhost/<path>            307 to http://localhost:<port>/v2/files/<path>
        /v2/files/<path>                   the file ROOT/registry/<path> (manifests and blobs)
The chosen port is printed on stdout.
"""
import http.server, json, os, ssl, sys, time

import loopback  # beside this file

root = sys.argv[1]
args = sys.argv[2:]
opt = loopback.options(args)
CHUNK = b"a: b\n" * 13108  # 64 KiB of harmless YAML

LAYER = "application/vnd.cncf.kubernetes.krm-func-catalog.layer.v1+yaml"
EMPTY = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
BLOB = "sha256:" + "a" * 64


def manifest(size):
    return json.dumps({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.empty.v1+json", "digest": EMPTY, "size": 2},
        "layers": [{"mediaType": LAYER, "digest": BLOB, "size": size}],
    }).encode()


class Handler(http.server.BaseHTTPRequestHandler):
    # HTTP/1.0: a body without Content-Length ends when the connection closes, i.e. never.
    protocol_version = "HTTP/1.0"

    def log_message(self, *a):
        pass

    def do_GET(self):
        path, _, query = self.path.partition("?")
        parts = path.lstrip("/").split("/")
        try:
            if parts[0] == "redirect":
                to = dict(p.split("=", 1) for p in query.split("&") if "=" in p).get("to", "/")
                self.send_response(int(parts[1]))
                self.send_header("Location", to)
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif parts[0] == "slow":
                # A declared length, then one byte a second: slower than any client timeout.
                self.send_response(200)
                self.send_header("Content-Length", "1000000")
                self.end_headers()
                while True:
                    self.wfile.write(b"a")
                    self.wfile.flush()
                    time.sleep(1)
            elif parts[0] == "endless":
                self.endless("application/octet-stream")
            elif parts[0] == "v2":
                self.registry(parts[1:])
            else:
                file = os.path.join(root, *parts)
                if os.path.isfile(file):
                    self.reply(200, open(file, "rb").read())
                else:
                    self.reply(404, b"not found\n")
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            pass

    def registry(self, parts):
        if parts == [""] or parts == []:
            return self.reply(200, b"{}", "application/json")
        mode = parts[0]
        rest = "/".join(parts[1:])
        if mode == "to-localhost":
            # Same server, another origin: what a trusted registry's redirect would reach.
            port = self.server.server_address[1]
            self.send_response(307)
            self.send_header("Location", "http://localhost:%d/v2/files/%s" % (port, rest))
            self.send_header("Content-Length", "0")
            return self.end_headers()
        if mode == "files":
            file = os.path.join(root, "registry", *parts[1:])
            if os.path.isfile(file):
                return self.reply(200, open(file, "rb").read(), "application/vnd.oci.image.manifest.v1+json")
        if "manifests" in parts:
            if mode == "endless-manifest":
                return self.endless("application/vnd.oci.image.manifest.v1+json")
            size = 1 << 40 if mode == "huge-blob" else 100
            return self.reply(200, manifest(size), "application/vnd.oci.image.manifest.v1+json")
        if "blobs" in parts:
            if mode == "endless-blob":
                return self.endless("application/octet-stream")
            if mode == "lying-blob":
                self.send_response(200)
                self.send_header("Content-Length", str(16 << 20))
                self.end_headers()
                for _ in range(256):
                    self.wfile.write(CHUNK)
                return
        self.reply(404, b'{"errors":[{"code":"BLOB_UNKNOWN"}]}', "application/json")

    def endless(self, content_type):
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.end_headers()
        while True:
            self.wfile.write(CHUNK)

    def reply(self, code, body, content_type="application/octet-stream"):
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


loopback.serve(Handler, opt)
