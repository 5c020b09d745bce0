"""The stdio transport of ``syncd mcp``: one JSON-RPC message per line, every hostile frame answered.

The SDK's own stdio transport hands a line its parser rejects to the session as an exception, which
is logged and never answered; a lone surrogate, JSON nested past the parser's limit or a 5,000-digit
integer therefore left the client waiting forever. Here each line is screened first
(:func:`screen`, a pure function) and only a well-formed JSON-RPC 2.0 message reaches the server:

==============================================================  ======================================
frame                                                           answer (``id`` when it can be read)
==============================================================  ======================================
longer than :data:`MAX_FRAME_BYTES` (read no further)            -32600, ``reason: frame_too_large``
not UTF-8, not JSON (NaN/Infinity included), nested past the     -32700 parse error, ``id: null``
parser's own recursion limit
a JSON-RPC batch (an array), not an object, not of the           -32600 invalid request
JSON-RPC 2.0 shape (no method, bad id, params not an object)
a request whose params hold a lone UTF-16 surrogate, nest        -32602, ``reason: invalid_arguments``
deeper than :data:`MAX_DEPTH`, or hold an integer longer than    with the path and ``fields``
:data:`MAX_INT_DIGITS` digits
a notification with such params                                  none (JSON-RPC never answers one);
                                                                 logged at WARNING
==============================================================  ======================================

Every refusal is logged (``event=stdio_refused``) with its code and a short detail, never the frame.
Answers the server writes are serialized by one writer task; a body that cannot be encoded as UTF-8
(a lone surrogate in upstream text) has those code points written as U+FFFD instead of ending the
session. While serving, fd 0 reads ``/dev/null`` and fd 1 points at stderr, so stray output of a
library cannot corrupt the wire; both are restored on exit.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass
from typing import IO, Any

import anyio
import anyio.streams.memory
import anyio.to_thread
from mcp.server.lowlevel import Server
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

__all__ = [
    "MAX_DEPTH",
    "MAX_FRAME_BYTES",
    "MAX_INT_DIGITS",
    "Screened",
    "encode",
    "screen",
    "serve_stdio",
]

log = logging.getLogger("syncd.tools.stdio")  # the lines keep the logger name they always had

MAX_FRAME_BYTES = 4 * 1024 * 1024
"""Longest line accepted (bytes, newline excluded); the Streamable HTTP endpoint's default body limit."""
MAX_DEPTH = 64
"""Deepest nesting of objects and arrays accepted in a message (the envelope is level 1)."""
MAX_INT_DIGITS = 40
"""Longest integer literal accepted (digits); a 64-bit id or count has at most 20."""
_ID_MAX_CHARS = 256
"""A string id longer than this is not echoed in a refusal (``id: null`` instead)."""


@dataclass(frozen=True)
class Screened:
    """What one line is: a message for the server, or a refusal to write back (or neither).

    Attributes:
        message: the parsed JSON-RPC message to hand to the server (None when refused or blank).
        reply: the JSON-RPC error to write back (None for a notification, a blank line or a message).
        problem: why the line was refused, for the log (None when it was not).
    """

    message: JSONRPCMessage | None = None
    reply: JSONRPCError | None = None
    problem: str | None = None


class _HugeInt:
    """An integer literal past :data:`MAX_INT_DIGITS`, kept as its digit count (never converted)."""

    __slots__ = ("digits",)

    def __init__(self, literal: str) -> None:
        self.digits = len(literal.lstrip("-"))


def _parse_int(literal: str) -> int | _HugeInt:
    return int(literal) if len(literal.lstrip("-")) <= MAX_INT_DIGITS else _HugeInt(literal)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _error(code: int, message: str, request_id: Any = None, **data: Any) -> JSONRPCError:
    return JSONRPCError(
        jsonrpc="2.0",
        id=request_id,
        error=ErrorData(code=code, message=message, data=data or None),
    )


def _request_id(obj: dict[str, Any]) -> str | int | None:
    """The id of a request-shaped object when it is one a reply may echo (else None: ``id: null``)."""
    if "method" not in obj:
        return None  # a response (or nothing): never answered by id, it would pose as our answer
    rid = obj.get("id")
    if isinstance(rid, bool) or not isinstance(rid, int | str):
        return None
    if isinstance(rid, str) and len(rid) > _ID_MAX_CHARS:
        return None
    return rid


def _surrogate(text: str) -> int | None:
    """The first lone UTF-16 surrogate code point in ``text``, or None."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return ord(text[exc.start])
    return None


def _problem(root: Any) -> tuple[tuple[str | int, ...], str] | None:
    """The first value of ``root`` syncd refuses, as (path, sentence), or None (iterative walk)."""
    stack: list[tuple[Any, int, tuple[str | int, ...]]] = [(root, 1, ())]
    while stack:
        node, depth, path = stack.pop()
        if isinstance(node, dict | list) and depth > MAX_DEPTH:
            return path, f"nested deeper than {MAX_DEPTH} levels"
        if isinstance(node, dict):
            for key, value in node.items():
                code = _surrogate(key)
                if code is not None:
                    return (
                        *path,
                        key,
                    ), f"a key holds a lone UTF-16 surrogate (U+{code:04X}), not a character"
                stack.append((value, depth + 1, (*path, key)))
        elif isinstance(node, list):
            stack.extend((value, depth + 1, (*path, i)) for i, value in enumerate(node))
        elif isinstance(node, str):
            code = _surrogate(node)
            if code is not None:
                return path, f"text holds a lone UTF-16 surrogate (U+{code:04X}), not a character"
        elif isinstance(node, _HugeInt):
            return path, f"an integer of {node.digits} digits; at most {MAX_INT_DIGITS} are accepted"
    return None


def _dotted(path: tuple[str | int, ...]) -> str:
    """``params.arguments.query[0]``; a deep path keeps its first 6 steps and says how deep it goes."""
    shown = path if len(path) <= 8 else path[:6]
    text = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in shown).lstrip(".") or "(message)"
    return text if shown is path else f"{text}... ({len(path)} levels)"


_JSON_TYPES = {int: "number", float: "number", str: "string", bool: "boolean", type(None): "null"}


def _parse_error(why: str) -> Screened:
    return Screened(reply=_error(PARSE_ERROR, f"Parse error: {why}", reason="parse_error"), problem=why)


def _invalid(why: str, rid: str | int | None = None, **data: Any) -> Screened:
    reply = _error(INVALID_REQUEST, f"Invalid request: {why}", rid, reason="invalid_request", **data)
    return Screened(reply=reply, problem=why)


def _parse(line: bytes) -> Any:
    """The JSON value of ``line``, or the :class:`Screened` parse error (-32700) when it is none."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _parse_error(f"not UTF-8 text (byte {exc.start} of the frame)")
    try:
        return json.loads(text, parse_int=_parse_int, parse_constant=_no_constant)
    except RecursionError:
        return _parse_error("JSON nested deeper than the parser allows")
    except ValueError as exc:
        return _parse_error(f"not JSON: {exc}")


def _refused_value(
    obj: dict[str, Any], rid: str | int | None, path: tuple[str | int, ...], sentence: str
) -> Screened:
    """The answer to a message holding a value syncd refuses (see the module table)."""
    where = _dotted(path)
    why = f"{where}: {sentence}"
    if "method" in obj and "id" not in obj:
        return Screened(problem=f"notification refused: {why}")
    if path[:1] != ("params",) or rid is None:
        return _invalid(why, rid, path=where)
    fields = [str(path[2])] if len(path) > 2 and path[1] == "arguments" else []
    reply = _error(
        INVALID_PARAMS,
        f"Invalid params: {why}",
        rid,
        reason="invalid_arguments",
        recovery={
            "hint": f"Send text as Unicode characters and integers of at most {MAX_INT_DIGITS} digits, "
            f"nested at most {MAX_DEPTH} levels deep."
        },
        retryable=False,
        fields=fields,
        path=where,
    )
    return Screened(reply=reply, problem=why)


def screen(line: bytes) -> Screened:
    """Screen one stdio line (without its newline) against the table in the module docstring."""
    if not line.strip():
        return Screened()
    obj = _parse(line)
    if isinstance(obj, Screened):
        return obj
    if isinstance(obj, list):
        return _invalid("a JSON-RPC batch; MCP (2025-06-18 and later) takes one message per line")
    if not isinstance(obj, dict):
        return _invalid(f"a JSON {_JSON_TYPES.get(type(obj), 'value')}, not a JSON-RPC message object")
    rid = _request_id(obj)
    found = _problem(obj)
    if found is not None:
        return _refused_value(obj, rid, *found)
    try:
        message = jsonrpc_message_adapter.validate_python(obj, by_name=False)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        loc = ".".join(str(p) for p in first.get("loc", ())[1:]) or "(message)"
        why = f"not a JSON-RPC 2.0 message ({loc}: {first.get('msg')})"
        if "method" in obj and "id" not in obj and isinstance(obj.get("method"), str):
            return Screened(problem=f"notification refused: {why}")
        return _invalid(why, rid)
    if isinstance(message, JSONRPCNotification) and "id" in obj:  # pydantic dropped an id it refused
        kind = _JSON_TYPES.get(type(obj["id"]), "value")
        return _invalid(f"id must be a string or an integer, not a JSON {kind}")
    return Screened(message=message)


def _replace_surrogates(text: str) -> str:
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def encode(message: JSONRPCMessage) -> bytes:
    """One outgoing line (newline included); lone surrogates in the body are written as U+FFFD."""
    try:
        text = message.model_dump_json(by_alias=True, exclude_unset=True)
    except ValueError:  # PydanticSerializationError: text that is not encodable as UTF-8
        log.warning("event=stdio_unencodable_answer action='lone surrogates written as U+FFFD'")
        raw = json.dumps(
            message.model_dump(by_alias=True, exclude_unset=True), ensure_ascii=False, default=str
        )
        text = _replace_surrogates(raw)
    return text.encode("utf-8") + b"\n"


@contextmanager
def _claimed_stdio() -> Iterator[tuple[IO[bytes], IO[bytes]]]:
    """The wire's stdin and stdout as private descriptors; fd 0 reads /dev/null, fd 1 writes stderr.

    The private descriptors are never closed (a worker thread may still be blocked reading the wire
    while the process leaves); fd 0 and fd 1 are pointed back at the wire on exit.
    """
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    stdout = os.fdopen(wire_out, "wb", closefd=False)
    try:
        yield os.fdopen(wire_in, "rb", closefd=False), stdout
    finally:
        with suppress(OSError, ValueError):
            stdout.flush()
        sys.stdout.flush()
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)


Send = anyio.streams.memory.MemoryObjectSendStream
EXIT_FLUSH_S = 5.0
"""Longest the answers still queued at exit may take to be written (seconds)."""


async def _readline(stdin: IO[bytes], limit: int) -> bytes:
    """One line of at most ``limit`` bytes, read on a worker thread left behind if cancelled."""
    return await anyio.to_thread.run_sync(stdin.readline, limit, abandon_on_cancel=True)


async def _read_frames(
    stdin: IO[bytes],
    to_server: Send[SessionMessage | Exception],
    replies: Send[SessionMessage],
) -> None:
    """Read lines until EOF; hand messages to the server and write refusals back."""
    async with to_server, replies:
        while True:
            line = await _readline(stdin, MAX_FRAME_BYTES + 1)
            if not line:
                return
            if len(line) > MAX_FRAME_BYTES and not line.endswith(b"\n"):
                size = len(line)
                while line and not line.endswith(b"\n"):  # skip the rest of the frame unread
                    line = await _readline(stdin, MAX_FRAME_BYTES)
                    size += len(line)
                why = f"a frame of at least {size} bytes; at most {MAX_FRAME_BYTES} are read"
                log.warning("event=stdio_refused code=%d detail=%r", INVALID_REQUEST, why)
                reply = _error(
                    INVALID_REQUEST,
                    f"Invalid request: {why}",
                    reason="frame_too_large",
                    limit_bytes=MAX_FRAME_BYTES,
                )
                await replies.send(SessionMessage(reply))
                continue
            found = screen(line.rstrip(b"\r\n"))
            if found.problem is not None:
                code = found.reply.error.code if found.reply is not None else "none"
                log.warning("event=stdio_refused code=%s detail=%r", code, found.problem[:300])
            if found.reply is not None:
                await replies.send(SessionMessage(found.reply))
            elif found.message is not None:
                await to_server.send(SessionMessage(found.message))


async def _write_frames(
    stdout: IO[bytes],
    outgoing: anyio.streams.memory.MemoryObjectReceiveStream[SessionMessage],
) -> None:
    async with outgoing:
        async for item in outgoing:
            frame = encode(item.message)
            await anyio.to_thread.run_sync(_write, stdout, frame)


def _write(stdout: IO[bytes], frame: bytes) -> None:
    stdout.write(frame)
    stdout.flush()


@asynccontextmanager
async def stdio_streams(
    stdin: IO[bytes], stdout: IO[bytes]
) -> AsyncIterator[
    tuple[
        anyio.streams.memory.MemoryObjectReceiveStream[SessionMessage | Exception],
        Send[SessionMessage],
    ]
]:
    """The (read, write) stream pair of a server over binary ``stdin``/``stdout`` (module docstring).

    On exit the reader stops and the answers already queued are written (at most
    :data:`EXIT_FLUSH_S` seconds).
    """
    to_server, from_client = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    outgoing, to_write = anyio.create_memory_object_stream[SessionMessage](16)
    reading = anyio.CancelScope()

    async def read() -> None:
        with reading:
            await _read_frames(stdin, to_server, replies)

    replies = outgoing.clone()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read)
        tasks.start_soon(_write_frames, stdout, to_write)
        try:
            yield from_client, outgoing
        finally:
            outgoing.close()
            reading.cancel()
            tasks.cancel_scope.deadline = anyio.current_time() + EXIT_FLUSH_S


async def serve_stdio(server: Server[Any]) -> None:
    """Serve ``server`` over this process's stdin/stdout until stdin ends."""
    with _claimed_stdio() as (stdin, stdout):
        async with stdio_streams(stdin, stdout) as (read, write):
            await server.run(read, write, server.create_initialization_options())
