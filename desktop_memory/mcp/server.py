"""`desktop-memory mcp`: the MCP server over stdio (official `mcp` SDK), a thin adapter over the engine."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, Literal, ParamSpec, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError, UnexpectedToolError
from mcp.types import ToolAnnotations
from pydantic import Field, ValidationError

from .. import __version__
from ..core.errors import DesktopMemoryError, InvalidInput, error_line
from ..core.filter_input import filters_from_fields
from ..core.models import Memory, to_iso
from ..core.query import Filters, parse
from ..core.text import first_line
from ..engine import failures
from ..engine.records import Pinned, Tags
from .engine import Engine, EngineAccess

log = logging.getLogger(__name__)
P = ParamSpec("P")
T = TypeVar("T")
SOURCE = "mcp"
HIT_CHARS = 2000
RECENT = 20  # memories in the memory://recent resource
NO_WORDS = ("query: give words to look for (a filter alone, such as #work or is:pinned, lists the newest "
            "memories that pass it)")
BROWSED = "no words to look for: the newest memories that pass the filters (pinned first), not ranked"

INSTRUCTIONS = (
    "desktop-memory is the person's private memory on this machine: notes, decisions and snippets they "
    "copied or saved. Search it before asking them to repeat something; use get_context to paste relevant "
    "memories into your reasoning; add_memory only for facts they would want to find again. Secrets are "
    "redacted before anything is stored. Nothing leaves the machine."
)

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
ADD = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
PIN = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
FORGET = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)


def _failure(exc: Exception, what: str) -> str:
    """One line for a failure: a domain error's own message; a full disk or a read-only folder said plainly;
    a bug as its type and the start of its text (details at debug level only)."""
    if not isinstance(exc, DesktopMemoryError):
        log.debug("%s failed", what, exc_info=True)
    return error_line(failures.storage_error(exc) or exc)  # a full disk, a read-only folder said plainly


def tool_errors(fn: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """The MCP tool barrier: a domain error becomes a tool error with its message; a bug, a one-line one."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the barrier: never a traceback to the agent
            raise ToolError(_failure(exc, f"tool {fn.__name__}")) from None

    return wrapper


# -- bad arguments in plain words -------------------------------------------------------------
_PLAIN = {
    "missing": "is required", "string_type": "must be text", "list_type": "must be a list",
    "dict_type": "must be an object", "bool_type": "must be true or false", "bool_parsing": "must be true or false",
    "int_type": "must be a whole number", "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number", "float_type": "must be a number", "float_parsing": "must be a number",
}
_BOUNDS = ("greater_than_equal", "less_than_equal", "greater_than", "less_than")


def _bounds(spec: dict[str, Any]) -> tuple[Any, Any]:
    """An argument's minimum and maximum from its JSON schema (inside `anyOf` when it may be null)."""
    for s in (spec, *spec.get("anyOf", ())):
        if "minimum" in s or "maximum" in s:
            return s.get("minimum"), s.get("maximum")
    return None, None


def _problem(err: Any, props: dict[str, Any]) -> str:
    """One pydantic error as "argument: what it must be"."""
    if err["type"] == "desktop_memory":  # our own checks (engine/records.py) name the argument already
        return " ".join(err["msg"].split())
    loc = err["loc"]
    name = str(loc[0]) if loc else "arguments"
    what = _PLAIN.get(err["type"])
    if err["type"] in _BOUNDS:
        low, high = _bounds(props.get(name, {}))
        what = f"must be between {low} and {high}" if low is not None and high is not None else None
    elif err["type"] == "string_too_short" and (err.get("ctx") or {}).get("min_length") == 1:
        what = "must not be empty"
    if what is None:  # pydantic's own words, made to read like ours
        what = " ".join(err["msg"].split())
        for theirs, ours in (("Input should", "must"), ("String should", "must"), ("List should", "must"),
                             (" after validation", ""), ("Value error, ", "")):
            what = what.replace(theirs, ours)
    item = f" (item {loc[1] + 1})" if len(loc) > 1 and isinstance(loc[1], int) else ""
    return f"{name}{item}: {what}"


def argument_problems(exc: ValidationError, props: dict[str, Any]) -> str:
    """Pydantic's multi-line dump about a call's arguments as one line naming each argument."""
    return "; ".join(dict.fromkeys(_problem(err, props) for err in exc.errors(include_url=False)))


def _shown_key(key: Any) -> str:
    return " ".join(str(key).split())[:60] or '""'


class DesktopMemoryServer(MCPServer):
    """The SDK's server, its argument errors in the product's words.

    The SDK validates a call's arguments and passes pydantic's dump on to the agent (several lines, the
    internal model name, a link) and ignores unknown keys (a misnamed `max_results` silently becomes the
    default). Here both are one line naming the argument, like every other error of ours.
    """

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        schema = next((t.input_schema for t in await self.list_tools() if t.name == name), None)
        if schema is None:  # an unknown tool: the SDK's own one line
            return await super().call_tool(name, arguments, context)
        props: dict[str, Any] = schema.get("properties", {})
        if unknown := [_shown_key(k) for k in arguments if k not in props]:
            raise ToolError(f"Error executing tool {name}: {', '.join(unknown)}: unknown argument"
                            f"{'s' if len(unknown) > 1 else ''}; {name} takes {', '.join(props)}")
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            # keeps the ValidationError as the cause: the SDK logs the rejected argument names from it
            raise ToolError(f"Error executing tool {name}: {argument_problems(exc.__cause__, props)}"
                            ) from exc.__cause__


def _memory_brief(m: Memory) -> dict[str, Any]:
    return {"id": m.id, "title": m.title or first_line(m.content, 80), "pinned": m.pinned, "forgotten": m.forgotten}


def _filters(source: str | None, app: str | None, tag: str | None, after: str | None, before: str | None,
             pinned_only: bool) -> Filters:
    return filters_from_fields(sources=[source or ""], apps=[app or ""], tags=[tag or ""], after=after,
                               before=before, pinned_only=pinned_only)


def build_server(access: EngineAccess) -> MCPServer:
    """The MCP server with its five tools, a resource and a prompt, each running on the engine's own thread."""
    server = DesktopMemoryServer("desktop-memory", title="desktop-memory", version=__version__,
                                 instructions=INSTRUCTIONS, log_level="WARNING")

    async def on_engine(fn: Callable[[Engine], T]) -> T:
        return await asyncio.wrap_future(access.submit(fn))

    @server.tool(title="Search memories", annotations=READ, description=(
        "Search the person's memories by words and by meaning; best matches first. The query may also hold "
        "filters: source:clipboard app:firefox #tag after:2026-01-01 before:2026-02-01 is:pinned. A filter "
        "alone lists the newest memories that pass it. For a long memory, content is the passage that matched "
        "(passage: where it sits in the text); get_context builds context from the matching passages. "
        "weak: true marks a weak match (far in meaning, little of the query's words), listed after the good ones."))
    @tool_errors
    async def search_memories(
        query: Annotated[str, Field(description="what to look for, in plain words", max_length=10_000)],
        limit: Annotated[int, Field(ge=1, le=50, description="how many hits to return")] = 10,
        source: Annotated[str | None, Field(description="only this source (clipboard, manual, cli, mcp, ...)")] = None,
        app: Annotated[str | None, Field(description="only memories captured from this app (substring)")] = None,
        tag: Annotated[str | None, Field(description="only memories with this tag")] = None,
        after: Annotated[str | None, Field(description="created on or after this ISO date")] = None,
        before: Annotated[str | None, Field(description="created before this ISO date")] = None,
        pinned_only: Annotated[bool, Field(description="only pinned memories")] = False,
    ) -> dict[str, Any]:
        filters = _filters(source, app, tag, after, before, pinned_only)
        parsed = parse(query)
        browse = not parsed.text.strip()  # no words: the engine lists the newest memories, unranked
        if browse and not filters.merged(parsed.filters).active:
            raise InvalidInput(NO_WORDS)  # not the newest memories with score 0, as if they matched
        hits = await on_engine(lambda e: e.search(query, limit=limit, filters=filters))
        out = []
        for h in hits:
            m = h.memory
            # a long memory shows the passage that matched the query, not its opening
            shown = h.passage.of(m) if h.passage is not None else m.content
            out.append({
                "id": m.id, "title": m.title, "content": shown[:HIT_CHARS],
                "truncated": len(shown) > HIT_CHARS or h.passage is not None, "summary": m.summary,
                "score": round(h.score, 4),
                "weak": h.weak,  # a weak match: far in meaning, little of the query's words (listed last)
                "created_at": to_iso(m.created_at), "source": m.source, "source_app": m.source_app,
                "tags": m.tags, "pinned": m.pinned,
                "similar": [s.id for s in h.similar],  # look-alikes grouped under this hit (get_context takes ids)
                **({"passage": {"start": h.passage.start, "end": h.passage.end, "of": len(m.content)}}
                   if h.passage is not None else {}),
            })
        return {"hits": out, "note": BROWSED} if browse else {"hits": out}

    @server.tool(title="Get context", annotations=READ, structured_output=False, description=(
        "Pasteable context from the person's memories, within a token budget: give a query (most relevant "
        "memories first) or memory ids (in that order). Long memories are summarised or excerpted."))
    @tool_errors
    async def get_context(
        query: Annotated[str | None, Field(description="what the context is about", max_length=10_000)] = None,
        ids: Annotated[list[str] | None, Field(description="memory ids (from search_memories)", max_length=200)] = None,
        budget: Annotated[int | None, Field(ge=50, le=200_000, description="token budget (default 1500)")] = None,
        format: Annotated[Literal["text", "markdown"], Field(description="plain text or Markdown")] = "markdown",
    ) -> str:
        if not ids and not (query and query.strip()):
            raise InvalidInput("give a query or memory ids")
        ctx = await on_engine(lambda e: e.context(query, ids=ids or (), budget=budget, fmt=format))
        return ctx.text or "No memories match; there is no context to give."

    @server.tool(title="Add a memory", annotations=ADD, description=(
        "Remember a piece of text for the person (source 'mcp'), always as a memory of its own. Secrets are "
        "redacted before it is stored; an exact duplicate is not stored twice; a similar text is kept and "
        "grouped with its look-alikes (status 'related'). Returns the memory id."))
    @tool_errors
    async def add_memory(
        content: Annotated[str, Field(description="the text to remember", min_length=1)],
        # checked like an import line (engine/records.py): strings only, or one string split on commas
        tags: Annotated[Tags | None, Field(description="tags, e.g. ['work', 'project-x']", max_length=50)] = None,
        title: Annotated[str, Field(description="a short title", max_length=200)] = "",
    ) -> dict[str, Any]:
        result = await on_engine(lambda e: e.add(content, source=SOURCE, tags=tags or [], title=title))
        return {"id": result.memory.id, "status": result.status,
                "redacted_secrets": sum(result.redactions.values())}

    @server.tool(title="Pin a memory", annotations=PIN, description=(
        "Pin (or with pinned=false, unpin) a memory so it ranks a little higher and is kept by retention."))
    @tool_errors
    async def pin_memory(
        id: Annotated[str, Field(description="the memory id (or a unique prefix of 4+ characters)")],
        pinned: Annotated[Pinned, Field(description="true to pin, false to unpin")] = True,  # never "no" -> True
    ) -> dict[str, Any]:
        return _memory_brief(await on_engine(lambda e: e.set_pinned(id, pinned)))

    @server.tool(title="Forget a memory", annotations=FORGET, description=(
        "Forget a memory: it no longer shows in searches or context. The person can bring it back with "
        "`desktop-memory restore ID`."))
    @tool_errors
    async def forget_memory(
        id: Annotated[str, Field(description="the memory id (or a unique prefix of 4+ characters)")],
    ) -> dict[str, Any]:
        return _memory_brief(await on_engine(lambda e: e.set_forgotten(id, True)))

    @server.resource("memory://recent", name="recent", title="Recent memories", mime_type="text/plain",
                     description=f"The person's {RECENT} newest memories (pinned ones first), one line each: id, "
                                 "date (UTC), title. get_context takes the ids.")
    async def recent_memories() -> str:
        try:  # listing is not using: no access is recorded
            hits = await on_engine(lambda e: e.search("", limit=RECENT, record_access=False))
        except Exception as exc:  # noqa: BLE001 - the barrier, as for the tools
            raise ResourceError(_failure(exc, "resource memory://recent")) from None
        return "\n".join(
            f"{h.memory.id}  {to_iso(h.memory.created_at)}  {_memory_brief(h.memory)['title']}"
            + ("  (pinned)" if h.memory.pinned else "") for h in hits) or "No memories yet."

    @server.prompt(name="recall", title="Recall from memory", description=(
        "Ask the assistant to search the person's memories about a topic and say what they hold, with ids."))
    def recall(topic: Annotated[str, Field(description="what to recall, in plain words")]) -> str:
        return (f"Look in my desktop-memory for what I know about: {topic}\n\n"
                "Use the search_memories tool (try a few phrasings), then get_context with the ids that matter. "
                "Tell me what those memories say, with their ids and dates. If nothing relevant is found, say so "
                "rather than guessing.")

    return server


def serve_stdio(folder: Path) -> None:
    """Serve MCP on stdin/stdout until the client closes the connection."""
    # the SDK traces through the OpenTelemetry API: keep any installed SDK from exporting anything
    os.environ["OTEL_SDK_DISABLED"] = "true"
    os.environ.pop("OTEL_PYTHON_TRACER_PROVIDER", None)
    access = EngineAccess(folder)
    try:
        build_server(access).run("stdio")
    finally:
        access.close()
