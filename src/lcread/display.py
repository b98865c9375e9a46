"""What the user sees while a run goes: rich on stderr, or nothing (tests, --json, --quiet)."""

from __future__ import annotations

import re
from typing import Protocol

from rich.console import Console, Group
from rich.panel import Panel
from rich.text import Text


class Display(Protocol):
    def start(self, *, question: str, model: str, mode: str, documents: str, limit: int) -> None: ...

    def step(self, *, number: int, command: str, observation: str, truncated: bool, error: bool,
             context: int, limit: int) -> None: ...

    def compaction(self, *, handoff: str, before: int, after: int) -> None: ...

    def chunk(self, *, index: int, total: int, notes_chars: int, answer: str | None,
              posterior: dict | None, confidence: float | None, change: float | None, gate: object,
              stop: bool) -> None: ...

    def state(self, *, added: list[str], done: list[str], current: str) -> None: ...

    def finish(self, *, answer: str, final: bool, reason: str, summary: str, citations: list[str] = (),
               verified: bool | None = None, missing: str | None = None) -> None: ...


class SilentDisplay:
    def start(self, **kw) -> None:
        pass

    def step(self, **kw) -> None:
        pass

    def compaction(self, **kw) -> None:
        pass

    def chunk(self, **kw) -> None:
        pass

    def state(self, **kw) -> None:
        pass

    def finish(self, **kw) -> None:
        pass


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def clean(text: str) -> str:
    """Text lcread did not write (documents, file names, model replies), made inert for a terminal:
    control characters (escape sequences, bells, carriage returns, bidi overrides) shown as \\xNN."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}" if ord(m.group(0)) < 256
                        else f"\\u{ord(m.group(0)):04x}", text)


def gauge(used: int, limit: int, width: int = 20) -> Text:
    """A bar of live context against the limit, coloured by how close it is."""
    share = min(used / limit, 1.0) if limit else 0.0
    filled = round(share * width)
    colour = "green" if share < 0.6 else "yellow" if share < 0.85 else "red"
    bar = Text("▕")
    bar.append("█" * filled, style=colour)
    bar.append("·" * (width - filled), style="dim")
    bar.append(f"▏ {used:,}/{limit:,} tokens", style="dim")
    return bar


def preview(text: str, width: int = 160, lines: int = 3) -> str:
    rows = [r for r in text.splitlines() if r.strip()][:lines]
    shown = "\n".join(r if len(r) <= width else r[: width - 1] + "…" for r in rows)
    more = len([r for r in text.splitlines() if r.strip()]) - len(rows)
    return shown + (f"\n… {more} more lines" if more > 0 else "")


class RichDisplay:
    """Each step as it happens: the command, the observation's size and start, the context gauge."""

    def __init__(self, console: Console | None = None):
        self.console = console or Console(stderr=True, highlight=False)

    def start(self, *, question: str, model: str, mode: str, documents: str, limit: int) -> None:
        head = Text.assemble(("lcread ", "bold"), (f"{mode}", "cyan"), " · ", (model, "magenta"),
                             f" · context limit {limit:,} tokens")
        self.console.print(Panel(Group(head, Text(clean(documents), style="dim"),
                                       Text(f"Q: {clean(question)}", style="bold")), expand=False))

    def step(self, *, number: int, command: str, observation: str, truncated: bool, error: bool,
             context: int, limit: int) -> None:
        line = Text.assemble((f"{number:>3} ", "dim"), ("$ ", "bold green"), (clean(command), "bold"))
        self.console.print(line)
        size = Text(f"      → {len(observation):,} chars", style="red" if error else "dim")
        if truncated:
            size.append(" (cut)", style="yellow")
        size.append("  ")
        size.append_text(gauge(context, limit))
        self.console.print(size)
        if observation.strip():
            self.console.print(Text(_indent(preview(clean(observation))), style="red" if error else "grey58"))

    def compaction(self, *, handoff: str, before: int, after: int) -> None:
        title = f"compacted {before:,} → {after:,} tokens"
        self.console.print(Panel(Text(clean(handoff)), title=title, border_style="yellow", expand=False))

    def chunk(self, *, index: int, total: int, notes_chars: int, answer: str | None,
              posterior: dict | None, confidence: float | None, change: float | None, gate: object,
              stop: bool) -> None:
        line = Text.assemble((f"chunk {index:>3}/{total} ", "bold"), (f"notes {notes_chars:>5,} chars", "dim"))
        if posterior:
            line.append("  " + " ".join(f"{k} {v:.2f}" for k, v in posterior.items()))
        elif answer is not None:
            line.append("  answer ")
            line.append(clean(repr(answer[:60])), style="bold")
        if confidence is not None:
            line.append(f"  conf {confidence:.3f}", style="cyan")
        if change is not None:
            line.append(f"  Δ {change:.3f}", style="cyan")
        if gate is not None:
            line.append(f"  gate {gate}", style="magenta")
        line.append("  → stop" if stop else "  → read on", style="green" if stop else "dim")
        self.console.print(line)

    def state(self, *, added: list[str], done: list[str], current: str) -> None:
        line = Text("      state: ", style="dim")
        line.append(clean(current[:100]), style="italic")
        for fact in added:
            line.append(f"\n      + finding: {clean(fact[:120])}", style="green")
        for step in done:
            line.append(f"\n      ✓ done: {clean(step[:120])}", style="cyan")
        self.console.print(line)

    def finish(self, *, answer: str, final: bool, reason: str, summary: str, citations: list[str] = (),
               verified: bool | None = None, missing: str | None = None) -> None:
        label = "answer" if final else f"best answer so far ({reason})"
        if verified:
            label += " · verified"
        elif verified is False:
            label += " · unverified"
        colour = "green" if final and verified is not False else "yellow"
        body = [Text(clean(answer), style="bold")]
        for c in citations[:6]:
            body.append(Text(f"  {'✓' if verified else '·'} {clean(c[:200])}", style="green" if verified else "dim"))
        if verified is False and missing:
            body.append(Text(f"  unverified: {clean(missing)}", style="yellow"))
        elif verified is None and missing:
            body.append(Text(f"  {clean(missing)}", style="dim"))
        self.console.print(Panel(Group(*body), title=label, border_style=colour, expand=False))
        self.console.print(Text(summary, style="dim"))


def _indent(text: str) -> str:
    return "\n".join("      " + r for r in text.splitlines())
