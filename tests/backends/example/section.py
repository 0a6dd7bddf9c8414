"""The ``example:`` config keys, named by the example's register line (tests/conftest.py)."""

from cloudtrain.config.records import Field, Record, StrictStr


class Section(Record):
    section_description = "backend example: its queue."
    queue: StrictStr = Field("default", description="The fake engine's queue.")
