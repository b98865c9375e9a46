"""The structure the code keeps: options match config fields, every module imports alone, layers import only
downwards, extension points are tables."""

import inspect
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "lcread"
NOT_CONFIG = {"inputs", "question", "model", "mode", "json_out", "quiet", "trace", "options"}
"""`lcread ask`'s parameters that are not config fields: what to read, what to ask, how to print."""


def test_every_config_option_is_an_ask_option_and_every_ask_option_a_config_field():
    from lcread import cli
    from lcread.config import AcsConfig, LoopConfig, ModelConfig, ToolConfig

    declared = {opt for cls in (LoopConfig, ToolConfig, AcsConfig, ModelConfig) for opt in cls.options()}
    params = set(inspect.signature(cli.ask).parameters)
    assert declared - params == set(), "config fields without an ask option"
    assert params - declared - NOT_CONFIG == set(), "ask options without a config field"


def modules() -> list[str]:
    names = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(parts))
    return names


@pytest.mark.parametrize("name", [m for m in modules() if m not in ("lcread.__main__",)])
def test_every_module_imports_alone_in_a_fresh_interpreter(name):
    proc = subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True, timeout=120,
                          env={"LITELLM_LOCAL_MODEL_COST_MAP": "True", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr.decode()[-600:]


LAYERS = [
    ("errors", "language", "text"),
    ("config", "prompts", "trace"),
    ("models", "documents", "convert"),
    ("tools",),
    ("grounding",),
    ("reader",),
    ("result", "display", "acs", "agent"),
    ("run",),
    ("api", "bench", "batch", "raybatch", "mcpserver"),
    ("cli", "options", "terminal", "__main__"),
]
"""lcread's layers, lowest first: a module imports its own layer's and lower ones' (read from the import lines at
module level and inside functions alike)."""


def _layer(module: str) -> int:
    top = module.split(".")[1] if module.count(".") else ""
    return next(i for i, names in enumerate(LAYERS) if top in names)


def test_no_module_imports_a_layer_above_its_own():
    import re

    wrong = []
    for path in sorted(SRC.rglob("*.py")):
        rel = ".".join(path.relative_to(SRC.parent).with_suffix("").parts).removesuffix(".__init__")
        if rel == "lcread":
            continue
        mine = _layer(rel)
        for m in re.finditer(r"^\s*(?:from (lcread(?:\.\w+)+) import|import (lcread(?:\.\w+)+))", path.read_text(),
                             re.M):
            target = m.group(1) or m.group(2)
            if _layer(target) > mine:
                wrong.append(f"{rel} imports {target}")
    assert wrong == []
