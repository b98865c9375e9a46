"""Grounding: what the tools showed, split into sentences, and the citations made from them."""

from lcread.grounding.evidence import Citation, EvidenceLog

__all__ = ["Citation", "EvidenceLog"]
