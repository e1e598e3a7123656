"""What a server says and asks outside tool results, filed under the calls it concerns.

Progress arrives per request, so it is always filed under its own call. Log messages and the
server's requests to the client (roots, sampling, elicitation) arrive on the session; they are
filed under every call in flight at that moment, marked ``shared`` when there was more than one
(a shared connection serves several trials at once, and the protocol does not say which one a
log line is about). Sampling and elicitation are declined and recorded: a server that needs
them gets a clear refusal instead of a hang, and the transcript shows that it asked.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import mcp.types as mtypes
from mcp.client.session import ClientRequestContext

from proctor.engine.tools.toolbox import CURRENT_SAMPLER, Sampler, SampleRequest
from proctor.store.events import McpNotice
from proctor.store.redaction import redact

MAX_NOTICES_PER_CALL = 200
_TEXT_CHARS = 2000
# JSON-RPC error code the MCP specification gives for "the user rejected the sampling request".
_REJECTED = -1


class _Inbox:
    """One call's notices, bounded: a server that floods costs a count, not memory."""

    def __init__(self, sampler: Sampler | None) -> None:
        self.notices: list[McpNotice] = []
        self.dropped = 0
        self.sampler = sampler

    def add(self, notice: McpNotice) -> None:
        if len(self.notices) < MAX_NOTICES_PER_CALL:
            self.notices.append(notice)
        else:
            self.dropped += 1

    def result(self, server: str) -> tuple[McpNotice, ...]:
        if not self.dropped:
            return tuple(self.notices)
        more = McpNotice(
            server=server,
            method="proctor/dropped",
            message=f"{self.dropped:,} more notices during this call were not recorded "
            f"(limit {MAX_NOTICES_PER_CALL} per call)",
        )
        return (*self.notices, more)


class NoticeBoard:
    def __init__(self, server: str, roots: list[str], sampling: str = "decline") -> None:
        self.server = server
        self.roots = [Path(r) for r in roots if r]
        self.sampling = sampling
        self._inflight: dict[int, _Inbox] = {}
        self._next = 0

    @contextmanager
    def call(self) -> Iterator[tuple[_Inbox, Any]]:
        """An inbox for one tool call and the progress callback to pass with it."""
        key, self._next = self._next, self._next + 1
        inbox = _Inbox(CURRENT_SAMPLER.get())
        self._inflight[key] = inbox

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            inbox.add(
                McpNotice(
                    server=self.server,
                    method="notifications/progress",
                    progress=progress,
                    total=total,
                    message=_clip(message or ""),
                )
            )

        try:
            yield inbox, on_progress
        finally:
            del self._inflight[key]

    def _file(self, notice: McpNotice) -> None:
        inboxes = list(self._inflight.values())
        shared = len(inboxes) > 1
        for inbox in inboxes:
            inbox.add(notice.model_copy(update={"shared": shared}) if shared else notice)

    async def on_log(self, params: mtypes.LoggingMessageNotificationParams) -> None:
        if params.level == "debug":
            # Legacy (pre-2026) servers log at every level unless asked otherwise; info and up is kept.
            return
        data = params.data if isinstance(params.data, str) else json.dumps(params.data, default=str)
        prefix = f"{params.logger}: " if params.logger else ""
        self._file(
            McpNotice(
                server=self.server,
                method="notifications/message",
                level=params.level,
                message=_clip(prefix + data),
            )
        )

    async def on_list_roots(self, context: ClientRequestContext) -> mtypes.ListRootsResult:
        roots = [mtypes.Root(uri=r.resolve().as_uri(), name=r.name or str(r)) for r in self.roots]
        answer = ", ".join(str(r.uri) for r in roots) or "no roots"
        self._file(McpNotice(server=self.server, method="roots/list", answer=answer))
        return mtypes.ListRootsResult(roots=roots)

    async def on_sampling(
        self, context: ClientRequestContext, params: mtypes.CreateMessageRequestParams
    ) -> mtypes.CreateMessageResult | mtypes.ErrorData:
        asked = " | ".join(_message_text(m) for m in params.messages)
        sampler, reason = self._sampler()
        if sampler is None:
            answer = f"declined: {reason}"
            self._file(
                McpNotice(
                    server=self.server, method="sampling/createMessage", message=_clip(asked), answer=answer
                )
            )
            return mtypes.ErrorData(code=_REJECTED, message=f"proctor {answer}")
        request = SampleRequest(
            system=params.system_prompt or "",
            messages=tuple((m.role, _message_text(m)) for m in params.messages),
            max_tokens=params.max_tokens,
        )
        try:
            reply = await sampler(request)
        except Exception as exc:  # the model failed: the server gets an error, the transcript says why
            answer = f"failed: the trial's model raised {type(exc).__name__}: {exc}"
            self._file(
                McpNotice(
                    server=self.server,
                    method="sampling/createMessage",
                    message=_clip(asked),
                    answer=_clip(answer),
                )
            )
            return mtypes.ErrorData(code=mtypes.INTERNAL_ERROR, message=f"proctor: sampling {answer}")
        answer = f"answered by {reply.model}: {_clip(reply.text)}"
        self._file(
            McpNotice(
                server=self.server, method="sampling/createMessage", message=_clip(asked), answer=answer
            )
        )
        return mtypes.CreateMessageResult(
            role="assistant",
            content=mtypes.TextContent(type="text", text=reply.text),
            model=reply.model,
            stop_reason="endTurn",
        )

    def _sampler(self) -> tuple[Sampler | None, str]:
        """The calling trial's model if this server may sample and the caller is unambiguous."""
        if self.sampling != "model":
            return None, "proctor does not sample for this server (set sampling: model to allow it)"
        inboxes = list(self._inflight.values())
        if len(inboxes) != 1:
            return None, (
                f"{len(inboxes)} calls in flight on this connection, so the calling trial is unknown; "
                "give the server lifecycle: per_trial"
            )
        if inboxes[0].sampler is None:
            return None, "the call in flight has no model to sample with"
        return inboxes[0].sampler, ""

    async def on_elicitation(
        self, context: ClientRequestContext, params: mtypes.ElicitRequestParams
    ) -> mtypes.ElicitResult:
        self._file(
            McpNotice(
                server=self.server,
                method="elicitation/create",
                message=_clip(getattr(params, "message", "")),
                answer="declined: no person answers during an evaluation",
            )
        )
        return mtypes.ElicitResult(action="decline")


def _message_text(message: mtypes.SamplingMessage) -> str:
    content = message.content
    blocks = content if isinstance(content, list) else [content]
    return " ".join(b.text if isinstance(b, mtypes.TextContent) else f"[{b.type}]" for b in blocks)


def _clip(text: str) -> str:
    if len(text) > _TEXT_CHARS:
        text = redact(text)  # before the cut, which would leave a piece of a token no shape matches
    return (
        text
        if len(text) <= _TEXT_CHARS
        else text[:_TEXT_CHARS] + f"… [{len(text) - _TEXT_CHARS:,} more chars]"
    )


__all__ = ["MAX_NOTICES_PER_CALL", "NoticeBoard"]
