"""The command line's options, declared once: `ask`, `batch` and `bench` share the ones they have in common.

Every option defaults to None ("not given"), so the configs in `lcread.config` hold the defaults and the
library and the CLI validate the same values the same way."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

Int = Optional[int]
Float = Optional[float]
Text = Optional[str]

Model = Annotated[Text, typer.Option("--model", "-m", help="local (embedded), local:/path.gguf, or a litellm "
                                     "model string. Default: $LCREAD_MODEL or local.")]
ApiBase = Annotated[Text, typer.Option(help="Base URL of the model server.")]
Trace = Annotated[Optional[Path], typer.Option(help="Append a JSON-lines record of every call and command.")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="Show no progress.")]
Mode = Annotated[str, typer.Option(help="How to read: select (search and bounded reads), sac (one command per "
                                   "fresh context, with a written state) or acs (chunk by chunk with running "
                                   "notes, stopped by Answer-Convergence Stopping).")]
Json = Annotated[bool, typer.Option("--json", help="Print one JSON object with the answer and costs.")]

MaxSteps = Annotated[Int, typer.Option(help="Most commands the model may run.")]
MaxTokens = Annotated[Int, typer.Option(help="Most tokens the run may spend.")]
MaxSeconds = Annotated[Float, typer.Option(help="Most wall time, in seconds.")]
ContextLimit = Annotated[Int, typer.Option(help="Live context limit in tokens.")]
CallTimeout = Annotated[Float, typer.Option(help="Seconds one model call may take (each try).")]
CompactAt = Annotated[Int, typer.Option(help="Live context at which to compact.")]
ReadChars = Annotated[Int, typer.Option(help="Characters per read (at most 8,000).")]
Sufficiency = Annotated[Optional[bool], typer.Option("--sufficiency/--no-sufficiency", show_default=False,
                                                    help="--no-sufficiency: accept any answer the model gives (it "
                                                    "is still scored and reported).")]
FirstStep = Annotated[Optional[bool], typer.Option("--first-step/--no-first-step", show_default=False,
                                                  help="--no-first-step: the model starts without lcread's own "
                                                  "search for the question.")]
MaxRefusals = Annotated[Int, typer.Option(help="Answers lcread is unsure of sent back before the run ends (3).")]
StepsAfterRefusal = Annotated[Int, typer.Option(help="Commands after the first answer lcread was unsure of (8).")]
GrepTimeout = Annotated[Float, typer.Option(help="Seconds one grep may run (10).")]
LocalContext = Annotated[Int, typer.Option(help="Context window the embedded model is loaded with (16,384).")]
Threads = Annotated[Int, typer.Option(help="CPU threads of the embedded model (all cores).")]

Options = Annotated[Optional[list[str]], typer.Option("--options", help="Answer options, e.g. --options 'A) Anne' "
                                                      "--options 'B) Elinor'.")]
Stop = Annotated[Text, typer.Option(help="acs: stopping policy: acs, full, random, verbalized, end.")]
Probe = Annotated[Text, typer.Option(help="acs, multiple choice: likelihood (option texts scored after the notes, "
                                     "calibrated), letters (the paper's), or auto.")]
DraftConfidence = Annotated[Text, typer.Option(help="acs, open-ended: min or mean probability of the answer's "
                                               "tokens.")]
Theta = Annotated[Float, typer.Option(help="acs: confidence threshold (0.995, or the calibrated one).")]
Epsilon = Annotated[Float, typer.Option(help="acs: stability threshold (0.05).")]
Window = Annotated[Int, typer.Option(help="acs: stability window w (3).")]
ChunkChars = Annotated[Int, typer.Option(help="acs: characters per chunk (24,000; 8,000 on the embedded model).")]
NotesChars = Annotated[Int, typer.Option(help="acs: cap on the running notes (6,000).")]
Seed = Annotated[Int, typer.Option(help="acs: seed of --stop random.")]
