"""The generated setup.py / pyproject.toml / PKG-INFO, names, versions and requirements."""

from __future__ import annotations

import ast
import re
import sys
import tarfile

import pytest

from cloudtrain.errors import PackagingError
from cloudtrain.packaging import build_sdist
from cloudtrain.packaging.metadata import normalize_name, normalize_version, read_requirements
from tests.packaging.sdist_helpers import member_bytes, write


def _member(built, relpath: str) -> str:
    with tarfile.open(built.path) as tar:
        return member_bytes(tar, f"{built.name}-{built.version}/{relpath}").decode()


def test_generated_metadata_carries_the_requirements(mini, tmp_path):
    write(mini, "requirements.txt", "# pinned\nPyYAML>=5.1  # configs\n\nnumpy<2\nPyYAML>=5.1\n")
    built = build_sdist(mini, tmp_path / "out", requirements=["tensorflow-datasets>=4.9", "numpy<2"])
    expected = ["tensorflow-datasets>=4.9", "numpy<2", "PyYAML>=5.1"]

    assert _member(built, "PKG-INFO") == (
        "Metadata-Version: 2.1\n"
        "Name: mini_trainer\n"
        "Version: 0.0.0\n"
        "Summary: Training package built by cloudtrain\n" + "".join(f"Requires-Dist: {r}\n" for r in expected)
    )
    setup = _member(built, "setup.py")
    call = next(
        n for n in ast.walk(ast.parse(setup)) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "setup"
    )
    kwargs = {k.arg: k.value for k in call.keywords}
    assert ast.literal_eval(kwargs["name"]) == "mini_trainer"
    assert ast.literal_eval(kwargs["version"]) == "0.0.0"
    assert ast.literal_eval(kwargs["install_requires"]) == expected
    assert ast.literal_eval(kwargs["package_data"]) == {"mini_trainer": ["**/*"]}
    assert ast.unparse(kwargs["packages"]) == "find_packages()"
    pyproject = _member(built, "pyproject.toml")
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # as cloudtrain reads it on Python 3.10
        import tomli as tomllib

    assert tomllib.loads(pyproject)["build-system"] == {
        "requires": ["setuptools>=62.3"],
        "build-backend": "setuptools.build_meta",
    }


def test_no_requirements_gives_an_empty_list(mini, tmp_path):
    (mini / "requirements.txt").unlink()
    built = build_sdist(mini, tmp_path / "out")
    assert "Requires-Dist" not in _member(built, "PKG-INFO")
    assert "install_requires=[\n    ]" in _member(built, "setup.py")


def test_quotes_in_a_requirement_cannot_break_setup_py(mini, tmp_path):
    built = build_sdist(mini, tmp_path / "out", requirements=["foo; python_version >= '3.10' and os_name != \"nt\""])
    assert "foo; python_version >= '3.10'" in _member(built, "PKG-INFO")
    ast.parse(_member(built, "setup.py"))


@pytest.mark.parametrize(
    ("given", "normal"),
    [("trainer", "trainer"), ("My-Trainer", "my_trainer"), ("a.b__c", "a_b_c"), ("X1", "x1")],
)
def test_names_are_normalized(given, normal):
    assert normalize_name(given) == normal


@pytest.mark.parametrize(
    ("given", "normal"),
    [
        ("1", "1"),
        ("0.1.0", "0.1.0"),
        ("v1.0", "1.0"),
        ("2024.01.05", "2024.1.5"),
        ("1.0-RC1", "1.0rc1"),
        ("1.0alpha", "1.0a0"),
        ("1.0-1", "1.0.post1"),
        ("1.0.dev", "1.0.dev0"),
        ("1!2.0", "1!2.0"),
        ("1.0+Local-Build_3", "1.0+local.build.3"),
        (" 1.2 ", "1.2"),
    ],
)
def test_versions_are_normalized(given, normal):
    assert normalize_version(given) == normal


@pytest.mark.parametrize("bad", ["", "-trainer", "trainer-", "tr ainer", "trainer/x", "träiner"])
def test_invalid_name_is_a_packaging_error(mini, tmp_path, bad):
    with pytest.raises(
        PackagingError, match=re.escape(f"package name {bad!r}") + r" is not a valid distribution name — use letters"
    ):
        build_sdist(mini, tmp_path / "out", name=bad)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("bad", ["", "latest", "1.0 beta 2", "1..0", "1.0+", "2024-Q1"])
def test_invalid_version_is_a_packaging_error(mini, tmp_path, bad):
    with pytest.raises(
        PackagingError, match=re.escape(f"package version {bad!r}") + r" is not a PEP 440 version — use e.g."
    ):
        build_sdist(mini, tmp_path / "out", version=bad)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("-r base.txt", r"requirements.txt:2: pip option '-r base.txt' cannot become package metadata"),
        ("--index-url https://x", r"requirements.txt:2: pip option '--index-url https://x'"),
        ("-e .", r"pip option '-e \.'"),
        ("./wheels/foo.whl", r"requirements.txt:2: './wheels/foo.whl' is not a PEP 508 requirement — write"),
        ("git+https://github.com/x/y", r"'git\+https://github.com/x/y' is not a PEP 508 requirement"),
    ],
)
def test_requirement_lines_pip_alone_understands_are_refused(mini, tmp_path, line, message):
    write(mini, "requirements.txt", f"numpy\n{line}\n")
    with pytest.raises(PackagingError, match=message):
        build_sdist(mini, tmp_path / "out")


@pytest.mark.parametrize(
    "ok",
    [
        "numpy",
        "numpy>=1.2,<2",
        "numpy >= 1.2, < 2",
        "tf-models-official==2.15.*",
        "apache-beam[gcp]>=2.50",
        "foo @ https://example.com/foo-1.0.tar.gz#sha256=abc",
        "bar ; python_version < '3.11'",
        "baz (>=1.0)",
    ],
)
def test_pep508_requirements_are_accepted(tmp_path, ok):
    assert read_requirements(tmp_path, [ok]) == (" ".join(ok.split()),)


def test_requirements_from_the_argument_come_first_and_duplicates_go(tmp_path):
    write(tmp_path, "requirements.txt", "b\n\n  # comment\na\nb\nc  # why\n")
    assert read_requirements(tmp_path, ["a", "d"]) == ("a", "d", "b", "c")


def test_a_bare_string_is_one_requirement(tmp_path):
    assert read_requirements(tmp_path, "numpy>=1.26") == ("numpy>=1.26",)
