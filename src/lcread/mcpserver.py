"""`lcread mcp`: lcread as a Model Context Protocol server, for coding agents and desktop assistants.

Built on the official Python SDK's `MCPServer` (the `mcp` package, 2.x): it is the reference implementation of
the protocol, maintained with it, and it gives typed tools with structured output, progress notifications,
cancellation, stdio and streamable HTTP, and an in-memory client for tests, which is all lcread needs (FastMCP
adds a server framework on top of the same SDK). Tools:

- `ask`: a cited answer (answer, grounded, confidence, verified, citations with document, line, characters, page,
  quote; missing; costs), one progress notification per step;
- `search`, `grep`, `read`, `list`: lcread's bounded reading tools on their own, for agents that read for
  themselves (the same caps and messages as the CLI's commands, `DOC:LINE` locations ready to cite).

Confinement: the server serves only the folders it was started with (`--root`): every path is resolved
(links included) and refused when it leads outside them, and an error never names such a path. One embedded
model per server process answers one request at a time; a remote model answers several at once. A request the
client cancels stops its run at the next step.
"""


import os
import sys
import threading
from pathlib import Path

from pydantic import BaseModel, Field

from lcread.errors import LcreadError

MAX_PATTERN = 2_000
"""Characters of a grep pattern a client may send."""
UNKNOWN = "no such file or folder in the served folders (list shows what there is)"
"""The one answer for a path outside the served folders, whether it exists or not (no existence oracle)."""


class CitationOut(BaseModel):
    document: str
    line: int
    chars: list[int]
    """Character range [start, end) of the quote within the line."""
    place: str | None = None
    """Page, heading path or archive name of the line, for converted documents."""
    quote: str


class AskOut(BaseModel):
    answer: str | None = Field(description="None when nothing read answers the question")
    grounded: bool | None = Field(description="True: the answer is in a line lcread showed and cites")
    confidence: float | None = Field(description="The calibrated probability that the answer is right")
    verified: bool | None = Field(description="True: grounded, with confidence at the threshold at which "
                                              "verified answers were right 95% of the time where the reader was "
                                              "calibrated; None: an open question, no check applies")
    citations: list[CitationOut]
    missing: str | None = Field(description="For an unverified answer: what evidence is still missing")
    final: bool = Field(description="False when a limit ended the run (the best answer so far)")
    stop_reason: str
    mode: str
    steps: int
    total_tokens: int
    wall_time: float


class Roots:
    """The folders the server serves; every path a client names is checked against them."""

    def __init__(self, folders: list[str]):
        if not folders:
            raise LcreadError("lcread mcp needs at least one --root DIR: the folders it may read")
        self.folders = []
        for folder in folders:
            real = Path(folder).expanduser().resolve()
            if not real.is_dir():
                raise LcreadError(f"--root {folder}: not a folder")
            self.folders.append(real)

    def resolve(self, name: str) -> str:
        """A client's path (relative to the first root, or absolute) as a real path inside a root; LcreadError
        (naming nothing) otherwise."""
        if not isinstance(name, str) or not name.strip() or "\x00" in name:
            raise LcreadError("give a path inside the served folders")
        path = Path(name)
        candidates = [path] if path.is_absolute() else [root / path for root in self.folders]
        for candidate in candidates:
            real = Path(os.path.realpath(candidate))
            if self.inside(real) and real.exists():
                return str(real)
        raise LcreadError(UNKNOWN)

    def inside(self, real) -> bool:
        real = Path(real)
        return any(real == root or root in real.parents for root in self.folders)

    def confine(self, real: str) -> None:
        """What a read actually opened must lie in a served folder (DocumentStore.open checks it per file)."""
        if not self.inside(real):
            raise LcreadError(UNKNOWN)

    def open(self, names: list[str]):
        """The documents the client named, each opened and checked inside the served folders."""
        from lcread.documents import DocumentStore

        return DocumentStore.open([self.resolve(n) for n in names], confine=self.confine)

    def label(self) -> str:
        return ", ".join(str(r) for r in self.folders)


class Cancelled:
    """A display that follows a run for the client (progress notifications) and stops it once cancelled."""

    def __init__(self, progress):
        self.progress, self.cancelled, self.count = progress, threading.Event(), 0

    def _tick(self, message: str) -> None:
        if self.cancelled.is_set():
            raise KeyboardInterrupt  # the loop ends the run: best answer so far, trace complete
        self.count += 1
        self.progress(self.count, message)

    def start(self, **kw) -> None:
        self._tick("started")

    def step(self, *, number: int, command: str, **kw) -> None:
        self._tick(f"step {number}: {command[:120]}")

    def compaction(self, **kw) -> None:
        self._tick("compacted the context")

    def chunk(self, *, index: int, total: int, **kw) -> None:
        self._tick(f"chunk {index}/{total}")

    def state(self, **kw) -> None:
        pass

    def finish(self, **kw) -> None:
        pass


def build_server(roots: list[str], model=None, settings: dict | None = None, api_base: str | None = None):
    """The MCP server over `roots`. `model`: a model string (default: $LCREAD_MODEL or the embedded model) or a
    Model object (tests), served at `api_base` when given; `settings`: default options for `ask` (max_steps,
    read_chars, ...)."""
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    import anyio

    from lcread import api
    from lcread.display import clean
    from lcread.errors import redact
    from lcread.tools import Command, ToolRunner, parse
    from lcread.tools.search import TOP
    from lcread.config import ModelConfig
    from lcread.config import ToolConfig

    served = Roots(roots)
    defaults = dict(settings or {})
    config = api.make_config(ModelConfig, **({"api_base": api_base} if api_base else {}))
    one_at_a_time = threading.Lock()

    server = MCPServer("lcread", instructions=(
        "lcread answers questions about files too large for your context (logs, PDFs, HTML folders, codebases) "
        "and reads them in bounded pieces. Use ask for a cited answer; search, grep, read and list to read for "
        f"yourself. Paths are relative to the served folders: {served.label()}."))

    def fail(e: Exception):
        message = clean(redact(" ".join(str(e).split()))) if isinstance(e, LcreadError) else \
            f"lcread failed: {type(e).__name__} (the server log has the details)"
        return ToolError(message)

    def llm_for(name: str | None):
        """The server's model, or one the client names that opens no file: a model path is the server's choice."""
        if name is not None:
            if not name.strip():
                raise LcreadError("model is empty: leave it out for the server's model, or name a litellm model")
            if name.strip() == "local" or name.strip().startswith("local:"):
                raise LcreadError("the embedded model and model files are the server's choice (lcread mcp --model); "
                                  "leave model out, or name a litellm model")
            return api.load_model(name.strip(), config)
        return model if model is not None and not isinstance(model, str) else api.load_model(model, config)

    def reading(inputs: list[str], command, read_chars: int | None = None) -> str:
        with served.open(inputs) as store:
            tools = ToolRunner(store, ToolConfig(**({"read_chars": read_chars} if read_chars else {})))
            observation = tools.run(command if isinstance(command, Command) else parse(command))
            if observation.error:
                raise LcreadError(observation.text)
            return observation.text

    async def blocking(fn, *args):
        try:
            return await anyio.to_thread.run_sync(fn, *args)
        except (LcreadError, OSError, ValueError) as e:
            raise fail(e) from None

    @server.tool(structured_output=True)
    async def ask(inputs: list[str], question: str, ctx: Context, mode: str = "select", model: str | None = None,
                  max_steps: int | None = None, read_chars: int | None = None,
                  max_seconds: float | None = None) -> AskOut:
        """Answer a question about files or folders, reading only what it needs, with citations that lcread
        checked (document, line, characters, page, quote), whether it is grounded, its calibrated confidence, and
        whether it is verified."""
        try:
            api.check_arguments(inputs, question)
            paths = [served.resolve(i) for i in inputs]
            options = {**defaults, **{k: v for k, v in (("max_steps", max_steps), ("read_chars", read_chars),
                                                          ("max_seconds", max_seconds)) if v is not None}}
            run_settings = api.settings_from(mode, None, options)
            llm = llm_for(model)
        except LcreadError as e:
            raise fail(e) from None
        loop = anyio.from_thread
        display = Cancelled(lambda n, message: loop.run(ctx.report_progress, n, None, message))

        def run():
            lock = one_at_a_time if llm.in_process else threading.Lock()
            with lock:
                return api.ask_with(paths, question, llm, run_settings, display=display, confine=served.confine)

        try:
            result = await anyio.to_thread.run_sync(run, abandon_on_cancel=True)  # a cancel does not wait for it
        except anyio.get_cancelled_exc_class():
            display.cancelled.set()
            raise
        except LcreadError as e:
            raise fail(e) from None
        except Exception as e:  # noqa: BLE001 - never a traceback to the client
            raise fail(e) from None
        d = result.to_dict()
        return AskOut(answer=result.answer, grounded=result.grounded, confidence=result.confidence,
                      verified=result.verified, missing=result.missing, final=result.final,
                      stop_reason=result.reason, mode=result.mode, steps=d["steps"], total_tokens=d["total_tokens"],
                      wall_time=d["wall_time"],
                      citations=[CitationOut(document=c["document"], line=c["line"], chars=c["chars"],
                                             place=c.get("place"), quote=c["quote"]) for c in d["citations"]])

    @server.tool()
    async def search(inputs: list[str], words: str) -> str:
        """The passages of the files or folders that best match the words (ranked; any word forms), each with
        DOC:LINE, its page and heading path. Bounded output."""
        if not words.strip() or len(words) > api.QUESTION_CHARS:
            raise fail(LcreadError(f"give 1 to {api.QUESTION_CHARS:,} characters of words to search for"))
        return await blocking(reading, inputs, Command("search", "search", query=" ".join(words.split())[:300],
                                                       count=TOP))

    @server.tool()
    async def grep(inputs: list[str], pattern: str, ignore_case: bool = True, fixed_strings: bool = False,
                   with_section: bool = False, context: int = 0) -> str:
        """Lines matching a regular expression (ripgrep), as DOC:LINE:text; a long line shows a window per match;
        with_section shows the heading or function each hit is in. Bounded output."""
        if not pattern or len(pattern) > MAX_PATTERN or context < 0:
            raise fail(LcreadError(f"give a pattern of 1 to {MAX_PATTERN} characters and a context of 0 or more"))
        flags = {f for f, on in (("-i", ignore_case), ("-F", fixed_strings), ("-p", with_section)) if on}
        command = Command("grep", "grep", patterns=[pattern], flags=flags, before=int(context),
                          after=int(context))  # built, not parsed: the pattern is the client's text as it is
        return await blocking(reading, inputs, command)

    @server.tool()
    async def read(path: str, start: int = 1, end: int | None = None, from_char: int = 0) -> str:
        """Lines START..END of one file (PDF, Word, HTML and compressed files read as text; a PDF's pages are
        marked [page N]); from_char continues inside a very long line. Bounded output."""
        if start < 1 or (end is not None and end < start) or from_char < 0:
            raise fail(LcreadError("start is a line number from 1, end one at or after it, from_char 0 or more"))

        def go() -> str:
            with served.open([path]) as store:
                doc = store.docs[0]
                last = end if end is not None else start + 59
                command = Command("read", "read", docs=[doc.name], start=start, end=last, from_char=from_char)
                observation = ToolRunner(store).run(command)
                if observation.error:
                    raise LcreadError(observation.text)
                return observation.text
        return await blocking(go)

    @server.tool(name="list")
    async def list_files(path: str = ".", page: int = 1) -> str:
        """The documents under a served folder (name, lines, characters), paged when there are many."""
        def go() -> str:
            with served.open([path]) as store:
                return store.listing() if len(store.docs) <= store.LISTED else store.page(page)
        return await blocking(go)

    return server


def serve(roots: list[str], http: str | None, model: str | None, api_base: str | None = None) -> None:
    """Run the server on stdio (the default) or streamable HTTP at HOST:PORT (loopback unless a host is given)."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise LcreadError("lcread mcp needs the MCP SDK: pip install 'lcread[mcp]'") from None
    server = build_server(roots, model, api_base=api_base)
    if http is None:
        server.run("stdio")
        # the client closed stdin: an ask still running in a worker thread is orphaned, and is not waited for
        sys.stdout.flush()
        os._exit(0)
    host, _, port = http.rpartition(":")
    if not port.isdigit():
        raise LcreadError(f"--http {http}: give PORT or HOST:PORT, e.g. --http 127.0.0.1:8765")
    server.run("streamable-http", host=host or "127.0.0.1", port=int(port))
