"""The engine layer: one call through a planned graph, to values or questions."""
