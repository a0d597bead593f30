"""A partner's webhook receiver: a real HTTP server on 127.0.0.1 that checks our signature,
dedupes by event id the way we tell partners to, and misbehaves on request."""

from __future__ import annotations

import json
import threading
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from partners.signing import EVENT_ID_HEADER, SIGNATURE_HEADER, verify_signature


@dataclass
class Receiver:
    secret: str = ""
    fail_first: int = 0  # answer 500 to the first n attempts of each event id
    hang_first_seconds: float = 0  # the very first request waits this long before answering
    attempts: Counter = field(default_factory=Counter)  # event id -> requests seen
    accepted: dict = field(default_factory=dict)  # event id -> body, deduped
    accepted_twice: list = field(default_factory=list)  # event ids whose 2xx was repeated
    bad_signatures: int = 0
    first_request_arrived: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def handle(self, headers, body: bytes) -> int:
        try:
            verify_signature(
                body=body, header=headers.get(SIGNATURE_HEADER), secret=self.secret, tolerance=300
            )
        except Exception:
            with self.lock:
                self.bad_signatures += 1
            return 400
        payload = json.loads(body)
        event_id = headers.get(EVENT_ID_HEADER)
        assert payload["id"] == event_id
        with self.lock:
            self.attempts[event_id] += 1
            attempt = self.attempts[event_id]
            first_ever = not self.first_request_arrived.is_set()
            self.first_request_arrived.set()
        if first_ever and self.hang_first_seconds:
            threading.Event().wait(self.hang_first_seconds)
        if attempt <= self.fail_first:
            return 500
        with self.lock:
            if event_id in self.accepted:  # a duplicate: acknowledged, not processed again
                self.accepted_twice.append(event_id)
            else:
                self.accepted[event_id] = payload
        return 200


def start_receiver(receiver: Receiver) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            status = receiver.handle(self.headers, body)
            try:
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()
            except OSError:  # the sender is gone (a killed worker)
                pass

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/hooks"
    return server
