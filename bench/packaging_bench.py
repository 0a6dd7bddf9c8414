"""Time cloudtrain's in-process sdist build against `python -m build --sdist`.

Both build the same package: a copy of tests/packages/mini_trainer (and, without
--quick, a "medium" variant with 300 extra modules and 4 MiB of data files) laid out as
a project with the setup.py / pyproject.toml that cloudtrain generates, so the two tools
package the same metadata. For each tool it also rebuilds after every file's mtime has
changed (as on a fresh checkout) and at least a second later, and reports whether the two
archives are byte-identical.

    uv run --frozen python bench/packaging_bench.py [--quick] [--json PATH]

`python -m build` with its default isolated environment installs setuptools from the
index; it is timed as-is (network permitting), once more with PIP_NO_INDEX=1 to show what
happens offline, and with --no-isolation (setuptools from this environment).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cloudtrain.packaging import build_sdist, metadata

REPO = Path(__file__).resolve().parents[1]

FIXTURE = REPO / "tests" / "packages" / "mini_trainer"
PKG = "mini_trainer"


def make_project(where: Path, medium: bool) -> Path:
    """A project folder holding the package plus generated setup.py / pyproject.toml."""
    package = where / PKG
    shutil.copytree(FIXTURE, package, ignore=shutil.ignore_patterns("__pycache__"))
    if medium:
        for i in range(300):
            (package / "layers").mkdir(exist_ok=True)
            (package / "layers" / f"layer_{i:03d}.py").write_text(f'"""Layer {i}."""\n\n' + "X = 1\n" * 200)
        (package / "layers" / "__init__.py").write_text("")
        rng = hashlib.sha256(b"seed")
        data = package / "assets"
        data.mkdir()
        for i in range(4):
            chunk = b"".join(
                hashlib.sha256(rng.digest() + bytes([i, j % 256, j // 256])).digest() for j in range(32768)
            )
            (data / f"table_{i}.bin").write_bytes(chunk)  # 1 MiB of incompressible bytes each
    requires = metadata.read_requirements(package)
    (where / "setup.py").write_text(metadata.setup_py(PKG, "0.0.0", PKG, requires))
    (where / "pyproject.toml").write_text(metadata.pyproject_toml())
    return package


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def touch_all(root: Path, stamp: float) -> None:
    for p in root.rglob("*"):
        os.utime(p, (stamp, stamp))


def only_archive(folder: Path) -> Path:
    (archive,) = folder.glob("*.tar.gz")
    return archive


def run_tool(name: str, build_once, project: Path, repeats: int) -> dict:
    """Time ``build_once(out_dir) -> (ok, error)``, then check a rebuild after touching."""
    times, result = [], {"tool": name}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(repeats):
            out = Path(tmp) / f"run{i}"
            start = time.perf_counter()
            ok, error = build_once(out)
            times.append(time.perf_counter() - start)
            if not ok:
                return {**result, "ok": False, "error": error, "times_s": times}
        first = only_archive(Path(tmp) / "run0")
        time.sleep(1.1)  # a gzip header time has one-second resolution
        touch_all(project, time.time() - 3600)
        ok, error = build_once(Path(tmp) / "rebuild")
        again = only_archive(Path(tmp) / "rebuild") if ok else None
        return {
            **result,
            "ok": True,
            "times_s": [round(t, 5) for t in times],
            "median_s": round(statistics.median(times), 5),
            "min_s": round(min(times), 5),
            "size": first.stat().st_size,
            "filename": first.name,
            "identical_rebuild": bool(again and sha256(first) == sha256(again)),
        }


def subprocess_builder(argv: list[str], env: dict[str, str] | None = None):
    def build_once(out: Path):
        done = subprocess.run([*argv, "--outdir", str(out)], capture_output=True, text=True, env=env, timeout=600)
        if done.returncode:
            lines = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
            why = [line.lstrip("< ") for line in lines if "No matching distribution" in line]
            return False, f"exit {done.returncode}: " + " | ".join(dict.fromkeys(why or lines[-2:]))
        return True, None

    return build_once


def bench_case(label: str, medium: bool, repeats: int, quick: bool) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        package = make_project(project, medium)
        files = [p for p in package.rglob("*") if p.is_file()]
        timed: list[dict] = []
        case = {"package": label, "files": len(files), "bytes": sum(p.stat().st_size for p in files), "tools": timed}

        def inprocess(out: Path):
            build_sdist(package, out)
            return True, None

        cold = [
            sys.executable,
            "-c",
            "import sys; from cloudtrain.packaging import build_sdist; build_sdist(sys.argv[1], sys.argv[2])",
            str(package),
        ]

        def cold_once(out: Path):
            done = subprocess.run([*cold, str(out)], capture_output=True, text=True, cwd=REPO)
            return (done.returncode == 0), (done.stderr[-300:] or None)

        build = [sys.executable, "-m", "build", "--sdist", str(project)]
        offline_env = {**os.environ, "PIP_NO_INDEX": "1"}
        tools = [
            ("cloudtrain (in-process)", inprocess, repeats),
            ("cloudtrain (new python process)", cold_once, max(1, repeats // 4)),
            (
                "python -m build --sdist --no-isolation",
                subprocess_builder([*build, "--no-isolation"]),
                max(1, repeats // 4),
            ),
        ]
        if not quick:
            tools += [
                ("python -m build --sdist (isolated)", subprocess_builder(build), 2),
                ("python -m build --sdist (isolated, PIP_NO_INDEX=1)", subprocess_builder(build, offline_env), 1),
            ]
        for name, once, n in tools:
            timed.append(run_tool(name, once, project, n))
        return case


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small package only, fewer repeats, no isolated build")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)

    repeats = 4 if args.quick else 20
    cases = [("small", False)] + ([] if args.quick else [("medium", True)])
    report = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "quick": args.quick,
        "cases": [bench_case(label, medium, repeats, args.quick) for label, medium in cases],
    }
    for case in report["cases"]:
        print(f"\n{case['package']}: {case['files']} files, {case['bytes'] / 1024:.0f} KiB")
        print(f"  {'tool':52} {'median':>9} {'min':>9} {'size':>9}  identical rebuild")
        for t in case["tools"]:
            if not t["ok"]:
                print(f"  {t['tool']:52} FAILED: {t['error']}")
                continue
            print(
                f"  {t['tool']:52} {t['median_s'] * 1000:7.1f}ms {t['min_s'] * 1000:7.1f}ms"
                f" {t['size']:>9}  {'yes' if t['identical_rebuild'] else 'NO'}"
            )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
