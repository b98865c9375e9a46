"""The patterns and small helpers the sufficiency checks and the grounded values share."""

from __future__ import annotations

import re

NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w])")
DATE = re.compile(r"\b(1\d{3}|20\d{2})s?\b|\b\d{1,2}:\d{2}\b|\b\d{1,2}\s*(am|pm|a\.m\.|p\.m\.)|"
                  r"\b\d{1,2}(st|nd|rd|th) century\b|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b|"
                  r"\b(january|february|march|april|may|june|july|august|september|october|november|december|"
                  r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b", re.I)
LABEL = re.compile(r"^\s*(final answer|the answer is|answer)\s*[:\-]\s*", re.I)
MAX_BRIDGE_USES = 3  # an entity in more sentences than this is boilerplate, not a link


def prefix(start: str, text: str) -> bool:
    """Whether a word of the text begins with `start`."""
    return re.search(rf"(?<![a-z0-9]){re.escape(start)}", text) is not None
