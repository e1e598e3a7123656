"""Print citation grounding's verdicts on the real-answer excerpt: counts per session and in all,
then every non-grounded citation with its reason (``-v``), as the installed proctor decides them.

    .venv/bin/python tests/engine/scoring/sense_answers/count_verdicts.py [-v] [--status hallucinated]

Run from any checkout: the excerpt is read from this folder, the grounding from the ``proctor``
that the interpreter imports (so the same script measures an older checkout's rules too).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from excerpt import REPOS, answers, repo

from proctor.engine.scoring import check_citations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-v", action="store_true", help="list the citations with the status below")
    parser.add_argument("--status", default="hallucinated", help="which citations -v lists")
    args = parser.parse_args()
    total: Counter[str] = Counter()
    for name in REPOS:
        view = repo(name)
        for a in (a for a in answers() if a.repo == name):
            results = check_citations(a.text, view)
            counts = Counter(r.status for r in results)
            total.update(counts)
            line = " ".join(f"{k} {counts[k]}" for k in ("grounded", "unresolved", "hallucinated"))
            print(f"{a.session:<18} {line}")
            for r in results if args.v else []:
                if r.status == args.status:
                    print(f"    {r.citation.raw!r}: {r.reason}")
    print(
        f"{'all 20 sessions':<18} "
        + " ".join(f"{k} {total[k]}" for k in ("grounded", "unresolved", "hallucinated"))
    )


if __name__ == "__main__":
    main()
