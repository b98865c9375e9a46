"""Measuring lcread: corpora (Austen, HotpotQA, synthetic), task suites with known evidence spans, the bench
runner that runs every mode on the same tasks, its report, and the batch runner."""
