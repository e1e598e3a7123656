"""Keeping secrets out of everything proctor writes or shows.

Users point proctor at servers holding real credentials, and a server is free to echo them
back. One redactor therefore sits in front of every sink (the event writer, the run config,
server stderr logs; reports, exports and the console read from those): it replaces known token
shapes and the exact values of secret-looking environment variables (the process's own, and the
``env:`` a suite hands to its servers and providers) with ``[redacted: kind]``. Shapes are
matched with RE2, which is linear in the input, so a hostile 30 MB line costs milliseconds.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping

import re2

# A name part (split at _ or -) that says "secret", or a name ending in KEY/TOKEN/SECRET (APIKEY);
# GIT_AUTHOR_NAME or KEYBOARD_LAYOUT are not secrets.
SECRET_NAME = re.compile(
    r"(?:^|[_-])(?:API)?(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|CREDENTIALS?|AUTH|AUTHORIZATION|PAT|COOKIE)"
    r"(?:$|[_-])|(?:KEY|TOKEN|SECRET)$",
    re.IGNORECASE,
)
MIN_SECRET_CHARS = 8

# (kind, pattern); order matters where shapes nest (sk-ant- before sk-). Boundaries follow what a
# token can contain, not word boundaries: a shape with a distinctive prefix (ghp_, AKIA, eyJ...)
# matches wherever the prefix starts, whatever touches it (``MY_ghp_...``, ``\x1b[31mghp_...``);
# it ends where its alphabet ends. Only the short generic prefixes (sk-, Bearer) need a start,
# or "task-..." and "disk-..." would be keys: anything but a letter or digit, an escape sequence
# (raw, or as JSON writes it), or an escaped newline in stored JSON.
_ESC = r"(?:\x1b|\\u001[bB]|\\x1[bB]|\\033)"
_ESCAPE_SEQUENCE = (
    r"(?:(?:\x9b|\\u009[bB])[0-?]*[ -/]*[@-~]"  # 8-bit CSI
    + "|"
    + _ESC
    + r"(?:\[[0-?]*[ -/]*[@-~]|[ -/]*[0-~])?)"  # 7-bit CSI, any other escape, a lone ESC
)
_START = r"(^|[^A-Za-z0-9]|" + _ESCAPE_SEQUENCE + r"|\\[nrtbf])"
_ANY = "()"  # a distinctive prefix: no start needed
_SHAPES: tuple[tuple[str, str], ...] = (
    (
        "private-key",
        _ANY + r"-----BEGIN [A-Z ]*PRIVATE KEY-----[A-Za-z0-9+/=\s\\]*(?:-----END [A-Z ]*PRIVATE KEY-----)?",
    ),
    ("github-token", _ANY + r"gh[pousr]_[A-Za-z0-9]{30,}"),
    ("github-token", _ANY + r"github_pat_[A-Za-z0-9_]{22,}"),
    ("anthropic-key", _ANY + r"sk-ant-[A-Za-z0-9_-]{16,}"),
    ("openai-key", _START + r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}"),
    ("masked-key", _START + r"(?:sk|rk|pk)-[A-Za-z0-9_.-]*\*+[A-Za-z0-9_.*-]*"),
    ("aws-access-key", _ANY + r"(?:AKIA|ASIA)[0-9A-Z]{16}"),
    ("slack-token", _ANY + r"xox[abposr]-[A-Za-z0-9-]{10,}"),
    ("jwt", _ANY + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("google-api-key", _ANY + r"AIza[0-9A-Za-z_-]{35}"),
    ("bearer-token", _START + r"[Bb]earer\s+[A-Za-z0-9._~+/-]{16,}=*"),
)
_COMPILED = tuple((kind, re2.compile(pattern)) for kind, pattern in _SHAPES)
# Every shape starts with one of these: plain substring tests settle the usual case (no match)
# faster than any regex call, and this runs once per stored event.
_SHAPE_STARTS = ("PRIVATE KEY", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "sk-", "rk-", "pk-",
                 "AKIA", "ASIA", "xox", "eyJ", "AIza", "earer")  # fmt: skip


# One search for all of them. RE2 is linear and fastest per character, but each call releases
# the GIL: with the store's writer thread runnable, getting it back cost ~20-40 us per event,
# ten times the search. Short text (every ordinary event) is searched with ``re`` instead, which
# keeps the GIL; an alternation of literals cannot backtrack, so it is linear too (~6-18 ns/char).
_ANY_START = re2.compile("|".join(re.escape(start) for start in _SHAPE_STARTS))
_ANY_START_SHORT = re.compile("|".join(re.escape(start) for start in _SHAPE_STARTS))
_SHORT_CHARS = 2048  # where the two cost about the same, GIL included
# Every shape at once, over UTF-8 bytes, so the writer can check groups of stored JSON without
# decoding them. A pattern matches the bytes wherever it matches the text (its classes are
# ASCII, and a character outside them is bytes outside them), so no match means ``redact`` has
# no shape to replace; unlike the starts above, "task-" or "network-" do not match.
_ANY_SHAPE_BYTES = re2.compile(b"|".join(b"(?:%s)" % pattern.encode() for _kind, pattern in _SHAPES))


def _may_hold_a_shape(text: str) -> bool:
    if len(text) <= _SHORT_CHARS:
        return _ANY_START_SHORT.search(text) is not None
    return _ANY_START.search(text) is not None


def secret_values(env: Mapping[str, str]) -> dict[str, str]:
    """The values of ``env`` whose names look secret, long enough not to match ordinary words."""
    return {v: k for k, v in env.items() if SECRET_NAME.search(k) and len(v) >= MIN_SECRET_CHARS}


# Headers that carry no credential; every other header a suite sets may (X-Goog-Api-Key,
# X-Workspace-Token, a vendor's own name), so its value is a secret whatever its name.
_PLAIN_HEADERS = frozenset(
    {"accept", "accept-encoding", "accept-language", "cache-control", "connection", "content-type",
     "mcp-protocol-version", "user-agent"}
)  # fmt: skip


def header_secrets(headers: Mapping[str, str]) -> dict[str, str]:
    """The secret values of an HTTP server's ``headers:``: every value but a few standard headers',
    and an Authorization value's credential on its own too ("Bearer abc" echoed as "abc")."""
    found: dict[str, str] = {}
    for name, value in headers.items():
        if name.lower() in _PLAIN_HEADERS:
            continue
        label = f"header {name}"
        if len(value) >= MIN_SECRET_CHARS:
            found[value] = label
        scheme, _, credential = value.strip().partition(" ")
        if credential and scheme.isalpha() and len(credential.strip()) >= MIN_SECRET_CHARS:
            found[credential.strip()] = label
    return found


class Redactor:
    """Replaces known secret values and token shapes; values given explicitly are named by variable."""

    def __init__(self, values: Mapping[str, str] | None = None) -> None:
        self._values: dict[str, str] = {}
        self._longest_first: list[str] = []
        self._utf8: list[bytes] = []
        for value, name in (values or {}).items():
            self.add(value, name)

    @classmethod
    def from_environment(cls, env: Mapping[str, str]) -> Redactor:
        return cls(secret_values(env))

    def add(self, value: str, name: str) -> None:
        if len(value) < MIN_SECRET_CHARS:
            return
        self._values[value] = name
        escaped = json.dumps(value)[1:-1]  # how the value appears inside stored JSON
        if escaped != value:
            self._values[escaped] = name
        self._longest_first = sorted(self._values, key=len, reverse=True)
        self._utf8 = [b for b in map(_utf8, self._longest_first) if b is not None]

    @property
    def known(self) -> Mapping[str, str]:
        return self._values

    def add_env(self, env: Mapping[str, str]) -> None:
        for value, name in secret_values(env).items():
            self.add(value, name)

    def may_change(self, data: bytes) -> bool:
        """False when ``redact(data.decode())`` is sure to return its text unchanged: neither a
        known value nor a token shape occurs in ``data`` (UTF-8, read without decoding it)."""
        return any(value in data for value in self._utf8) or _ANY_SHAPE_BYTES.search(data) is not None

    def redact(self, text: str) -> str:
        for value in self._longest_first:
            if value in text:
                text = text.replace(value, f"[redacted: ${self._values[value]}]")
        if not _may_hold_a_shape(text):
            return text
        for kind, pattern in _COMPILED:
            if pattern.search(text):
                text = pattern.sub(rf"\1[redacted: {kind}]", text)
        return text


_registered: dict[str, str] = {}
_process = Redactor()
_env_size = -1
_env_secrets: tuple[tuple[str, str], ...] = ()


def register_secret(value: str, name: str = "secret") -> None:
    """Remember a secret that is not in this process's environment (a suite's server env, a header)."""
    _registered[value] = name
    _process.add(value, name)


def register_env(env: Mapping[str, str]) -> None:
    """Remember the secret-looking values of an ``env:`` block a suite hands to a child."""
    register_secrets(secret_values(env))


def register_secrets(values: Mapping[str, str]) -> None:
    """Remember many secrets at once (value -> the name a redaction shows)."""
    for value, name in values.items():
        register_secret(value, name)


def registered_secrets() -> dict[str, str]:
    """Every secret registered so far (value -> name), for a redactor in another process (a
    launched server's log supervisor) that must know them too; the environment's are not in it."""
    return dict(_registered)


def _refresh_from_environment() -> None:
    """Follow the environment (two cheap checks per event: its size, and the values of the
    secret-looking variables seen last time); rebuilt rather than grown, so a variable that is
    gone or changed stops rewriting text that merely resembles its old value."""
    global _env_size, _env_secrets, _process
    if _env_size == len(os.environ) and all(os.environ.get(k) == v for k, v in _env_secrets):
        return
    _env_size = len(os.environ)
    _env_secrets = tuple((k, v) for k, v in os.environ.items() if SECRET_NAME.search(k))
    _process = Redactor({**secret_values(os.environ), **_registered})


def redact(text: str) -> str:
    """``text`` with every known secret and anything shaped like a credential replaced."""
    _refresh_from_environment()
    return _process.redact(text)


def may_need_redaction(data: bytes) -> bool:
    """False when ``redact(data.decode())`` is sure to return its input (``data`` is UTF-8)."""
    _refresh_from_environment()
    return _process.may_change(data)


def _utf8(value: str) -> bytes | None:
    """``value`` as UTF-8; None for one holding a lone surrogate, which decoded text never holds."""
    try:
        return value.encode()
    except UnicodeEncodeError:
        return None


__all__ = [
    "Redactor",
    "header_secrets",
    "may_need_redaction",
    "redact",
    "register_env",
    "register_secret",
    "register_secrets",
    "registered_secrets",
    "secret_values",
]
