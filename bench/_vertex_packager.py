"""The Vertex SDK's script packager on the same package as ``bench/packaging_bench.py``.

``google.cloud.aiplatform``'s ``CustomTrainingJob(script_path=<folder>)`` packages with
``source_utils._TrainingScriptPythonPackager.make_package``: it copies the folder into a
generated project and runs ``python setup.py sdist --formats=gztar``. This times that call
(the SDK import is not timed: see the CLI table for it) with packaging_bench's own
``make_project`` / ``run_tool``, so the rows line up with its table, and counts which of the
package's files end up in the archive.

    uv run --frozen python -m bench._vertex_packager [--quick] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path

from bench.packaging_bench import PKG, make_project, only_archive, run_tool
from cloudtrain.packaging import metadata

TOOL = "Vertex SDK script packager (setup.py sdist)"


def builder(package: Path):
    from google.cloud.aiplatform.utils.source_utils import _TrainingScriptPythonPackager

    packager = _TrainingScriptPythonPackager(str(package), requirements=list(metadata.read_requirements(package)))

    def build_once(out: Path):
        out.mkdir(parents=True)
        with tempfile.TemporaryDirectory() as work:
            try:
                built = packager.make_package(work)
            except RuntimeError as exc:
                return False, str(exc).strip().splitlines()[-1][:300]
            shutil.copy(built, out)
        return True, None

    return build_once


def package_files_kept(package: Path, build_once) -> tuple[int, int, list[str]]:
    """(files of the package found in the archive, files in the package, a few of those left out)."""
    files = {p.relative_to(package).as_posix() for p in package.rglob("*") if p.is_file()}
    with tempfile.TemporaryDirectory() as tmp:
        ok, _ = build_once(Path(tmp) / "out")
        if not ok:
            return 0, len(files), []
        with tarfile.open(only_archive(Path(tmp) / "out")) as tar:
            names = {n.split("/aiplatform_custom_trainer_script/", 1)[-1] for n in tar.getnames()}
    return len(files & names), len(files), sorted(files - names)[:4]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small package only, fewer repeats")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    repeats = 2 if args.quick else 5
    cases = [("small", False)] + ([] if args.quick else [("medium", True)])
    report = {"quick": args.quick, "cases": []}
    for label, medium in cases:
        with tempfile.TemporaryDirectory() as tmp:
            project = Path(tmp) / "project"
            package = make_project(project, medium)
            assert package.name == PKG
            once = builder(package)
            row = run_tool(TOOL, once, project, repeats)
            row["package_files_kept"], row["package_files"], row["left_out"] = package_files_kept(package, once)
            report["cases"].append({"package": label, "tools": [row]})
            print(
                f"{label}: {TOOL}: "
                + (
                    f"median {row['median_s'] * 1000:.1f} ms, {row['size']} bytes, "
                    f"identical rebuild {'yes' if row['identical_rebuild'] else 'NO'}, "
                    f"{row['package_files_kept']}/{row['package_files']} package files kept"
                    if row["ok"]
                    else f"FAILED: {row['error']}"
                ),
                flush=True,
            )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
