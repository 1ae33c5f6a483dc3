"""Use cases: load through repositories, compute with ``app.domain``, enqueue after the commit."""
