"""absrank: absolute ranks for benchmarking optimizers (Jing & Liu), as a web service."""

__version__ = "0.1.0"
