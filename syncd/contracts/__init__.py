"""Pydantic models of the tool contracts (inputs, outputs, shared envelopes)."""
