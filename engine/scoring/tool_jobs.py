"""What job a tool does, of the two a miss is counted for: ``search`` (find where something is:
grep, glob, a symbol or text search) and ``read`` (show a file's contents). None for any other.

One rule for built-in tools and MCP tools alike, since an agent's own function tool is named as
freely as a server's:

1. Tools of the agent harnesses whose job is known by name (Claude Code's Read, Grep, Glob;
   opencode's and Gemini CLI's; proctor's baseline ``read_file``/``grep``; the harness tools that
   are neither, such as ``LS``, ``TodoRead``, ``WebSearch``, ``Task``).
2. A shell tool (Claude Code's Bash, Codex's shell, Gemini CLI's ``run_shell_command``) by the
   programs its command runs: ``grep``/``rg``/``ag``/``ack``/``find``/``fd``/``git grep`` search,
   ``cat``/``head``/``tail``/``less``/``more``/``bat``/``nl``/``sed -n`` read.
3. The words of its name: a search word (``search_files``, ``find_symbol``, ``grep``, ``lookup``)
   makes a search tool, whatever it searches; a read of a file (``read_text_file``,
   ``view_file``, ``get_file_contents``) a read tool, not a read of anything else (``read_graph``,
   ``get_file_info``). A web tool (``WebSearch``, ``web_fetch``) is neither.
4. Else its description's first words ("Search the codebase…", "Reads a file…").

A tool whose MCP annotations say it changes state (``destructiveHint`` true, ``readOnlyHint``
false) does neither job, whatever its name.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any, Final, Literal

Job = Literal["search", "read"]
JOBS: Final[tuple[Job, ...]] = ("search", "read")

_KNOWN: Final[dict[str, Job | None]] = {
    # Claude Code
    "read": "read",
    "grep": "search",
    "glob": "search",
    "notebookread": "read",
    "ls": None,
    "todoread": None,
    "todowrite": None,
    "websearch": None,
    "webfetch": None,
    "task": None,
    "agent": None,
    "toolsearch": None,  # Claude Code's search over its deferred MCP tools: finds tools, not code
    # Gemini CLI
    "read_file": "read",
    "read_many_files": "read",
    "search_file_content": "search",
    "google_web_search": None,
    "web_fetch": None,
    "list_directory": None,
    # opencode ("read", "grep", "glob" above), proctor's baseline ("read_file" above)
    "list": None,
    "list_files": None,
}
_SHELLS: Final = frozenset(
    {"bash", "shell", "local_shell", "run_shell_command", "exec_command", "execute_command", "run_command"}
)
_SHELL_PROGRAMS: Final = frozenset({"bash", "sh", "zsh", "dash"})
_SEARCH_PROGRAMS: Final = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "fd", "git-grep"})
_READ_PROGRAMS: Final = frozenset({"cat", "head", "tail", "less", "more", "bat", "nl"})
_SEARCH_WORDS: Final = frozenset({"search", "grep", "glob", "find", "lookup", "locate", "rg"})
_READ_WORDS: Final = frozenset({"read", "cat", "view", "open", "show"})
_CONTENT_WORDS: Final = frozenset({"content", "contents"})
_FILE_WORDS: Final = frozenset(
    {"file", "files", "source", "sources", "code", "text", "document", "documents"}
)
_NOT_LOCAL: Final = frozenset(
    {"web", "internet", "url", "urls", "http", "https", "browser", "google", "todo"}
)
_SEGMENT: Final = re.compile(r"\|\||&&|[|;&\n]")
_DESCRIPTION_SEARCH: Final = re.compile(
    r"^(?:search|searches|find|finds|grep|locate|locates|look up|looks up)\b"
)
_DESCRIPTION_READ: Final = re.compile(r"^reads? [^.]*?\bfiles?\b")


def words_of(name: str) -> list[str]:
    """A tool name's words: ``search_files``, ``searchFiles``, ``search-files`` are [search, files]."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


def _changes_state(annotations: Mapping[str, Any] | None) -> bool:
    if not annotations:
        return False
    return annotations.get("destructiveHint") is True or annotations.get("readOnlyHint") is False


def _command_words(arguments: Mapping[str, Any]) -> list[list[str]]:
    """The command of a shell call, as the words of each of its simple commands."""
    raw = arguments.get("command", arguments.get("cmd", ""))
    if isinstance(raw, list) and len(raw) >= 3 and str(raw[0]).rsplit("/", 1)[-1] in _SHELL_PROGRAMS:
        raw = str(raw[-1])  # ["bash", "-lc", "rg foo"], as Codex sends it
    text = " ".join(map(str, raw)) if isinstance(raw, list) else str(raw)
    out = []
    for segment in _SEGMENT.split(text):
        try:
            words = shlex.split(segment)
        except ValueError:
            words = segment.split()
        while words and ("=" in words[0] or words[0] in ("sudo", "env", "time", "command", "xargs")):
            words = words[1:]
        if words:
            out.append([words[0].rsplit("/", 1)[-1], *words[1:]])
    return out


def shell_job(arguments: Mapping[str, Any]) -> Job | None:
    """The job of a shell call: a search if any of its commands searches, else a read if any reads."""
    commands = _command_words(arguments)
    programs = {"git-grep" if c[0] == "git" and c[1:2] == ["grep"] else c[0] for c in commands}
    if programs & _SEARCH_PROGRAMS:
        return "search"
    if programs & _READ_PROGRAMS or any(c[0] == "sed" and "-n" in c for c in commands):
        return "read"
    return None


def _job_of_words(words: list[str]) -> Job | None:
    found = set(words)
    if found & _NOT_LOCAL:
        return None
    if found & _SEARCH_WORDS:
        return "search"
    if found & (_READ_WORDS | _CONTENT_WORDS) and found & _FILE_WORDS:
        return "read"
    return None


def _job_of_description(description: str) -> Job | None:
    lead = " ".join(description.lower().split())
    if _DESCRIPTION_SEARCH.match(lead):
        return "search"
    if _DESCRIPTION_READ.match(lead):
        return "read"
    return None


def tool_job(
    name: str,
    *,
    description: str = "",
    annotations: Mapping[str, Any] | None = None,
    arguments: Mapping[str, Any] | None = None,
) -> Job | None:
    """The job of a tool (see the module doc); a shell's needs the call's ``arguments``."""
    if _changes_state(annotations):
        return None
    key = name.lower()
    if key in _SHELLS:
        return shell_job(arguments or {})
    if key in _KNOWN:
        return _KNOWN[key]
    words = words_of(name)
    if set(words) & _NOT_LOCAL:
        return None
    return _job_of_words(words) or _job_of_description(description)


__all__ = ["JOBS", "Job", "shell_job", "tool_job", "words_of"]
