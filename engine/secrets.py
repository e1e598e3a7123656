"""Keeping API keys out of everything proctor writes.

Keys are read from the environment only where a provider is built and handed straight to the
SDK. Anything that becomes an event, a log line or an export passes through ``redact`` so
that a key echoed back in an error message is replaced before it is stored.
"""

from __future__ import annotations

import os
import re

_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.IGNORECASE)
_KEY_SHAPES = re.compile(r"\b(sk-(?:ant-)?[A-Za-z0-9_-]{16,}|(?:Bearer|bearer)\s+[A-Za-z0-9._~+/-]{16,}=*)")
_extra: set[str] = set()


def register_secret(value: str) -> None:
    """Remember a secret that did not come from a conventionally named variable."""
    if len(value) >= 8:
        _extra.add(value)


def _known_secrets() -> list[str]:
    values = {v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= 8}
    return sorted(values | _extra, key=len, reverse=True)


def redact(text: str) -> str:
    """``text`` with every known secret and anything shaped like an API key replaced."""
    for secret in _known_secrets():
        if secret in text:
            text = text.replace(secret, "[redacted]")
    return _KEY_SHAPES.sub("[redacted]", text)
