"""Task generators and corpora for measuring lcread (benchmarks and end-to-end tests)."""
