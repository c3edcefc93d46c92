#!/usr/bin/env python3
"""A webhook receiver written apart from the service, in Python with the standard library only.

It checks what docs/receiving-webhooks.md promises from the outside: every delivery is signed as
documented (X-Webhook-Signature: `v0=` + hex HMAC-SHA256 of `{X-Webhook-Timestamp}.{raw body}`, keyed by the
secret's UTF-8 bytes as shown), and the events of each sequence subject arrive numbered 1, 2, 3, ... with
no gap, in order. It answers 500 once to the delivery of one chosen subject and number, so that a retry of
it comes, and records per subject the numbers it accepted, in the order they came.

After every request it writes its report (JSON) to --report, replacing the file whole:
  {"deliveries": n, "duplicates": n, "rejected_signatures": n, "unnumbered": n,
   "fail_once": {"subject": s, "sequence": n, "answered_500": bool, "retried": bool},
   "subjects": {"customer:<id>": {"sequences": [1, 2, ...], "gap_free": bool, "in_order": bool}, ...}}
where gap_free means the numbers accepted are exactly 1..n, and in_order that each came after the one
before it.

Usage: sequence-receiver.py --cert cert.pem --key key.pem --report report.json
                            [--fail-subject customer:<id> --fail-sequence 2]
with SIGNING_SECRET in the environment. It listens on 127.0.0.1 on a free port and prints
`listening <port>` once it is ready.
"""

import argparse
import hashlib
import hmac
import json
import os
import ssl
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOLERANCE_SECONDS = 300


def signature_valid(secret, timestamp, body, header):
    """True when one of the header's space-separated `v0=` signatures is ours over `{timestamp}.{body}`."""
    if not timestamp.isdigit() or abs(time.time() - int(timestamp)) > TOLERANCE_SECONDS:
        return False
    mac = hmac.new(secret.encode("utf-8"), timestamp.encode("ascii") + b"." + body, hashlib.sha256)
    expected = "v0=" + mac.hexdigest()
    return any(hmac.compare_digest(candidate, expected) for candidate in header.split(" "))


class State:
    def __init__(self, report_path, fail_subject, fail_sequence):
        self.lock = threading.Lock()
        self.report_path = report_path
        self.fail = (fail_subject, fail_sequence) if fail_subject else None
        self.answered_500 = False
        self.retried = False
        self.seen_ids = set()
        self.by_subject = {}
        self.deliveries = 0
        self.duplicates = 0
        self.rejected_signatures = 0
        self.unnumbered = 0

    def report(self):
        subjects = {}
        for subject, numbers in self.by_subject.items():
            subjects[subject] = {
                "sequences": numbers,
                "gap_free": sorted(numbers) == list(range(1, len(numbers) + 1)),
                "in_order": all(a < b for a, b in zip(numbers, numbers[1:])),
            }
        return {
            "deliveries": self.deliveries,
            "duplicates": self.duplicates,
            "rejected_signatures": self.rejected_signatures,
            "unnumbered": self.unnumbered,
            "fail_once": None
            if self.fail is None
            else {"subject": self.fail[0], "sequence": self.fail[1], "answered_500": self.answered_500, "retried": self.retried},
            "subjects": subjects,
        }

    def write_report(self):
        # Written whole and renamed into place, so a reader never sees half a report.
        directory = os.path.dirname(os.path.abspath(self.report_path))
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".report-")
        with os.fdopen(fd, "w") as f:
            json.dump(self.report(), f)
        os.replace(tmp, self.report_path)


def handler_for(secret, state):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def answer(self, status, text):
            body = text.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with state.lock:
                status, text = self.decide(body)
                state.write_report()
            self.answer(status, text)

        def decide(self, body):
            h = self.headers
            if not signature_valid(secret, h.get("X-Webhook-Timestamp", ""), body, h.get("X-Webhook-Signature", "")):
                state.rejected_signatures += 1
                return 401, "bad signature"
            subject = h.get("X-Webhook-Sequence-Subject")
            number = h.get("X-Webhook-Sequence", "")
            if not subject or not number.isdigit():
                state.unnumbered += 1
                return 400, "no sequence"
            sequence = int(number)
            if state.fail == (subject, sequence):
                if not state.answered_500:
                    state.answered_500 = True
                    return 500, "failing once on purpose"
                state.retried = True
            delivery = h.get("X-Webhook-Id", "")
            if delivery in state.seen_ids:
                state.duplicates += 1
                return 200, "duplicate"
            state.seen_ids.add(delivery)
            state.deliveries += 1
            state.by_subject.setdefault(subject, []).append(sequence)
            return 200, "ok"

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--report", required=True)
    parser.add_argument("--fail-subject")
    parser.add_argument("--fail-sequence", type=int)
    args = parser.parse_args()
    secret = os.environ.get("SIGNING_SECRET")
    if not secret:
        sys.exit("set SIGNING_SECRET to the endpoint secret shown at creation")

    state = State(args.report, args.fail_subject, args.fail_sequence)
    state.write_report()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(secret, state))
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(args.cert, args.key)
    server.socket = tls.wrap_socket(server.socket, server_side=True)
    print(f"listening {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
