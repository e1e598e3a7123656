"""JSON as MCP clients write their configuration files: comments, trailing commas, UI-only keys.

Shared by the suite loader (a suite's ``servers_file``, ``servers check``) and the mcpServers
importer, so a file Claude Desktop, Cursor or VS Code accepts is read the same way everywhere.
"""

from __future__ import annotations

# Keys that only steer a client's UI or approval flow; they mean nothing to a server's launch.
CLIENT_ONLY_KEYS = frozenset(
    {
        "autoApprove",
        "alwaysAllow",
        "autoapprove",
        "gallery",
        "version",
        "icon",
        "name",
        "dev",
        "networkTimeout",
        "trust",
    }
)


def strip_jsonc(text: str) -> str:
    """JSON with ``//`` and ``/* */`` comments and trailing commas, as strict JSON."""
    out: list[str] = []
    i, n = 0, len(text)
    in_string = False
    while i < n:
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
            out.append(c)
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        elif c in "}]":
            j = len(out) - 1
            while j >= 0 and out[j].isspace():
                j -= 1
            if j >= 0 and out[j] == ",":
                del out[j]
            out.append(c)
        else:
            out.append(c)
        i += 1
    return "".join(out)


__all__ = ["CLIENT_ONLY_KEYS", "strip_jsonc"]
