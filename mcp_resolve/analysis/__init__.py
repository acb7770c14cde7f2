"""The analysis layer: signatures into a static, checked graph. Imports nothing of the runtime."""
