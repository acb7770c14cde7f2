"""The plan layer: a static graph turned into code that runs one call."""
