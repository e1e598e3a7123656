"""``proctor init DIR --server CMD ARGS...``: a suite skeleton drafted from a server's tools."""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

from proctor.app.exit_codes import ExitCode
from proctor.engine.authoring.drafts import DraftError, draft_with_model
from proctor.engine.authoring.expectations import (
    BAD_ARGUMENTS,
    NOT_READ_ONLY,
    Observed,
    drafted_expectation,
    is_read_only,
)
from proctor.engine.providers.base import ProviderError
from proctor.engine.providers.prices import PriceTable
from proctor.engine.providers.registry import make_provider
from proctor.engine.runs.imported_runs import save_import
from proctor.engine.tools.mcp_launch import ServerStartError
from proctor.engine.tools.mcp_toolbox import ServerPool
from proctor.scenarios.importers.suite_files import validated
from proctor.scenarios.loader import SuiteError
from proctor.scenarios.model_ids import API_FORMS, OFFLINE, one_of
from proctor.scenarios.schema import HttpServer, ServerConfig, StdioServer
from proctor.scenarios.skeleton import Drafted, ToolInfo, gold_arguments, schema_problems, skeleton


def _config(args: argparse.Namespace) -> tuple[ServerConfig, dict[str, Any]]:
    if args.url:
        return HttpServer(url=args.url), {"url": args.url}
    if not args.server:
        raise SuiteError("give the server to draft from: --server COMMAND [ARGS...] or --url URL")
    command, *rest = args.server
    return StdioServer(command=command, args=rest), {"command": command, "args": rest}


PROBES = 2  # calls per read-only tool: a value that changes between them is never drafted


async def _draft_suite(
    args: argparse.Namespace, config: ServerConfig
) -> tuple[list[ToolInfo], dict[str, Drafted], dict[str, dict[str, Any]], list[str]]:
    """The server's tools, a model's drafts (with ``--model``) and each gold call's ``expect``:
    drafted from what the server answers when its read-only tools are called with the drafted
    arguments (``PROBES`` times), or a review note. One server process for all of it."""
    with tempfile.TemporaryDirectory(prefix="proctor-init-") as logs:
        pool = ServerPool(Path(logs))
        try:
            try:
                conn = await pool.acquire(args.name, config)
            except ServerStartError as exc:
                raise SuiteError(f"server {args.name!r} did not start: {exc}") from exc
            tools = [ToolInfo(t.name, t.description, t.input_schema, t.annotations) for t in conn.specs()]
            if not tools:
                raise SuiteError(f"server {args.name!r} lists no tools; nothing to draft scenarios from")
            drafts, notes = await _drafts(args.model, tools) if args.model else ({}, [])

            async def expectation(tool: ToolInfo) -> dict[str, Any]:
                arguments = gold_arguments(tool, drafts.get(tool.name))
                if not is_read_only(tool.annotations):
                    return {"review": NOT_READ_ONLY}
                if schema_problems(arguments, tool.input_schema):
                    return {"review": BAD_ARGUMENTS}
                outcomes = [await conn.call(tool.name, arguments, config.timeout_s) for _ in range(PROBES)]
                observed = [Observed(o.content, o.is_error, o.structured) for o in outcomes]
                return drafted_expectation(observed, arguments)

            # Tools at once (a slow one does not hold up the rest); one tool's calls in turn.
            drafted = await asyncio.gather(*(expectation(tool) for tool in tools))
            return tools, drafts, {t.name: e for t, e in zip(tools, drafted, strict=True)}, notes
        finally:
            await pool.aclose()


async def _drafts(model: str, tools: list[ToolInfo]) -> tuple[dict[str, Drafted], list[str]]:
    """One draft per tool from ``model``; a tool whose draft fails keeps the schema's, with a note."""
    if model.startswith(f"{OFFLINE}:"):
        raise SuiteError(f"--model {model}: drafting needs a real model ({one_of(API_FORMS, quote=False)})")
    provider = make_provider(model, PriceTable(), {})
    drafts: dict[str, Drafted] = {}
    notes: list[str] = []
    try:
        for index, tool in enumerate(tools):
            try:
                draft = await draft_with_model(provider.session(index), tool)
            except (DraftError, ProviderError) as exc:
                notes.append(
                    f"tool {tool.name}: {model} gave no usable draft ({exc}); kept the schema's draft"
                )
                continue
            if draft.problems:
                notes.append(
                    f"tool {tool.name}: {model}'s arguments do not fit the schema ({'; '.join(draft.problems)}); "
                    "kept the schema's example arguments"
                )
            drafts[tool.name] = Drafted(model, draft.prompt, draft.arguments, draft.claims)
    finally:
        await provider.aclose()
    return drafts, notes


def init_command(args: argparse.Namespace) -> int:
    config, raw = _config(args)
    tools, drafts, expectations, draft_notes = asyncio.run(_draft_suite(args, config))
    suite, scenarios, notes = skeleton(args.name, raw, tools, drafts, expectations)
    notes = draft_notes + notes
    imported = validated(
        "init", [Path(args.out)], suite, [(f"tool {s['title']}", s) for s in scenarios], notes=notes
    )
    saved = save_import(imported, args.out, force=args.force)
    assert saved.db is None
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    print(
        f"wrote {saved.out_dir}: {saved.scenarios} draft scenarios (one per tool), arms {', '.join(saved.arms)}"
    )
    checked = sum("review" not in e for e in expectations.values())
    print(
        f"expectations: {checked} drafted from the results of read-only tools (called {PROBES} times each), "
        f"{len(expectations) - checked} left as expect: {{review: ...}} for you to write"
    )
    print("review each scenarios/*.yaml (prompt and gold call), then: proctor run " + str(saved.out_dir))
    return ExitCode.OK
