"""Write the real-answer excerpt that the grounding tests read, from git objects only.

Source of the answers: github.com/luuuc/sense (MIT), the first source document's benchmark
harness, at commit 74576321685c22a1b84571346487aa5c75e3867e (2026-08-22). Its
``bench/results/TOOL/REPO/transcript.json`` files are Claude Code sessions (``claude -p
--output-format stream-json --verbose``: one JSON event per line) answering questions about four
public repositories at pinned commits; ``run_meta.json`` names each session's commit (short),
``bench/global/docker/baseline/Dockerfile`` the full ones the harness fetched. The excerpt keeps,
for the 5 tools x 4 repositories, the answer as that harness scores it (its
``bench/lib/scorer.py`` ``read_transcript_texts``: the text blocks of every ``assistant`` event,
joined by a newline) and nothing else of the session.

For each pinned commit it keeps what citation grounding reads: the full list of paths at the
commit, the licence, and the contents of

* every file an answer names: a token that looks like a file (``name.ext``, with or without
  folders) and is a path at the commit, or the one path ending with it on whole components;
* for a ``Name:12`` / ``Owner.name:12`` token that is no file and is clearly code (a symbol cited
  at a line: the name has a ``_``, an inner capital or an owner, or stands in backticks), every
  file in which that name occurs as a whole identifier, case-insensitively, with the owner too
  when there is one; these names are listed under ``names`` (for them the excerpt is complete).

    git clone --bare https://github.com/luuuc/sense sense.git
    git clone --bare https://github.com/pallets/flask flask.git     # and gin-gonic/gin,
    ...                                                              # tokio-rs/axum, javalin/javalin
    python make_excerpt.py --sense sense.git --flask flask.git --gin gin.git \\
        --axum axum.git --javalin javalin.git [--sense-commit SHA]

Python 3.11, standard library only; git 2.x. The output is byte-for-byte the same on every run
from the same commits (sorted keys, gzip without a timestamp).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import subprocess
from pathlib import Path

SENSE_COMMIT = "74576321685c22a1b84571346487aa5c75e3867e"
TOOLS = ("baseline", "gitnexus", "probe", "sense", "serena")
# repo -> (GitHub name, full pinned commit, licence file): the commits of the harness's Dockerfile.
TARGETS = {
    "flask": ("pallets/flask", "2ac89889f4cc330eabd50f295dcef02828522c69", "LICENSE.txt"),
    "gin": ("gin-gonic/gin", "d3ffc9985281dcf4d3bef604cce4e662b1a327a6", "LICENSE"),
    "axum": ("tokio-rs/axum", "9f4d52e310a6053e49f3db09ce02f723a7a3f5bb", "LICENSE"),
    "javalin": ("javalin/javalin", "7078afcc794b2a55e7615a14c250ee1330c52999", "LICENSE"),
}
HERE = Path(__file__).parent
_FILE_TOKEN = re.compile(r"[\w.~/\\-]*\w\.[A-Za-z][\w+-]*")
_SYMBOL_AT_LINE = re.compile(r"(?<![\w./\\-])(`?)([A-Za-z_]\w*(?:[.#][A-Za-z_]\w*)*)(?:\(\))?`?:L?\d")
_CODE_NAME = re.compile(r"\w*_\w*[A-Za-z]\w*|[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*|.*[.#].*")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_EXTENSIONS = frozenset("py go rs java kt kts md toml yaml yml json txt rst html js ts cfg".split())


def git(gitdir: str, *args: str) -> bytes:
    return subprocess.run(["git", "-C", gitdir, *args], capture_output=True, check=True).stdout


def answer_text(transcript: bytes) -> str:
    parts: list[str] = []
    for raw in transcript.decode("utf-8").splitlines():
        try:
            event = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(event, dict) or event.get("type") != "assistant":
            continue
        for block in event.get("message", {}).get("content", []) or []:
            if isinstance(block, dict) and block.get("type") == "text" and block.get("text"):
                parts.append(block["text"])
    return "\n".join(parts)


def resolve(token: str, paths: set[str], by_suffix: dict[str, list[str]]) -> str | None:
    token = token.replace("\\", "/").lstrip("./")
    if token in paths:
        return token
    hits = by_suffix.get(token, [])
    return hits[0] if len(hits) == 1 else None


def cited_files(texts: list[str], paths: set[str]) -> tuple[set[str], set[str], set[tuple[str, str]]]:
    """(files named by path, bare names cited at a line, (owner, name) pairs cited at a line)."""
    by_suffix: dict[str, list[str]] = {}
    for p in paths:
        parts = p.split("/")
        for i in range(1, len(parts)):
            by_suffix.setdefault("/".join(parts[i:]), []).append(p)
    files: set[str] = set()
    names: set[str] = set()
    owned: set[tuple[str, str]] = set()
    for text in texts:
        for token in _FILE_TOKEN.findall(text):
            if (hit := resolve(token, paths, by_suffix)) is not None:
                files.add(hit)
        for tick, symbol in _SYMBOL_AT_LINE.findall(text):
            if symbol.rsplit(".", 1)[-1].lower() in _EXTENSIONS:
                continue  # a file name (app.py, mod.rs), resolvable or not
            if not tick and not _CODE_NAME.fullmatch(symbol):
                continue
            parts = re.split(r"[.#]", symbol)
            if len(parts) == 1:
                names.add(parts[0].lower())
            else:
                owned.add((parts[-2].lower(), parts[-1].lower()))
    return files, names, owned


def commit_excerpt(repo: str, gitdir: str, texts: list[str]) -> dict[str, object]:
    github, commit, licence = TARGETS[repo]
    listing = git(gitdir, "ls-tree", "-r", "-z", "--full-tree", commit).split(b"\x00")
    blobs: dict[str, str] = {}
    for item in listing:
        if not item:
            continue
        meta, _, name = item.partition(b"\t")
        mode, kind, sha = meta.decode().split(" ")
        if kind == "blob" and mode != "120000":
            blobs[name.decode("utf-8", errors="surrogateescape")] = sha
    paths = set(blobs)
    files, names, owned = cited_files(texts, paths)
    contents: dict[str, str] = {}
    for path in sorted(paths):
        data = git(gitdir, "cat-file", "blob", blobs[path])
        if b"\x00" in data[:8000]:
            continue  # binary: grounding reads text
        text = data.decode("utf-8", errors="replace")
        idents = {i.lower() for i in _IDENT.findall(text)} if names or owned else set()
        if path in files or idents & names or any(o in idents and n in idents for o, n in owned):
            contents[path] = text
    return {
        "repo": github,
        "url": f"https://github.com/{github}",
        "commit": commit,
        "licence_file": licence,
        "licence": git(gitdir, "show", f"{commit}:{licence}").decode("utf-8"),
        "paths": sorted(paths),
        "names": sorted(names | {f"{o}.{n}" for o, n in owned}),
        "files": contents,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sense", required=True, help="a clone (bare is fine) of luuuc/sense")
    parser.add_argument("--sense-commit", default=SENSE_COMMIT)
    for repo in TARGETS:
        parser.add_argument(f"--{repo}", required=True, help=f"a clone of {TARGETS[repo][0]}")
    args = parser.parse_args()
    sense = args.sense
    licence = git(sense, "show", f"{args.sense_commit}:LICENSE").decode("utf-8")
    if not licence.startswith("MIT License"):
        raise SystemExit(f"luuuc/sense at {args.sense_commit} is not MIT-licensed; its answers stay out")
    answers: list[dict[str, str]] = []
    for repo, (_, commit, _) in TARGETS.items():
        texts = []
        for tool in TOOLS:
            folder = f"bench/results/{tool}/{repo}"
            meta = json.loads(git(sense, "show", f"{args.sense_commit}:{folder}/run_meta.json"))
            if not commit.startswith(str(meta["repo_commit"])):
                raise SystemExit(f"{folder}: run_meta names {meta['repo_commit']}, not {commit}")
            text = answer_text(git(sense, "show", f"{args.sense_commit}:{folder}/transcript.json"))
            texts.append(text)
            answers.append(
                {
                    "tool": tool,
                    "repo": repo,
                    "source": f"{folder}/transcript.json",
                    "commit": commit,
                    "text": text,
                }
            )
        excerpt = commit_excerpt(repo, getattr(args, repo), texts)
        out = HERE / f"{repo}.json.gz"
        body = json.dumps(excerpt, sort_keys=True, ensure_ascii=False, indent=0).encode("utf-8")
        out.write_bytes(gzip.compress(body, mtime=0))
        files = excerpt["files"]
        assert isinstance(files, dict)
        print(
            f"wrote {out.name}: {len(excerpt['paths'])} paths, {len(files)} files, {out.stat().st_size} bytes"
        )  # type: ignore[arg-type]
    doc = {
        "source": "https://github.com/luuuc/sense",
        "sense_commit": args.sense_commit,
        "licence": licence,
        "answers": answers,
    }
    out = HERE / "answers.json"
    out.write_text(json.dumps(doc, sort_keys=True, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out.name}: {len(answers)} answers, {out.stat().st_size} bytes")


if __name__ == "__main__":
    main()
