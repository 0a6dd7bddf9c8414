"""docs/reference/python-api/ is pdoc's rendering of cloudtrain.api's docstrings as they are now
(tools/api_reference.py, ``make docs``)."""

from __future__ import annotations

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
