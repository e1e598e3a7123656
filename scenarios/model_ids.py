"""The providers a model id (``provider:name``) may name, said once.

The suite schema checks model ids against this list, the engine builds providers and judges
from it, and every "use ..." message is spelled from it; adding a provider starts here. It
sits at the bottom (no imports) so that scenarios and engine can both read it.
"""

from __future__ import annotations

OFFLINE = "offline"
"""The built-in agent and judge: no key, no network."""

API_KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
"""Each provider reached over an API, with the variable its key is read from by default."""

BASE_URL_ENV = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL"}
"""The variable that may point each API provider at another endpoint."""

API_PROVIDERS = tuple(API_KEY_ENV)
AGENT_PROVIDERS = (*API_PROVIDERS, OFFLINE)

OFFLINE_JUDGE = "lexical"
"""The offline judge's one name."""

OFFLINE_AGENT_FORM = f"{OFFLINE}:POLICY"
OFFLINE_JUDGE_FORM = f"{OFFLINE}:{OFFLINE_JUDGE}"
API_FORMS = tuple(f"{provider}:NAME" for provider in API_PROVIDERS)


def split_model_id(model_id: str) -> tuple[str, str]:
    """``"openai:gpt-x"`` -> ``("openai", "gpt-x")``; the name is empty when there is none."""
    provider, _, name = model_id.partition(":")
    return provider, name


def one_of(forms: tuple[str, ...] | list[str], *, quote: bool = True) -> str:
    """``'a', 'b' or 'c'``: the forms a message offers, in the order given."""
    shown = [f"'{form}'" if quote else form for form in forms]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"


AGENT_FORMS_TEXT = one_of([*API_FORMS, OFFLINE_AGENT_FORM])
"""``'anthropic:NAME', 'openai:NAME' or 'offline:POLICY'``: what a suite's ``models`` accepts."""

JUDGE_FORMS_TEXT = one_of([OFFLINE_JUDGE_FORM, *API_FORMS])
"""``'offline:lexical', 'anthropic:NAME' or 'openai:NAME'``: what a judge model accepts."""


__all__ = [
    "AGENT_FORMS_TEXT",
    "AGENT_PROVIDERS",
    "API_FORMS",
    "API_KEY_ENV",
    "API_PROVIDERS",
    "BASE_URL_ENV",
    "JUDGE_FORMS_TEXT",
    "OFFLINE",
    "OFFLINE_AGENT_FORM",
    "OFFLINE_JUDGE",
    "OFFLINE_JUDGE_FORM",
    "one_of",
    "split_model_id",
]
