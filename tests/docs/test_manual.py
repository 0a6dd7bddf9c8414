"""The manual's shape and its generated parts: the README stays a front door, the config reference
is the schema's, every link lands, and the tutorial's excerpts are its project's own text."""

from __future__ import annotations

import re

from tests import docs_text
from tests.conftest import REPO
from tools import config_reference

#: The README is the front door: what cloudtrain is, the set-up, the three ways, one example each, links.
README_MAX_LINES = 250


def test_the_readme_is_at_most_250_lines():
    assert len(docs_text.README.read_text().splitlines()) <= README_MAX_LINES


def test_every_page_is_in_one_of_the_four_kinds_or_written_by_a_tool():
    kinds = {"tutorial", "how-to", "reference", "explanation"}
    written_by_bench = {"benchmarks.md", "compat.md", "corpus.md"}  # python -m bench, bench.compat, bench.corpus
    for page in docs_text.pages()[1:]:
        parts = page.relative_to(docs_text.DOCS).parts
        assert parts[0] in kinds or parts == (page.name,) and page.name in written_by_bench, page


def test_the_config_reference_is_the_schemas():
    committed = config_reference.PAGE.read_text()
    assert committed == config_reference.render(config_reference.current_schema()), (
        "docs/reference/config-keys.md is stale: run `make docs` and commit it"
    )


def test_the_config_reference_names_every_key_of_the_schema_with_its_description():
    page = config_reference.PAGE.read_text()
    schema = config_reference.current_schema()
    for name, field in schema["properties"].items():
        row = re.search(rf"^\| `{name}` \|.*$", page, re.M)
        assert row, name
        description = field.get("description") or ""
        assert " ".join(description.split()).replace("|", "\\|") in row[0], name
    assert re.search(r"^\| `machine\.accelerator_count` \| whole number \| 0 \|", page, re.M)
    assert re.search(r"^\| `fallback\[\]\.region` \|", page, re.M)
    assert re.search(r"^\| `data\.<name>\.source` \|", page, re.M)


def test_the_hand_written_key_table_names_only_keys_the_schema_has():
    """docs/reference/config.md explains keys in words; each key it names is a real one."""
    generated = set(re.findall(r"^\| `([^`]+)` \|", config_reference.PAGE.read_text(), re.M))
    explained = docs_text.section("Config files").split("| key | meaning |", 1)[1].split("\n\n", 1)[0]
    named = {key for cell in re.findall(r"^\| ([^|]+) \|", explained, re.M) for key in re.findall(r"`([^`]+)`", cell)}
    assert named and named <= generated, sorted(named - generated)


#: Pages other branches of this round write (issues #29, #30, #32, #33); linked before they land.
WRITTEN_IN_PARALLEL: set[str] = set()


def _anchors(page) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    return {
        re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
        for h in re.findall(r"^#+ (.+)$", page.read_text(), re.M)
    }


def test_every_link_between_pages_lands():
    broken = []
    for page in docs_text.pages():
        text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M)
        for target in re.findall(r"\]\(([^)\s]*)\)", text):
            if not target:
                broken.append(f"{page.relative_to(REPO)}: an empty link")
                continue
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            rel = dest.relative_to(REPO) if dest.is_relative_to(REPO) else dest
            if str(rel) in WRITTEN_IN_PARALLEL:
                continue
            if not dest.exists() or anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                broken.append(f"{page.relative_to(REPO)}: {target}")
    assert not broken, "\n".join(broken)


TUTORIAL = REPO / "docs" / "tutorial" / "first-job.md"
PROJECT = REPO / "docs" / "tutorial" / "my-project"


def test_the_tutorials_excerpts_are_its_projects_own_text():
    job = "".join(line for line in (PROJECT / "job.yaml").read_text().splitlines(True) if not line.startswith("# "))
    assert job in docs_text.blocks("yaml", TUTORIAL)
    task = (PROJECT / "trainer" / "task.py").read_text()
    excerpts = docs_text.blocks("python", TUTORIAL)
    assert excerpts and all(excerpt in task for excerpt in excerpts)
    readme_job = docs_text.blocks("yaml", docs_text.README)[0]
    assert readme_job.startswith("# docs/tutorial/my-project/job.yaml\n")
    shown = [line.split("#")[0].rstrip() for line in readme_job.splitlines()[1:]]
    assert all(line in job for line in shown if line)  # the README's short form is the file's, line by line


def test_every_example_config_is_in_the_config_files_table():
    table = docs_text.section("Config files").split("| file | what |", 1)[1].split("\n\n", 1)[0]
    listed = set(re.findall(r"^\| `([^`]+)` \|", table, re.M))
    assert listed == {path.name for path in (REPO / "job_configs").glob("*.yaml")}
