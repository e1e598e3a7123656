"""Real MCP servers' tool definitions held to each API's documented rules (tool_rules.py).

The definitions are the servers' own ``tools/list`` answers (tests/engine/fixtures/reference_tools/).
"""

from __future__ import annotations

from pathlib import Path

from proctor.engine.providers.tool_rules import (
    NAME_PATTERN,
    OPENAI_DESCRIPTION_MAX,
    adapt_tools,
    name_tools_in_error,
    tool_problems,
)
from proctor.engine.tools.toolbox import ToolSpec
from tests.engine.reference_tools import FIXTURES, colliding_registry_tools, fixture_tools, reference_tools


def test_sequential_thinkings_description_is_over_openais_limit_and_is_cut_on_the_record() -> None:
    (tool,) = fixture_tools("sequential-thinking-2026.8.31", "sequential-thinking")
    assert len(tool.description) == 2781
    wire = adapt_tools("openai", [tool])
    (sent,) = wire.sent
    assert OPENAI_DESCRIPTION_MAX - 8 < len(sent.description) <= OPENAI_DESCRIPTION_MAX
    assert sent.description.endswith("…") and tool.description.startswith(sent.description[:-1])
    (adaptation,) = wire.adaptations
    assert adaptation.field == "description" and adaptation.original == tool.description
    assert f"cut from 2,781 to {len(sent.description):,} characters" in adaptation.message()
    assert adapt_tools("anthropic", [tool]).sent == (tool,)  # Anthropic sets no such limit


def test_registry_style_server_names_give_names_both_apis_refuse_and_a_reversible_map() -> None:
    tools = colliding_registry_tools()
    exposed = [t.name for t in tools]
    assert "io.github.modelcontextprotocol/server-filesystem__read_file" in exposed
    assert not all(NAME_PATTERN.match(n) for n in exposed)
    for api in ("anthropic", "openai"):
        wire = adapt_tools(api, tools)
        sent = [t.name for t in wire.sent]
        assert all(NAME_PATTERN.match(n) for n in sent), [n for n in sent if not NAME_PATTERN.match(n)]
        assert len(set(sent)) == len(sent)
        for original in exposed:
            assert wire.original_name(wire.wire_name(original)) == original
        assert adapt_tools(api, tools) == wire  # the same aliases in every trial


def test_a_long_name_keeps_its_head_and_a_hash() -> None:
    long = "io.github.modelcontextprotocol/server-filesystem__list_directory_with_sizes"
    (sent,) = adapt_tools("anthropic", [ToolSpec(long, "", {"type": "object"}, "fs")]).sent
    assert len(sent.name) == 64 and sent.name.startswith("io_github_modelcontextprotocol_server-filesystem")


def test_a_zod_union_at_the_schemas_root_is_a_problem_for_anthropic_naming_server_tool_field_and_fix() -> (
    None
):
    tools = fixture_tools("union-schema-1.0.0", "catalog")
    assert "anyOf" in tools[0].input_schema
    (problem,) = tool_problems("anthropic", tools)
    message = problem.message()
    assert "server 'catalog'" in message and "tool 'get_catalog_resource'" in message
    assert "field 'input_schema'" in message and "anyOf" in message
    assert "leave this server out" in message
    assert tool_problems("openai", tools) == []


def test_the_reference_servers_pass_every_rule_untouched() -> None:
    tools = reference_tools()
    for api in ("anthropic", "openai"):
        assert tool_problems(api, tools) == []
        assert adapt_tools(api, tools).adaptations == ()


def test_an_api_error_naming_a_tool_index_names_the_tool_and_its_server() -> None:
    tools = [*reference_tools("memory")[:2], *fixture_tools("union-schema-1.0.0", "catalog")]
    wire = adapt_tools("anthropic", tools)
    # The 400 text as recorded in anthropics/claude-code#5319.
    error = (
        "anthropic HTTP 400 (invalid_request_error): tools.2.custom.input_schema: input_schema does not "
        "support oneOf, allOf, or anyOf at the top level"
    )
    assert name_tools_in_error(error, wire).endswith(
        "(tools.2 is 'get_catalog_resource' of server 'catalog')"
    )
    openai_error = "Invalid 'tools[0].function.description': string too long."
    assert "tools[0] is 'create_entities' of server 'memory'" in name_tools_in_error(openai_error, wire)


def test_the_fixtures_were_listed_by_the_real_servers() -> None:
    readme = (FIXTURES / "README.md").read_text()
    for stem in ("sequential-thinking-2026.8.31", "union-schema-1.0.0"):
        assert (FIXTURES / f"{stem}.json").is_file() and stem in readme
    assert (Path(__file__).parents[2] / "reference_servers" / "union_schema_server.mjs").is_file()
