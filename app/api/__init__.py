"""HTTP layer: one router per resource; no SQL, no numerics."""
