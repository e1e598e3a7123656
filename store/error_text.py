"""An exception's text with secrets out, redacted before anything cuts it.

pydantic's ValidationError quotes the input it rejected, already cut to its head and tail
(``'ghp_L3akY9...value-9876543210'``): a token cut that way is too short for any shape, so
redacting that text afterwards keeps both pieces. The mcp SDK raises one for every line a
server sends that is not JSON-RPC. Here the error is described from its parts instead: each
error's place and message, and the rejected input whole, redacted, then cut.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from proctor.store.redaction import redact

INPUT_CHARS = 200


def error_text(exc: BaseException) -> str:
    """``"Type: message"`` for ``exc``, redacted; a validation error's input redacted before its cut."""
    if isinstance(exc, ValidationError):
        errors = exc.errors(include_url=False, include_context=False, include_input=False)
        where = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in errors[:4])
        more = f" (+{len(errors) - 4} more)" if len(errors) > 4 else ""
        shown = _input_excerpt(exc)
        return f"{type(exc).__name__}: {redact(where)}{more}; input: {shown}"
    text = redact(str(exc))
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _input_excerpt(exc: ValidationError) -> str:
    """The rejected input, redacted whole, then cut to ``INPUT_CHARS``."""
    errors = exc.errors(include_url=False, include_context=False)
    value: Any = errors[0].get("input") if errors else None
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    text = redact(text)
    return text if len(text) <= INPUT_CHARS else f"{text[:INPUT_CHARS]}…[{len(text):,} characters]"


__all__ = ["INPUT_CHARS", "error_text"]
