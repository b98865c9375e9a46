"""Measuring lcread (`lcread bench`): corpora (Austen, HotpotQA, synthetic), task suites with known evidence
spans, the runner that runs every mode on the same tasks, its report, and the memory measurement."""
