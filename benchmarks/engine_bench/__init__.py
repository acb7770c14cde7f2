"""The parts of `benchmarks/engine.py`: timing, the workloads, the scenarios, the report."""
