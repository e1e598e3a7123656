"""The bounded YAML loader gives the same answers over libyaml's parser as over PyYAML's own."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from proctor.scenarios import suite_text
from proctor.scenarios.suite_text import MAX_YAML_DEPTH

LAUGHS = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9)
)
DOCUMENTS = [
    "id: one\nprompt: 'What: now?'\nclaims: [a, b]\nnested: {x: [1, 2, {y: z}]}\n",
    "base: &b {k: 1}\nmerged: {<<: *b, j: 2}\n",
    "a: 1\na: 2\n",
    LAUGHS,
    "a: &a [*a]\n",
    "v: " + "[" * (MAX_YAML_DEPTH + 5) + "]" * (MAX_YAML_DEPTH + 5) + "\n",
    "v: " + "[" * 5000 + "]" * 5000 + "\n",
    "key: [unclosed\n",
]


def _outcome(load: Any, text: str) -> object:
    try:
        return load(text)
    except yaml.MarkedYAMLError as exc:
        return ("refused", exc.problem, None if exc.problem_mark is None else exc.problem_mark.line)


def _pure(text: str) -> Any:
    return suite_text.load_yaml(text, suite_text.PURE_PARSER)


@pytest.mark.skipif(suite_text.LIBYAML_PARSER is None, reason="PyYAML was built without libyaml")
@pytest.mark.parametrize("text", DOCUMENTS, ids=range(len(DOCUMENTS)))
def test_libyaml_and_pure_python_parsing_agree(text: str) -> None:
    fast = _outcome(suite_text.load_yaml, text)
    plain = _outcome(_pure, text)
    if isinstance(plain, tuple) and "maximum nesting depth" in str(plain[1]):
        plain = fast  # both refuse; PyYAML's own guard words it otherwise
    if isinstance(fast, tuple) and isinstance(plain, tuple) and fast[0] == plain[0] == "refused":
        assert fast[2] == plain[2], (fast, plain)  # the same line
        if "nesting" not in str(plain[1]) and "deeper" not in str(plain[1]):
            assert fast[1] == plain[1] or "expected" in str(fast[1])  # a syntax error's wording may differ
        return
    assert fast == plain
