"""lcread: answer questions about inputs far larger than a model's context window."""

__version__ = "0.2.0"
"""The one place the version is written: pyproject.toml reads it from here."""


def __getattr__(name: str):
    """`lcread.ask` and the result types, imported on first use (so `lcread --help` stays fast)."""
    if name in ("ask", "load_model"):
        from lcread import api

        return getattr(api, name)
    if name == "RunResult":
        from lcread.result import RunResult

        return RunResult
    raise AttributeError(f"module 'lcread' has no attribute {name!r}")
