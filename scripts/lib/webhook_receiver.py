#!/usr/bin/env python3
"""A partner's webhook endpoint for scripts/demo and bench/webhooks: HTTPS (HTTP/1.1) on 127.0.0.1,
answering every POST with --status, recording each one (its Herald-Event-Id, Herald-Signature and
body) as a JSON line in --log when given, and checking its signature when --secret is given (a bad
one is answered 401 and recorded with "valid": false). Standard library only. Runs until killed.
"""
import argparse
import hashlib
import hmac
import json
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--cert", required=True, help="PEM certificate for 127.0.0.1")
    p.add_argument("--key", required=True)
    p.add_argument("--status", type=int, default=200)
    p.add_argument("--log", help="append one JSON line per request here")
    p.add_argument("--secret", help="check Herald-Signature with this whsec_ secret")
    return p.parse_args()


def valid_signature(secret, header, body, tolerance=300):
    # While a rotated secret's overlap lasts the header carries two v1= (the new secret's first): accept either.
    try:
        parts = [part.split("=", 1) for part in header.split(",") if "=" in part]
        stamp = int(next(value for key, value in parts if key == "t"))
    except (StopIteration, ValueError):
        return False
    expected = hmac.new(secret.encode(), f"{stamp}.".encode() + body, hashlib.sha256).hexdigest()
    signatures = [value for key, value in parts if key == "v1"]
    return abs(time.time() - stamp) <= tolerance and any(hmac.compare_digest(expected, s) for s in signatures)


def main():
    args = parse_args()
    lock = threading.Lock()
    log = open(args.log, "a", buffering=1) if args.log else None

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            valid = True
            if args.secret is not None:
                valid = valid_signature(args.secret, self.headers.get("Herald-Signature", ""), body)
            if log is not None:
                entry = {"eventId": self.headers.get("Herald-Event-Id"), "signature": self.headers.get("Herald-Signature"),
                         "valid": valid, "receivedAt": time.time(), "body": body.decode("utf-8", "replace")}
                with lock:
                    log.write(json.dumps(entry) + "\n")
            status = args.status if valid else 401
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_):
            pass

    # socketserver's listen backlog is 5: a sender opening dozens of connections at once would have some
    # of its SYNs dropped and wait out TCP's retransmissions (seconds).
    ThreadingHTTPServer.request_queue_size = 256
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print(f"webhook receiver on https://127.0.0.1:{args.port}", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
