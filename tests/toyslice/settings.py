"""The toy slice's settings: ``[toy]`` (base URL and one setting of its own) and ``ttl.toy_note``."""

from __future__ import annotations

from pydantic import BaseModel, Field

from syncd.slices import Section, SliceSettings, TtlField

__all__ = ["SECTION", "SETTINGS", "ToySettings"]


class ToySettings(BaseModel):
    """The toy upstream."""

    base_url: str = Field("https://toy.invalid", description="Toy API base URL.")
    signature: str = Field("syncd-toy", description="Sent as X-Toy-Signature with every request.")


SECTION = Section("toy", ToySettings)
"""``[toy]``: read with ``SECTION.of(settings)``."""

SETTINGS = SliceSettings(
    sections=(SECTION,),
    ttls={"toy_note": TtlField(3600.0, "Toy notes (seconds).")},
    tool_set=True,
)
"""What the toy slice adds to the settings."""
