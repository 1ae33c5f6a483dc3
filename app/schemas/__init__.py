"""Pydantic request/response models, one module per resource."""
