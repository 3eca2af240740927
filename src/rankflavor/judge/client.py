"""One chat-completions request, with retries: ``POST {base_url}/chat/completions``.

The OpenAI-compatible API that OpenAI, vLLM, Ollama (``http://localhost:11434/v1``) and LM Studio
(``http://localhost:1234/v1``) all serve. The standard library's :mod:`urllib.request` sends it;
the key, when there is one, goes in the ``Authorization: Bearer`` header and nowhere else: every
text kept from a response (an answer, an error body) passes :meth:`ChatClient.redact` first, and
the endpoint shown drops a URL's user and password.

Retries
-------
A request is sent again after HTTP 429, any 5xx, a timeout, a dropped connection, or a 200 whose
body is not a chat completion (malformed JSON, no ``choices[0].message``), up to ``retries``
times. The wait before retry ``n`` (0-based) is ``backoff * 2**n`` scaled by a random factor in
[0.5, 1] (jitter, so that workers turned away together do not return together), and never less
than the ``Retry-After`` the server sent (seconds or an HTTP date, RFC 9110 section 10.2.3); a
server that asks for more than ``max_wait`` seconds fails the request rather than being retried
early. Redirects are not followed (the key would follow them): a 3xx fails the pair. HTTP 401, 403 and 404 stop the whole run (:class:`Refused`: a wrong key, model or URL
fails every request alike); any other 4xx fails the pair without a retry (a passage too long for
the model's context, say). ``timeout`` is the socket timeout of one attempt: the seconds the
server may stay silent while connecting or answering.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import random
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rankflavor.errors import UsageError
from rankflavor.judge.prompt import SAMPLING


class Refused(UsageError):
    """The server refused the run (HTTP 401, 403 or 404): nothing more is asked (exit code 2)."""


class Failed(Exception):
    """No answer for one request after the retries; ``reason`` says what happened last."""

    def __init__(self, reason: str, attempts: int) -> None:
        super().__init__(reason)
        self.reason, self.attempts = reason, attempts


class Stopped(Exception):
    """The run was stopped (another request was refused, or the user interrupted)."""


@dataclass(frozen=True)
class Reply:
    """A chat completion's answer text and its ``usage`` tokens."""

    content: str
    tokens_in: int
    tokens_out: int
    attempts: int


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Redirects are not followed: the key would go with the request to wherever it points."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class _Retry(Exception):
    def __init__(self, reason: str, after: float | None = None) -> None:
        super().__init__(reason)
        self.reason, self.after = reason, after


def endpoint(base_url: str) -> str:
    """``{base_url}/chat/completions`` with no user or password in it (for messages and results).

    >>> endpoint("http://user:secret@localhost:8000/v1/")
    'http://localhost:8000/v1/chat/completions'
    """
    parts = urllib.parse.urlsplit(base_url.rstrip("/"))
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path + "/chat/completions", "", ""))


class ChatClient:
    """Sends chat requests for one model; safe to call from several threads at once."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None, *, timeout: float = 60.0,
                 retries: int = 5, backoff: float = 1.0, max_wait: float = 120.0,
                 sleep: Callable[[float], None] | None = None, sampling: dict[str, Any] | None = None) -> None:
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(f"--base-url must be an http(s) URL such as http://localhost:11434/v1, not {base_url!r}")
        if timeout <= 0 or retries < 0 or backoff < 0 or max_wait < 0:
            raise UsageError("timeout must be positive; retries, backoff and max_wait must not be negative")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.endpoint = endpoint(base_url)
        self.model = model
        self._key = api_key or None
        self.timeout, self.retries, self.backoff, self.max_wait = timeout, retries, backoff, max_wait
        self._sleep = sleep
        self.sampling = dict(SAMPLING if sampling is None else sampling)
        self.stop = threading.Event()
        self._random = random.Random()
        self._lock = threading.Lock()
        self.requests = 0
        self.retried = 0
        self._opener = urllib.request.build_opener(_NoRedirect)

    def redact(self, text: str) -> str:
        """``text`` with the API key (and the URL's password) replaced by ``[redacted]``."""
        secrets = [self._key, urllib.parse.urlsplit(self.url).password]
        for secret in secrets:
            if secret:
                text = text.replace(secret, "[redacted]")
        return text

    def ask(self, messages: list[dict[str, str]]) -> Reply:
        """The model's reply, after retries (module docstring).

        Raises
        ------
        Failed : no answer after the retries (or a 4xx other than 401/403/404/429).
        Refused : HTTP 401, 403 or 404.
        Stopped : :attr:`stop` was set.
        """
        body = json.dumps({"model": self.model, "messages": messages, **self.sampling}).encode("utf-8")
        attempt = 0
        while True:
            if self.stop.is_set():
                raise Stopped()
            try:
                return self._once(body, attempt + 1)
            except _Retry as retry:
                if attempt >= self.retries:
                    raise Failed(f"{retry.reason} ({attempt + 1} attempt{'s' if attempt else ''})", attempt + 1) from None
                wait = self.backoff * 2 ** attempt * self._random.uniform(0.5, 1.0)
                if retry.after is not None:
                    if retry.after > self.max_wait:
                        raise Failed(f"{retry.reason}; the server asked to wait {retry.after:g} s, more than "
                                     f"max_wait {self.max_wait:g} s", attempt + 1) from None
                    wait = max(wait, retry.after)
                self._wait(wait)
                with self._lock:
                    self.retried += 1
                attempt += 1

    def _wait(self, seconds: float) -> None:
        if self._sleep is not None:
            self._sleep(seconds)
        elif self.stop.wait(seconds):
            raise Stopped()

    def _once(self, body: bytes, attempt: int) -> Reply:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._key:
            headers["Authorization"] = "Bearer " + self._key
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        with self._lock:
            self.requests += 1
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                data = response.read()
        except urllib.error.HTTPError as exc:
            status = exc.code
            detail = self._detail(exc)
            after = _retry_after(exc.headers.get("Retry-After") if exc.headers else None)
            exc.close()
            if status == 429 or status >= 500:
                raise _Retry(f"HTTP {status}{detail}", after) from None
            if status in (401, 403, 404):
                what = "the model or URL was not found" if status == 404 else "the key was refused or is missing"
                raise Refused(f"{self.endpoint} answered HTTP {status} ({what}){detail}") from None
            raise Failed(f"HTTP {status}{detail}", attempt) from None
        except (TimeoutError, urllib.error.URLError, http.client.HTTPException, ConnectionError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError) or isinstance(exc, TimeoutError):
                raise _Retry(f"no answer within the timeout of {self.timeout:g} s") from None
            raise _Retry(self.redact(f"connection failed: {type(reason).__name__}: {reason}")) from None
        return self._reply(data, attempt)

    def _detail(self, exc: urllib.error.HTTPError) -> str:
        try:
            text = exc.read(2000).decode("utf-8", "replace").strip()
        except Exception:  # (a body that cannot be read adds nothing to the message)
            return ""
        text = " ".join(self.redact(text).split())
        return f": {text[:300]}" if text else ""

    def _reply(self, data: bytes, attempt: int) -> Reply:
        try:
            doc = json.loads(data)
            message = doc["choices"][0]["message"]
            content = message.get("content")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise _Retry("the response is not a chat completion (malformed JSON or no choices[0].message)") from None
        usage = doc.get("usage") if isinstance(doc, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        return Reply(self.redact(content if isinstance(content, str) else ""), _count(usage.get("prompt_tokens")),
                     _count(usage.get("completion_tokens")), attempt)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _retry_after(value: str | None) -> float | None:
    """Seconds a ``Retry-After`` header asks for (a number of seconds or an HTTP date), or None.

    >>> _retry_after("7"), _retry_after("0.5"), _retry_after("soon")
    (7.0, 0.5, None)
    """
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - time.time()
    return max(0.0, seconds) if seconds == seconds else None


__all__ = ["ChatClient", "Failed", "Refused", "Reply", "Stopped", "endpoint"]
