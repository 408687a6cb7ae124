"""Benchmarks: each prints its figures as ratios against a reference measured in the same run."""
