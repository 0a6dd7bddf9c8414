"""Each way a package path or module can be wrong: one line naming the path, and a fix."""

from __future__ import annotations

import re

import pytest

from cloudtrain.errors import PackagingError, UsageError
from cloudtrain.packaging import build_sdist, check_module
from tests.packaging.sdist_helpers import write


def _error(call, *args) -> str:
    with pytest.raises(PackagingError) as info:
        call(*args)
    text = str(info.value)
    assert "\n" not in text and info.value.exit_code == 2 and isinstance(info.value, UsageError)
    return text


def test_missing_path(tmp_path):
    text = _error(build_sdist, tmp_path / "nope", tmp_path / "out")
    assert text == (
        f"package path {tmp_path / 'nope'} does not exist — "
        "point package.path at the training package folder, e.g. trainer/"
    )


def test_path_is_a_file(tmp_path):
    write(tmp_path, "task.py")
    text = _error(build_sdist, tmp_path / "task.py", tmp_path / "out")
    assert text.startswith(f"package path {tmp_path / 'task.py'} is not a directory — ")
    assert "containing __init__.py" in text


def test_no_init_py_suggests_the_package_inside(mini, tmp_path):
    project = mini.parent
    text = _error(build_sdist, project, tmp_path / "out")
    assert text == (
        f"package path {project} has no __init__.py — did you mean {project / 'mini_trainer'}?"
        " (packages inside: mini_trainer)"
    )


def test_no_init_py_suggests_adding_one(tmp_path):
    write(tmp_path, "trainer/task.py")
    text = _error(build_sdist, tmp_path / "trainer", tmp_path / "out")
    assert text == (
        f"package path {tmp_path / 'trainer'} has no __init__.py — "
        f"add an empty {tmp_path / 'trainer' / '__init__.py'} to make it a Python package"
    )


def test_folder_name_must_be_importable(tmp_path):
    write(tmp_path, "my-trainer/__init__.py")
    text = _error(build_sdist, tmp_path / "my-trainer", tmp_path / "out")
    assert "package folder name 'my-trainer'" in text and "rename the folder, e.g. to 'my_trainer'" in text


def test_nothing_is_written_on_error(tmp_path):
    with pytest.raises(PackagingError):
        build_sdist(tmp_path / "nope", tmp_path / "out")
    assert not (tmp_path / "out").exists()


# check_module


@pytest.mark.parametrize(
    ("module", "found"),
    [("mini_trainer.task", "mini_trainer/task.py"), ("mini_trainer.model", "mini_trainer/model.py")],
)
def test_check_module_finds_modules(mini, module, found):
    assert check_module(mini, module) == found


def test_check_module_finds_main_of_a_folder_and_of_the_package(mini):
    write(mini, "cli/__init__.py", "")
    write(mini, "cli/__main__.py", "")
    write(mini, "__main__.py", "")
    assert check_module(mini, "mini_trainer.cli") == "mini_trainer/cli/__main__.py"
    assert check_module(mini, "mini_trainer") == "mini_trainer/__main__.py"


def test_missing_module_names_those_that_exist(mini):
    text = _error(check_module, mini, "mini_trainer.train")
    assert text == (
        f"module 'mini_trainer.train' not found in {mini}: no train.py or train/__main__.py"
        " — modules in it: mini_trainer.model, mini_trainer.task"
    )


def test_missing_module_suggests_a_close_one(mini):
    text = _error(check_module, mini, "mini_trainer.tasks")
    assert "— did you mean 'mini_trainer.task'? modules in it: mini_trainer.model, mini_trainer.task" in text


def test_module_of_another_package(mini):
    text = _error(check_module, mini, "trainer.task")
    assert text == (
        f"module 'trainer.task' is not in package 'mini_trainer' ({mini}) — "
        "modules in it: mini_trainer.model, mini_trainer.task"
    )


def test_module_written_as_a_path(mini):
    assert _error(check_module, mini, "mini_trainer/task.py").endswith("— did you mean 'mini_trainer.task'?")


def test_package_itself_without_main(mini):
    text = _error(check_module, mini, "mini_trainer")
    assert re.search(r"no __main__\.py — modules in it: mini_trainer\.model, mini_trainer\.task$", text)


def test_module_excluded_by_an_ignore_file(mini):
    write(mini, ".cloudtrainignore", "task.py\n")
    text = _error(check_module, mini, "mini_trainer.task")
    assert text == (
        f"module 'mini_trainer.task': {mini / 'task.py'} exists but is excluded from the package"
        " — remove the pattern that matches it from .gitignore / .cloudtrainignore, or re-include it with '!task.py'"
    )


def test_check_module_checks_the_package_path_too(tmp_path):
    assert "does not exist" in _error(check_module, tmp_path / "nope", "trainer.task")


def test_output_folder_cannot_be_the_package_folder(mini):
    text = _error(build_sdist, mini, mini / ".")
    assert text.startswith(f"output folder {mini / '.'} is the package folder itself — ")
