"""docs/reference/python-api/ is pdoc's rendering of cloudtrain.api's docstrings as they are now
(tools/api_reference.py, ``make docs``)."""

from __future__ import annotations

import dataclasses
import re

import cloudtrain.api
from tools import api_reference


def test_the_api_reference_is_the_docstrings_rendered_now() -> None:
    assert api_reference.committed() == api_reference.fresh(), (
        "docs/reference/python-api/ is stale: run `make docs` and commit it"
    )


def test_the_reference_documents_each_public_function_with_its_docstring() -> None:
    page = (api_reference.OUT / "cloudtrain" / "api.html").read_text()
    for name in cloudtrain.api.__all__:
        assert f'id="{name}"' in page, name
    first = " ".join((cloudtrain.api.submit.__doc__ or "").split()[:4])
    assert first and first in re.sub(r"<[^>]+>", "", page)


def test_the_reference_lists_each_public_types_fields() -> None:
    """What the API returns (a listed output, a status, a log line…) is in the reference with every field, so
    that ``f.size`` is found where the page says files come "with sizes"."""
    page = (api_reference.OUT / "cloudtrain" / "api.html").read_text()
    types = [getattr(cloudtrain.api, n) for n in cloudtrain.api.__all__ if n[0].isupper()]
    checked = 0
    for kind in types:
        if isinstance(kind, type) and dataclasses.is_dataclass(kind):
            for field in dataclasses.fields(kind):
                if not field.name.startswith("_"):
                    assert f'id="{kind.__name__}.{field.name}"' in page, (kind.__name__, field.name)
                    checked += 1
    assert checked > 40
    assert 'id="Output.size"' in page and cloudtrain.api.Output.size.__doc__ == "Its size in bytes."
