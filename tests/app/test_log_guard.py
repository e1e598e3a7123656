"""Library log records (the mcp SDK's above all) reach the terminal or a log redacted and capped."""

from __future__ import annotations

import io
import logging
import sys

from mcp.client import stdio as mcp_stdio

from proctor.app.log_guard import RedactingHandler, install_log_guard

TOKEN = "ghp_" + "L0gT0ken" * 5


def _handler(**caps: int) -> tuple[RedactingHandler, io.StringIO, logging.Logger]:
    stream = io.StringIO()
    handler = RedactingHandler(stream, **caps)
    logger = logging.getLogger("mcp.client.stdio.test-guard")
    logger.propagate = False
    logger.handlers = [handler]
    return handler, stream, logger


def test_the_sdk_logging_an_invalid_line_writes_neither_the_token_nor_megabytes() -> None:
    """The SDK's own parse failure, with a hostile line: its exception text quotes the line."""
    _, stream, logger = _handler()
    line = f"\x1b[31m{TOKEN} " + "x" * 4_000_000
    try:
        raise ValueError(f"Invalid JSON: {line}")
    except ValueError:
        logger.exception("Failed to parse JSONRPC message from server")
    out = stream.getvalue()
    assert "Failed to parse JSONRPC message from server" in out and "[redacted: github-token]" in out
    assert TOKEN[4:] not in out and "\x1b" not in out
    assert len(out) < 5000
    assert out.rstrip().endswith("x"), "the tail of the record (a traceback's last line) is kept"


def test_a_line_the_sdk_cannot_parse_leaves_no_piece_of_a_token() -> None:
    """pydantic quotes a rejected line cut to its head and tail ('ghp_L3akY9...kkkk'): pieces too
    short for any shape. The handler describes the error from its parts, redacting the whole line."""
    _, stream, logger = _handler()
    openai = "sk-proj-" + "k" * 40
    mcp_stdio.logger.handlers, mcp_stdio.logger.propagate = logger.handlers, False
    try:
        mcp_stdio._parse_line(f"not json-rpc: {TOKEN} {'pad ' * 30}{openai}")  # the SDK's own path
    finally:
        mcp_stdio.logger.handlers, mcp_stdio.logger.propagate = [], True
    out = stream.getvalue()
    assert "Failed to parse JSONRPC message from server" in out and "Invalid JSON" in out
    assert "input: not json-rpc: [redacted: github-token] pad" in out
    assert TOKEN[:10] not in out and "kkkkkkkk" not in out, out


def test_a_flood_of_records_stops_at_the_cap_and_says_so() -> None:
    handler, stream, logger = _handler(total_bytes=10_000)
    for _ in range(1000):
        logger.warning("invalid line %s", "y" * 100)
    out = stream.getvalue()
    assert len(out.encode()) < 10_200 and "log capped at 10,000 bytes" in out
    assert handler.dropped > 900


def test_installed_once_on_the_root_logger_the_sdk_logger_goes_through_it() -> None:
    stream = io.StringIO()
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    root.handlers = []
    try:
        handler = install_log_guard(stream)
        assert install_log_guard(io.StringIO()) is handler, "a second install is the first handler"
        mcp_stdio.logger.warning("server said %s", TOKEN)
        assert "[redacted: github-token]" in stream.getvalue() and TOKEN not in stream.getvalue()
    finally:
        root.handlers, _ = saved
        root.setLevel(saved[1])
        logging.captureWarnings(False)
        sys.excepthook = sys.__excepthook__


def test_an_uncaught_exception_is_logged_through_the_guard() -> None:
    stream = io.StringIO()
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    root.handlers = []
    try:
        install_log_guard(stream)
        try:
            raise RuntimeError(f"crashed holding {TOKEN}")
        except RuntimeError as exc:
            sys.excepthook(type(exc), exc, exc.__traceback__)
        out = stream.getvalue()
        assert "RuntimeError: crashed holding [redacted: github-token]" in out and TOKEN not in out
    finally:
        root.handlers, _ = saved
        root.setLevel(saved[1])
        logging.captureWarnings(False)
        sys.excepthook = sys.__excepthook__
