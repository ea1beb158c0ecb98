"""On-demand benchmarks: each module prints a table. Not part of the test suite."""
