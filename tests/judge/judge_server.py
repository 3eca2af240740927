"""A chat-completions server for the judge's tests: 127.0.0.1, a thread of the test process.

It reads the pair from the prompt (the test texts carry ``[q:ID]`` and ``[d:ID]``) and answers
``##final score: G`` with G = :func:`grade_of` (query, doc), unless the test planned something
else for that pair's next request (:attr:`FakeChat.plan`, a list of behaviours used one per
request):

``ok``        the deterministic grade;
``429``       HTTP 429 with ``Retry-After: <retry_after>``;
``500``       HTTP 500 whose body echoes the request's Authorization header;
``400``       HTTP 400 whose body echoes it too (a pair that fails without retries);
``sleep``     sleeps ``sleep`` seconds (longer than the client's timeout), then drops the request;
``badjson``   HTTP 200 with a body that is not JSON;
``nochoices`` HTTP 200 with JSON that is no chat completion;
``answer:T``  HTTP 200 whose answer is the text T (``{key}`` in T becomes the Authorization header).

A request to another path than ``/v1/chat/completions`` gets HTTP 404; with :attr:`key` set, one
without ``Authorization: Bearer <key>`` gets HTTP 401. ``hang_after = N`` lets N requests through
and makes every later one wait until :meth:`release`, then drops it unanswered. A request whose
Authorization header is in :attr:`dropped` is dropped unanswered at once (a killed run's requests,
which the server may read only after the test has let later requests through). Nothing leaves
the machine.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PAIR = re.compile(r"\[q:([^\]]+)\].*?\[d:([^\]]+)\]", re.DOTALL)


def grade_of(query: str, doc: str) -> int:
    """The server's grade for a pair: a fixed function of the two ids (0-3)."""
    return (sum(map(ord, query)) * 7 + sum(map(ord, doc)) * 3) % 4


class FakeChat:
    def __init__(self) -> None:
        self.plan: dict[tuple[str, str], list[str]] = {}
        self.received: Counter[tuple[str, str]] = Counter()
        self.answered: Counter[tuple[str, str]] = Counter()
        #: requests by (Authorization header, pair): a test tells two runs apart by their keys
        self.received_by: Counter[tuple[str | None, tuple[str, str]]] = Counter()
        self.answered_by: Counter[tuple[str | None, tuple[str, str]]] = Counter()
        self.authorization: list[str | None] = []
        self.bodies: list[dict[str, Any]] = []
        self.retry_after = "0"
        self.sleep = 1.5
        self.hang_after: int | None = None
        self.dropped: set[str] = set()
        self.key: str | None = None
        self.let_through = 0
        self.refused = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._released = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                fake._handle(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def release(self) -> None:
        self._released.set()

    def close(self) -> None:
        self.release()
        self.server.shutdown()
        self.server.server_close()

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        body = json.loads(h.rfile.read(int(h.headers["Content-Length"])))
        auth = h.headers.get("Authorization")
        refuse = 404 if h.path != "/v1/chat/completions" else 401 if self.key and auth != f"Bearer {self.key}" else 0
        if refuse:
            with self._lock:
                self.refused += 1
            h.send_response(refuse)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        user = body["messages"][-1]["content"]
        m = PAIR.search(user)
        assert m is not None, user[:200]
        pair = (m.group(1), m.group(2))
        with self._lock:
            self.received[pair] += 1
            self.received_by[(auth, pair)] += 1
            self.authorization.append(auth)
            self.bodies.append(body)
            steps = self.plan.get(pair)
            step = steps.pop(0) if steps else "ok"
            # decided at arrival, under the lock: exactly hang_after requests are let through
            drop = auth in self.dropped
            hang = not drop and self.hang_after is not None and self.let_through >= self.hang_after
            self.let_through += not (hang or drop)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if drop:
                return  # dropped unanswered
            if hang:
                self._released.wait(120)
                return  # dropped unanswered
            self._answer(h, pair, step, auth or "")
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            with self._lock:
                self.in_flight -= 1

    def _answer(self, h: BaseHTTPRequestHandler, pair: tuple[str, str], step: str, auth: str) -> None:
        if step == "sleep":
            time.sleep(self.sleep)
            return
        if step in ("429", "500", "400"):
            payload = json.dumps({"error": {"message": f"injected {step}; you sent {auth}"}}).encode()
            h.send_response(int(step))
            if step == "429":
                h.send_header("Retry-After", self.retry_after)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(payload)))
            h.end_headers()
            h.wfile.write(payload)
            return
        if step == "badjson":
            raw = b'{"choices": [{"message": {"content": "##final score: 3"'
        elif step == "nochoices":
            raw = json.dumps({"object": "chat.completion", "choices": []}).encode()
        else:
            content = f"##final score: {grade_of(*pair)}" if step == "ok" else step[len("answer:"):].replace("{key}", auth)
            raw = json.dumps({"object": "chat.completion", "model": "fake",
                              "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                           "finish_reason": "stop"}],
                              "usage": {"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107}}).encode()
        if step == "ok" or step.startswith("answer:"):
            with self._lock:  # counted before it is sent
                self.answered[pair] += 1
                self.answered_by[(auth or None, pair)] += 1
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(raw)))
        h.end_headers()
        h.wfile.write(raw)
        h.wfile.flush()
