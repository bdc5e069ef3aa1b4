"""Benchmarks behind ``make bench`` (``python -m benchmarks``)."""
