"""definition_extents(): where a definition starts and ends, in the languages of the real answers
(the files themselves, from the excerpt), and uses that are not definitions."""

from __future__ import annotations

import pytest

from proctor.engine.scoring.symbol_extent import block_at, defines, definition_extents
from tests.engine.scoring.sense_answers.excerpt import repo


def _extents(name: str, path: str, symbol: str) -> list[tuple[int, int]]:
    lines = repo(name).lines(path)
    rows = [n for n, text in enumerate(lines, start=1) if symbol.lower() in text.lower()]
    return definition_extents(lines, symbol, rows)


@pytest.mark.parametrize(
    ("name", "path", "symbol", "extent"),
    [
        ("flask", "src/flask/app.py", "wsgi_app", (1566, 1616)),  # Python, a multi-line signature
        ("flask", "src/flask/app.py", "__call__", (1618, 1625)),
        ("flask", "src/flask/app.py", "Flask", (109, 1625)),  # a class body by indentation
        ("gin", "gin.go", "handleHTTPRequest", (690, 760)),  # Go method with a receiver
        ("gin", "recovery.go", "CustomRecoveryWithWriter", (53, 92)),  # returns a closure
        ("axum", "axum/src/handler/mod.rs", "impl_handler", (221, 260)),  # macro_rules!
        ("axum", "axum/src/extract/matched_path.rs", "MatchedPath", (67, 82)),  # impl ... for MatchedPath
        ("javalin", "javalin/src/main/java/io/javalin/http/servlet/DefaultTasks.kt", "AFTER", (88, 92)),
        (
            "javalin",
            "javalin/src/main/java/io/javalin/config/JavalinState.kt",
            "servletRequestLifecycle",
            (83, 90),
        ),
        ("javalin", "javalin/src/main/java/io/javalin/Javalin.java", "create", (64, 70)),  # Java
        (
            "javalin",
            "javalin/src/main/java/io/javalin/router/JavalinDefaultRoutingApi.kt",
            "exception",
            (44, 44),
        ),
    ],
)
def test_definitions_in_real_files(name: str, path: str, symbol: str, extent: tuple[int, int]) -> None:
    assert extent in _extents(name, path, symbol)


def test_a_go_method_is_inside_its_receiver_type() -> None:
    found = _extents("gin", "context.go", "Context")
    assert (61, 97) in found  # type Context struct
    line = repo("gin").lines("context.go")[1151]
    assert line.startswith("func (c *Context)") and any(a <= 1164 <= b for a, b in found)


def test_the_rust_macro_impl_block_reaches_its_closing_brace() -> None:
    assert (227, 258) in _extents("axum", "axum/src/handler/mod.rs", "Handler")


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("        return self.wsgi_app(environ, start_response)", "wsgi_app"),  # a call
        ("    val entry = ctx.cachedHttpHandler { x }", "cachedHttpHandler"),  # member access
        ("    if (foo(x)) {", "foo"),
        ("    x = make_response(rv)", "make_response"),
        ('    router.get("/") { ctx -> }', "get"),
        ("        throw new NotFound(path);", "NotFound"),
    ],
)
def test_uses_are_not_definitions(line: str, name: str) -> None:
    at = line.index(name)
    assert not defines(line, at, at + len(name))


def test_strings_comments_and_lifetimes_do_not_move_the_closing_brace() -> None:
    lines = [
        "fn parse<'a>(s: &'a str) -> &'a str {",
        '    let x = "}";  // }',
        "    let c = '}';",
        "    /* } */",
        "    s",
        "}",
        "fn after() {}",
    ]
    assert definition_extents(lines, "parse", [1]) == [(1, 6)]


def test_an_unbalanced_block_claims_no_body() -> None:
    assert definition_extents(["fn f() {", "  x"], "f", [1]) == [(1, 1)]


def test_block_at_finds_the_definition_a_line_opens() -> None:
    lines = repo("axum").lines("axum-core/src/extract/mod.rs")
    assert lines[78].startswith("pub trait FromRequest<")
    first, last = block_at(lines, 79) or (0, 0)
    assert first == 79 and last > 85
    assert block_at(lines, 80) is None  # a doc comment opens nothing
