"""docs/explanation/architecture.md's import diagram is the code's: every import counted, type-only and
function-level ones too, each module in its folder (tools/import_diagram.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tools import import_diagram


def test_the_pages_diagram_is_the_codes() -> None:
    page = import_diagram.PAGE.read_text()
    assert import_diagram.render(page) == page, "the import diagram is stale: run `make docs` and commit it"
    assert '["app/"]' in page and '["api.py"]' in page and '["cli/"]' in page


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))


def test_every_import_counts_the_type_only_and_the_function_level_ones_too(tmp_path: Path) -> None:
    package = tmp_path / "cloudtrain"
    write(
        package,
        {
            "__init__.py": "",
            "spec.py": """\
                from __future__ import annotations
                from typing import TYPE_CHECKING
                if TYPE_CHECKING:
                    from cloudtrain.backends.base import Backend  # type-only: still an arrow up
                """,
            "backends/__init__.py": "",
            "backends/base.py": "from cloudtrain import spec\n",
            "backends/vertex/__init__.py": """\
                from ..base import Backend
                from . import request

                def submit():
                    from cloudtrain.config import load  # function-level: counted
                    import cloudtrain.spec
                """,
            "backends/vertex/request.py": "from cloudtrain.backends.vertex import __name__ as same_folder\n",
            "config/__init__.py": "",
            "config/load.py": "import json\n",
            "api.py": "from cloudtrain.config.load import nothing_such\nimport cloudtrain\n",
        },
    )
    counted = import_diagram.arrows(package)
    assert dict(counted) == {
        ("cloudtrain/*.py", "backends/"): 1,
        ("backends/", "cloudtrain/*.py"): 1,
        ("backends/vertex/", "backends/"): 1,
        ("backends/vertex/", "config/"): 1,
        ("backends/vertex/", "cloudtrain/*.py"): 1,
        ("api.py", "config/"): 1,
    }
    drawn = import_diagram.mermaid(counted)
    assert 'n_backends_vertex["backends/vertex/"]' in drawn and "n_backends_vertex -->|1| n_config" in drawn
