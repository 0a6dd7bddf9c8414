"""The ``local:`` section of a job config: what ``--local`` builds its environment on.

Any backend's config may carry it (``--local`` runs that config here), so every config has it, with defaults
(``section_always``). The config schema reads the record from here, so it imports only config records: loading it
loads neither the backend nor the schema. No I/O here."""

from typing import Annotated, Literal

from cloudtrain.config.records import BeforeValidator, Field, Record, StrictStr, no_float_version


class Local(Record):
    # No docstring: the JSON Schema editors read (docs/cloudtrain.schema.json) would carry it.
    section_description = "Settings for --local runs only."
    section_always = True

    python: Annotated[StrictStr | None, BeforeValidator(no_float_version)] = Field(
        None,
        description='--local: the Python to build the local environment on, a path or a version ("3.10");'
        " default: the image's Python version found on PATH or in ~/.pyenv/versions.",
    )
    layer: Literal["image", "slim"] = Field(
        "image",
        description="--local: what the local environment installs beside TensorFlow. image: what the cloud's "
        "prebuilt image of that TensorFlow ships, at its versions (catalog/data/local_images.json); slim: pip, "
        "setuptools, wheel and TensorBoard only, as of that TensorFlow's last release.",
    )
