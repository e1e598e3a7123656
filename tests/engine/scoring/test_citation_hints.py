"""Which symbol a line citation is paired with, and which quote it carries, on sentences from
the real answers (tests/engine/scoring/sense_answers/) and on the rules' edge cases."""

from __future__ import annotations

import pytest

from proctor.engine.scoring import Citation, extract_citations
from tests.engine.scoring.sense_answers.excerpt import answers


def _real(needle: str) -> str:
    """The whole text line of a real answer that holds ``needle``."""
    for a in answers():
        at = a.text.find(needle)
        if at >= 0:
            start = a.text.rfind("\n", 0, at) + 1
            end = a.text.find("\n", at)
            return a.text[start : end if end >= 0 else None]
    raise AssertionError(f"no answer holds {needle!r}")


def _cite(text: str, raw: str) -> Citation:
    (c,) = [c for c in extract_citations(text) if c.raw == raw]
    return c


@pytest.mark.parametrize(
    ("needle", "raw"),
    [
        ("`axum/src/serve/mod.rs:103`. Returns", "axum/src/serve/mod.rs:103"),
        (
            "`javalin/src/main/java/io/javalin/Javalin.java:21` (create at",
            "javalin/src/main/java/io/javalin/Javalin.java:21",
        ),
        ("`axum/src/extract/mod.rs:30` (re-export", "axum/src/extract/mod.rs:30"),
        ("`DefaultTasks.kt:16`: enqueues all `BEFORE`", "DefaultTasks.kt:16"),
        (
            "axum/src/handler/service.rs:22 — `impl Service<Request<B>>` at service.rs:146",
            "axum/src/handler/service.rs:22",
        ),
    ],
)
def test_prose_after_a_backticked_citation_is_no_quote(needle: str, raw: str) -> None:
    assert _cite(_real(needle), raw).quote is None


def test_code_after_a_citation_is_its_quote() -> None:
    c = _cite(_real("1. `axum/src/handler/mod.rs:208` — `impl<F"), "axum/src/handler/mod.rs:208")
    assert c.quote == "impl<F, Fut, Res, S> Handler<((),), S> for F where F: FnOnce() -> Fut"
    c = _cite(
        '"FromRef": "axum-core/src/extract/from_ref.rs:14 — `pub trait FromRef<T> { }`',
        "axum-core/src/extract/from_ref.rs:14",
    )
    assert c.quote == "pub trait FromRef<T> { }"


@pytest.mark.parametrize(
    ("needle", "raw", "hint"),
    [
        (
            "| 2 | `Flask.full_dispatch_request(ctx)` | src/flask/app.py:992 |",
            "src/flask/app.py:992",
            "Flask.full_dispatch_request",
        ),
        (
            "(`axum/src/routing/path_router.rs:347`)",
            "axum/src/routing/path_router.rs:347",
            "PathRouter.call_with_state",
        ),
        (
            "`JavalinServlet.service(req, res)` `javalin/",
            "javalin/src/main/java/io/javalin/http/servlet/JavalinServlet.kt:37",
            "JavalinServlet.service",
        ),
        (
            "(`axum/src/routing/route.rs:34`) wrapped in `MapIntoResponse`",
            "axum/src/routing/route.rs:34",
            "BoxCloneSyncService",
        ),
        (
            "(`JavalinDefaultRoutingApi.kt:51-72` → `InternalRouter.addHttpErrorHandler` `:85`)",
            "JavalinDefaultRoutingApi.kt:51-72",
            "error",
        ),
        ("(recovery.go:58), BEFORE `c.Next()` on recovery.go:90", "recovery.go:58", None),
        ("(recovery.go:58), BEFORE `c.Next()` on recovery.go:90", "recovery.go:90", "c.Next"),
        (
            "→ `ExceptionMapper.handle` (`router/exception/ExceptionMapper.kt:34`)",
            "router/exception/ExceptionMapper.kt:34",
            "ExceptionMapper.handle",
        ),
    ],
)
def test_the_symbol_a_real_sentence_pairs_with_a_line(needle: str, raw: str, hint: str | None) -> None:
    c = _cite(_real(needle), raw)
    assert (c.hint, c.unpaired) == (hint, None)


@pytest.mark.parametrize(
    ("needle", "raw"),
    [
        (
            "| `Method`, `Uri`, `Version`, `HeaderMap`, `Parts`, `Extensions` |",
            "axum-core/src/extract/request_parts.rs:19",
        ),
        ("| `Path<T>`, `RawPathParams` |", "axum/src/extract/path/mod.rs:157"),
        ("**`Router::layer` vs `Router::route_layer`**", "axum/src/routing/mod.rs:296"),
        (
            "**`Router::call` → `Router::call_with_state`** — `axum/src/routing/mod.rs:599`",
            "axum/src/routing/mod.rs:599",
        ),
        ("(`axum/src/handler/mod.rs:242–245, 250–253`)", "axum/src/handler/mod.rs:242–245"),
    ],
)
def test_several_symbols_or_lines_in_one_row_are_not_paired(needle: str, raw: str) -> None:
    c = _cite(_real(needle), raw)
    assert c.hint is None and c.unpaired is not None and "ambiguous" in c.unpaired


@pytest.mark.parametrize(
    ("text", "claims"),
    [
        ("- `retry_delay` is defined at `tinyq/retry.py:12` (def retry_delay(n))", True),
        ("`Foo` (a.py:3) calls it", False),
        ("a.py:3 declares `Foo`", True),
    ],
)
def test_a_sentence_that_says_defined_claims_the_definition(text: str, claims: bool) -> None:
    (c,) = extract_citations(text)
    assert c.hint is not None and c.claims_definition is claims
