"""Grounding: answers tied to what the tools showed, and the sufficiency predicates that gate them."""

from lcread.grounding.check import Verdict, Verifier
from lcread.grounding.evidence import Citation, EvidenceLog
from lcread.grounding.question import Profile, classify

__all__ = ["Citation", "EvidenceLog", "Profile", "Verdict", "Verifier", "classify"]
