"""What the test servers share: a threaded HTTP(S) server on 127.0.0.1 at a free port, the
port printed on stdout for the test to read, and the `--flag value` options. Not part of the
product."""
import http.server, socketserver, ssl, sys


def options(args):
    """`--flag value` pairs as a dict."""
    return {args[i]: args[i + 1] for i in range(0, len(args) - 1, 2)}


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def serve(handler, opt):
    """Serve `handler` on a free loopback port (TLS with `--cert`/`--key`) until killed."""
    server = Server(("127.0.0.1", 0), handler)
    if "--cert" in opt:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(opt["--cert"], opt["--key"])
        server.socket = context.wrap_socket(server.socket, server_side=True)
    print(server.server_address[1], flush=True)
    server.serve_forever()
