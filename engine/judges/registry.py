"""From the suite's ``judge.model`` to a judge."""

from __future__ import annotations

from proctor.engine.judges.base import Judge
from proctor.engine.judges.offline import OfflineJudge
from proctor.engine.providers.registry import ProviderConfigError
from proctor.scenarios.schema import Scoring


def make_judge(model_id: str, scoring: Scoring) -> Judge:
    provider, _, name = model_id.partition(":")
    if provider == "offline":
        if name not in ("", "lexical"):
            raise ProviderConfigError(f"judge {model_id!r}: the offline judge is 'offline:lexical'")
        return OfflineJudge(scoring.claims_pass_threshold)
    raise ProviderConfigError(
        f"judge {model_id!r}: LLM judges are not available in this build; use offline:lexical"
    )
