"""Variable trackers: the symbolic values on the tracer's stack, one module per kind of value."""
