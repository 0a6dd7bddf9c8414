"""The ``mine:`` config keys, named by the mine's register line (tests/conftest.py)."""

from cloudtrain.config.records import Field, Record, StrictStr


class Section(Record):
    """The mine engine's own keys."""

    section_description = "backend mine: its queue."
    queue: StrictStr = Field("default", description="The fake engine's queue.")
