"""Answers that say nothing: empty, a refusal, or "I could not find anything".

A judge scoring a non-answer against a scenario without checks, or a lexical judge whose terms
happen to appear in an apology, must not reward it. Only short answers are tested, and one that
names code (two or more identifiers, paths or numbers) is not a non-answer even if it starts with
"I could not find ...", so a substantive answer is still judged on its content.
"""

from __future__ import annotations

import re

MAX_NON_ANSWER_CHARS = 400
_NON_ANSWER = re.compile(
    r"\b(?:i\s+(?:could\s*n[o']t|couldn't|can\s*n[o']t|can't|cannot|was\s+(?:not\s+)?unable|am\s+unable|'m\s+unable"
    r"|do\s*n[o']t|don't|did\s*n[o']t|didn't)\s+(?:find|locate|determine|answer|help|access|know|see|get|retrieve|complete)"
    r"|(?:no|nothing)\s+(?:relevant|useful|matching)\s+(?:information|results?|data|files?)?"
    r"|(?:unable|not\s+able)\s+to\s+(?:find|locate|determine|answer|help|access|complete|retrieve)"
    r"|i'?m\s+sorry|i\s+am\s+sorry|as\s+an\s+ai\b|i\s+apologi[sz]e)",
    re.IGNORECASE,
)


_CONTENT = re.compile(r"`[^`]+`|\b\w*(?:\d|_|\.[A-Za-z])\w*\b|\b[a-z]+[A-Z]\w*\b")


def is_non_answer(answer: str) -> bool:
    """True for an empty answer, or a short one that only declines, apologises or finds nothing."""
    text = " ".join(answer.split()).replace("\u2019", "'")
    if not text:
        return True
    if len(text) > MAX_NON_ANSWER_CHARS or _NON_ANSWER.search(text) is None:
        return False
    return len(_CONTENT.findall(text)) < 2


__all__ = ["MAX_NON_ANSWER_CHARS", "is_non_answer"]
