"""Check ``proctor export --format otel --endpoint`` against a real Arize Phoenix (by hand, not pytest).

Phoenix is too heavy for the test suite (the file name keeps pytest from collecting it). Run it
against a Phoenix on 127.0.0.1; it plays the demo suite headless into a new database (new run
id, so new span ids: Phoenix ignores spans it already has), pushes the traces, reads every trace
back through Phoenix's GraphQL API and checks, trace by trace, against the run database:

- the span tree: one ``invoke_agent ARM`` root (kind AGENT) per trial, every ``chat`` (LLM) and
  ``execute_tool`` (TOOL) span its child, as many spans as the OTLP/JSON file has;
- inputs and outputs: the root's input is the scenario's prompt and its output the trial's final
  answer; every LLM span has the system prompt, the user prompt and the model's reply as
  messages; every tool span has its arguments and result;
- the baseline's built-in tools and tool retrieval's ``route`` carry no ``mcp.method.name``, the
  MCP servers' tools ``tools/call``;
- scores: one ``gen_ai.evaluation.result`` event per stored score with its value;
- tokens: Phoenix's cumulative token count of the root equals the trial's stored tokens.

It also POSTs one line of the OTLP/JSON file the way README's former curl recipe did, to show
what Phoenix answers to it. Prints one line per check and exits 1 if any failed.

    # Phoenix, in a venv of its own (tried with arize-phoenix 20.26.1; with PHOENIX_ENABLE_AUTH,
    # pass --header 'authorization=Bearer KEY'):
    PHOENIX_HOST=127.0.0.1 PHOENIX_PORT=16006 PHOENIX_GRPC_PORT=14317 phoenix serve &
    .venv/bin/python tests/integration/phoenix_check.py --phoenix http://127.0.0.1:16006
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

from proctor.scenarios.demo import SUITE_DIR
from proctor.store.events import AgentBrief
from proctor.store.read.reader import StoreReader

SPAN_FIELDS = """name spanKind parentId statusCode context { spanId traceId }
  input { value } output { value } attributes cumulativeTokenCountTotal
  events { name attributes }"""


HEADERS: dict[str, str] = {}  # --header: Phoenix with auth takes the same API key for both


def graphql(phoenix: str, query: str, variables: dict[str, Any]) -> dict[str, Any]:
    body = json.dumps({"query": query, "variables": variables}).encode()
    request = urllib.request.Request(
        f"{phoenix}/graphql", body, {"Content-Type": "application/json", **HEADERS}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        data: dict[str, Any] = json.load(response)
    if data.get("errors"):
        raise RuntimeError(f"GraphQL errors: {data['errors']}")
    return data["data"]


def phoenix_trace(phoenix: str, trace_id: str) -> list[dict[str, Any]]:
    """Every span Phoenix holds for ``trace_id`` (in any project)."""
    query = (
        "query($id: ID!) { projects { edges { node { name trace(traceId: $id) { "
        f"spans(first: 1000) {{ edges {{ node {{ {SPAN_FIELDS} }} }} }} }} }} }} }} }}"
    )
    data = graphql(phoenix, query, {"id": trace_id})
    spans: list[dict[str, Any]] = []
    for edge in data["projects"]["edges"]:
        trace = edge["node"]["trace"]
        if trace:
            spans += [e["node"] for e in trace["spans"]["edges"]]
    return spans


def settled_trace(phoenix: str, trace_id: str, expected: int, wait_s: float = 30.0) -> list[dict[str, Any]]:
    """The trace once Phoenix has stored all ``expected`` spans (it inserts in the background)."""
    deadline = time.monotonic() + wait_s
    while True:
        spans = phoenix_trace(phoenix, trace_id)
        if len(spans) >= expected or time.monotonic() > deadline:
            return spans
        time.sleep(0.5)


class Checks:
    def __init__(self) -> None:
        self.failed: list[str] = []
        self.passed: Counter[str] = Counter()

    def check(self, name: str, ok: bool, detail: str = "") -> None:
        if ok:
            self.passed[name] += 1
        else:
            self.failed.append(f"{name}: {detail}")


def run_demo(proctor: str, db: Path) -> None:
    print(f"$ {proctor} run {SUITE_DIR} --headless --db {db}", flush=True)
    done = subprocess.run(
        [proctor, "run", str(SUITE_DIR), "--headless", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    print(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "", f"(exit {done.returncode})")
    if done.returncode != 0:
        sys.exit(f"the demo run failed: {done.stderr[-2000:]}")


def push(proctor: str, db: Path, phoenix: str, out: Path) -> None:
    argv = [proctor, "export", str(db), "--format", "otel", "-o", str(out), "--endpoint", phoenix]
    print("$ " + " ".join(argv) + "".join(f" --header {k}=…" for k in HEADERS), flush=True)
    argv += [a for k, v in HEADERS.items() for a in ("--header", f"{k}={v}")]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    print(done.stderr.strip(), f"(exit {done.returncode})")
    if done.returncode != 0:
        sys.exit("the push failed")


def readme_json_recipe(phoenix: str, line: str) -> str:
    request = urllib.request.Request(
        f"{phoenix}/v1/traces", line.encode(), {"Content-Type": "application/json", **HEADERS}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return f"HTTP {response.status}"
    except urllib.error.HTTPError as exc:
        return f"HTTP {exc.code} {exc.read().decode(errors='replace')[:80]}"


def attribute_tree(span: dict[str, Any]) -> dict[str, Any]:
    raw = span["attributes"]
    value: dict[str, Any] = json.loads(raw) if isinstance(raw, str) else raw
    return value


def check_trace(checks: Checks, spans: list[dict[str, Any]], file_spans: list[dict[str, Any]], trial: Any,
                prompts: list[str], scores: dict[str, float | None]) -> None:  # fmt: skip
    roots = [s for s in spans if not s["parentId"]]
    checks.check("tree: one root", len(roots) == 1, f"trial {trial.id}: {len(roots)} roots")
    if len(roots) != 1:
        return
    (root,) = roots
    where = f"trial {trial.id} ({trial.arm})"
    checks.check(
        "tree: span count", len(spans) == len(file_spans), f"{where}: {len(spans)} != {len(file_spans)}"
    )
    checks.check("tree: root is the agent", root["name"] == f"invoke_agent {trial.arm}" and root["spanKind"] == "agent",
                 f"{where}: {root['name']} {root['spanKind']}")  # fmt: skip
    children = [s for s in spans if s is not root]
    checks.check(
        "tree: children under the root",
        all(s["parentId"] == root["context"]["spanId"] for s in children),
        where,
    )
    kinds = {("chat " in s["name"], s["spanKind"]) for s in children}
    checks.check(
        "tree: chat=LLM, execute_tool=TOOL", kinds <= {(True, "llm"), (False, "tool")}, f"{where}: {kinds}"
    )
    checks.check(
        "input: root input is the prompt", (root["input"] or {}).get("value") == "\n\n".join(prompts), where
    )
    checks.check("output: root output is the answer",
                 (root["output"] or {}).get("value") == trial.final_answer and bool(trial.final_answer), where)  # fmt: skip
    for s in children:
        a = attribute_tree(s)
        if s["spanKind"] == "llm":
            messages = [m["message"] for m in a.get("llm", {}).get("input_messages", [])]
            out = [m["message"] for m in a.get("llm", {}).get("output_messages", [])]
            checks.check("input: LLM messages start system, user",
                         [m.get("role") for m in messages[:2]] == ["system", "user"] and messages[1].get("content") == prompts[0],
                         f"{where} {s['name']}: {[m.get('role') for m in messages]}")  # fmt: skip
            checks.check("output: LLM reply message", len(out) == 1 and out[0].get("role") == "assistant"
                         and bool(out[0].get("content") or out[0].get("tool_calls")), f"{where}: {out}")  # fmt: skip
            checks.check("output: LLM output value", bool((s["output"] or {}).get("value")), where)
        else:
            mcp = a.get("mcp", {}).get("method", {}).get("name")
            builtin = trial.arm == "baseline" or s["name"] == "execute_tool route"  # run in proctor
            checks.check("tools: built-in and route not MCP, MCP servers' tools/call", mcp == (None if builtin else "tools/call"),
                         f"{where} {s['name']}: mcp.method.name={mcp}")  # fmt: skip
            checks.check("tools: arguments (input) and result (output)", "parameters" in a.get("tool", {})
                         and bool((s["input"] or {}).get("value")) and bool((s["output"] or {}).get("value")),
                         f"{where} {s['name']}")  # fmt: skip
    events = {}
    for e in root["events"]:
        if e["name"] == "gen_ai.evaluation.result":
            ea = e["attributes"] if isinstance(e["attributes"], dict) else json.loads(e["attributes"])
            flat = {k: v for k, v in _flatten(ea)}
            events[flat["gen_ai.evaluation.name"]] = flat.get("gen_ai.evaluation.score.value")
    checks.check("scores: one event per stored score", events.keys() == scores.keys(),
                 f"{where}: {sorted(events)} != {sorted(scores)}")  # fmt: skip
    checks.check(
        "scores: values",
        all(events.get(k) == pytest_approx(v) for k, v in scores.items()),
        f"{where}: {events} {scores}",
    )
    tokens = (trial.input_tokens or 0) + (trial.output_tokens or 0)
    checks.check("tokens: cumulative = stored", root["cumulativeTokenCountTotal"] == tokens,
                 f"{where}: {root['cumulativeTokenCountTotal']} != {tokens}")  # fmt: skip


def pytest_approx(v: float | None) -> Any:
    class _Approx:
        def __eq__(self, other: object) -> bool:
            if v is None or other is None:
                return v is other
            return isinstance(other, int | float) and abs(float(other) - v) < 1e-9

    return _Approx()


def _flatten(tree: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for k, v in tree.items():
        key = f"{prefix}{k}"
        out += _flatten(v, key + ".") if isinstance(v, dict) else [(key, v)]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phoenix", default="http://127.0.0.1:6006", help="Phoenix's base URL")
    parser.add_argument("--proctor", default=str(Path(sys.executable).with_name("proctor")))
    parser.add_argument("--db", type=Path, help="an existing run database (default: a new demo run)")
    parser.add_argument(
        "--header", action="append", default=[], help="KEY=VALUE, e.g. authorization=Bearer KEY"
    )
    args = parser.parse_args()
    HEADERS.update(h.split("=", 1) for h in args.header)
    work = Path(tempfile.mkdtemp(prefix="phoenix-check-"))
    db = args.db or work / "demo.db"
    if args.db is None:
        run_demo(args.proctor, db)
    out = work / "traces.jsonl"
    push(args.proctor, db, args.phoenix, out)
    lines = out.read_text().splitlines()
    print(f"README's former OTLP/JSON curl recipe, one line to {args.phoenix}/v1/traces: "
          f"{readme_json_recipe(args.phoenix, lines[0])}")  # fmt: skip
    checks = Checks()
    with StoreReader(db) as reader:
        trials = {t.id: t for t in reader.trials()}
        for line in lines:
            file_spans = line_spans(json.loads(line))
            root = next(s for s in file_spans if not s.get("parentSpanId"))
            trial_id = next(
                a["value"]["intValue"] for a in root["attributes"] if a["key"] == "proctor.trial.id"
            )
            trial = trials[int(trial_id)]
            briefs = [e.event for e in reader.trial_events(trial.id) if isinstance(e.event, AgentBrief)]
            prompts = briefs[0].prompts if briefs else [""]
            scores = {s.name: s.value for s in reader.scores(trial.id)}
            spans = settled_trace(args.phoenix, root["traceId"], len(file_spans))
            checks.check("found in Phoenix", bool(spans), f"trace {root['traceId']}")
            if spans:
                check_trace(checks, spans, file_spans, trial, prompts, scores)
    print(f"checked {len(lines)} traces read back from Phoenix:")
    for name, n in checks.passed.items():
        print(f"  ok   {name} ({n})")
    for failure in checks.failed:
        print(f"  FAIL {failure}")
    print("PASS" if not checks.failed else f"FAIL: {len(checks.failed)} check(s)")
    return 1 if checks.failed else 0


def line_spans(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for rs in request["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]


if __name__ == "__main__":
    sys.exit(main())
