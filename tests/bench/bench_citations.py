"""Benchmark citation grounding on a ~3,000-file pinned repository (a script, not a test).

Builds the repository with ``materialize()`` in a temporary folder, classifies >= 100k
citations (grounded, suffix-matched, ambiguous, missing, past EOF, symbol offsets, ranges,
hostile paths) through the public ``classify`` and prints citations/s next to a reference loop
(a plain dict lookup of the path and an EOF comparison over the same citations, in the same
run). Target: >= 50,000 citations/s warm.

    .venv/bin/python tests/bench/bench_citations.py [--files 3000] [--citations 120000]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from proctor.engine.scoring import Citation, classify, extract_citations
from proctor.scenarios.repo import PinnedRepo, materialize

DIRS = 60


def _module(d: int, f: int, n_lines: int) -> str:
    lines = [f'"""module {d}/{f}"""', ""]
    k = 0
    while len(lines) < n_lines - 3:
        lines += [
            f"class Thing{d}_{f}_{k}:",
            f"    def run_{k}(self, x: int) -> int:",
            f"        return x + {k}",
            "",
        ]
        k += 1
    return "\n".join(lines[:n_lines]) + "\n"


def build_source(root: Path, n_files: int, rng: random.Random) -> dict[str, int]:
    """Write the files; return path -> line count."""
    sizes: dict[str, int] = {}
    per_dir = max(1, n_files // DIRS)
    for d in range(DIRS):
        pkg = root / f"pkg{d % 6}" / f"sub{d}"
        pkg.mkdir(parents=True, exist_ok=True)
        (pkg / "__init__.py").write_text(f'"""package {d}"""\n')
        sizes[f"pkg{d % 6}/sub{d}/__init__.py"] = 1
        for f in range(per_dir - 1):
            n = rng.randint(40, 160)
            (pkg / f"mod_{d}_{f}.py").write_text(_module(d, f, n))
            sizes[f"pkg{d % 6}/sub{d}/mod_{d}_{f}.py"] = n
    return sizes


def make_citations(sizes: dict[str, int], n: int, rng: random.Random) -> list[Citation]:
    paths = [p for p in sizes if not p.endswith("__init__.py")]
    out: list[Citation] = []
    for i in range(n):
        p = rng.choice(paths)
        size = sizes[p]
        d, f = p.rsplit("/", 1)[1].removeprefix("mod_").removesuffix(".py").split("_")
        line = rng.randint(3, size)
        k = max(0, (line - 3) // 4)
        kind = i % 10
        if kind in (0, 1, 2):  # grounded with a nearby symbol
            out.append(Citation("", 0, p, line, hint=f"Thing{d}_{f}_{k}"))
        elif kind == 3:  # unique suffix
            out.append(Citation("", 0, p.rsplit("/", 1)[1], line))
        elif kind == 4:  # ambiguous suffix
            out.append(Citation("", 0, "__init__.py", 1))
        elif kind == 5:  # missing file
            out.append(Citation("", 0, f"nope/missing_{i % 5000}.py", line))
        elif kind == 6:  # past EOF, or a 10,000-line range
            out.append(Citation("", 0, p, size + 1 + i % 50, end_line=None if i % 2 else size + 10_000))
        elif kind == 7:  # symbol far away
            out.append(Citation("", 0, p, 1, hint=f"run_{k + 5}"))
        elif kind == 8:  # symbol only
            out.append(Citation("", 0, p, symbol=f"Thing{d}_{f}_{k}"))
        else:  # hostile
            out.append(
                Citation("", 0, rng.choice(["../../etc/passwd", "/etc/passwd", "a\x00b.py", "~/.ssh/id"]), 1)
            )
    return out


def reference_loop(cites: list[Citation], sizes: dict[str, int]) -> int:
    ok = 0
    for c in cites:
        n = sizes.get(c.path)
        if n is not None and (c.line or 1) <= n:
            ok += 1
    return ok


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=3000)
    ap.add_argument("--citations", type=int, default=120_000)
    args = ap.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        src, dest = Path(tmp) / "src", Path(tmp) / "repo"
        t0 = time.perf_counter()
        sizes = build_source(src, args.files, rng)
        commit = materialize(src, dest)
        t1 = time.perf_counter()
        repo = PinnedRepo(dest, commit)
        repo.preload()
        t2 = time.perf_counter()
        print(f"repo: {len(repo.files())} files, materialize {t1 - t0:.2f}s, open+preload {t2 - t1:.2f}s")

        cites = make_citations(sizes, args.citations, rng)
        t3 = time.perf_counter()
        cold = Counter(classify(c, repo).status for c in cites)
        t4 = time.perf_counter()
        rounds = 3
        t5 = time.perf_counter()
        for _ in range(rounds):
            for c in cites:
                classify(c, repo)
        t6 = time.perf_counter()
        for _ in range(rounds):
            reference_loop(cites, sizes)
        t7 = time.perf_counter()

        n = len(cites)
        cold_rate = n / (t4 - t3)
        warm_rate = rounds * n / (t6 - t5)
        ref_rate = rounds * n / (t7 - t6)
        print(f"citations: {n:,}  buckets: {dict(sorted(cold.items()))}")
        print(f"classify, first pass (builds indexes): {cold_rate:>12,.0f} citations/s")
        print(f"classify, warm:                        {warm_rate:>12,.0f} citations/s")
        print(f"reference dict-lookup loop:            {ref_rate:>12,.0f} citations/s")
        print(f"ratio classify/reference:              {warm_rate / ref_rate:>12.3f}")
        met = warm_rate >= 50_000
        print(
            f"BENCH citations_per_s_warm {warm_rate:.0f} citations/s goal >=50000 {'PASS' if met else 'FAIL'}"
        )

        text = "\n".join(
            f"The `Thing{i}` class lives in pkg0/sub{i % 60}/mod_{i % 60}_{i % 40}.py:{i % 90 + 1}; "
            f"see also [run](pkg1/sub1/mod_1_2.py#L{i % 30 + 1}-L{i % 30 + 5}) and http://x.org/y.py:3."
            for i in range(20_000)
        )
        t8 = time.perf_counter()
        found = extract_citations(text)
        t9 = time.perf_counter()
        print(
            f"extract_citations: {len(text) / 1e6:.1f} MB, {len(found):,} citations in {t9 - t8:.2f}s "
            f"({len(found) / (t9 - t8):,.0f}/s)"
        )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
