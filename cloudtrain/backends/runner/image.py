"""What stands in for the cloud's prebuilt image on this machine: a Python and a package list.

:func:`resolve_image` turns (cloud, TensorFlow version, ``local.python``) into an :class:`Image`: the interpreter
and the base layer's requirements (the image's TensorFlow and what it ships, from
``catalog/data/local_images.json``). The interpreter is the image's Python version where found (``local.python``,
``python3.X`` on ``PATH``, pyenv's versions, this one), else another with wheels for that TensorFlow; when none can
install it, the nearest TensorFlow one can is used and :attr:`Image.note` says so in one line."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cloudtrain import catalog
from cloudtrain.catalog._data import load
from cloudtrain.catalog.crosscloud import python_version
from cloudtrain.catalog.suggest import version_key
from cloudtrain.errors import UsageError
from cloudtrain.spec import JobSpec
from cloudtrain.text import mapped_line

PIP_AS_OF = "pip>=26.0"  # the first pip with --uploaded-prior-to: installed first where the pip fallback needs it


@dataclass(frozen=True)
class Interpreter:
    path: str  # the real executable (a pyenv shim resolved to its target)
    version: str  # "3.10"


#: ``find(version, setting)``: an interpreter of that version; ``probe(path)``: the one at a path (:mod:`.interpreters`)
Find = Callable[[str, str | None], Interpreter | None]
Probe = Callable[[str], Interpreter | None]


@dataclass(frozen=True)
class Image:
    """The base layer of a local environment."""

    cloud: str
    python: Interpreter
    packages: tuple[str, ...]  # pip requirements: "tensorflow==2.17.*", "tensorboard", ...
    tensorflow: str | None  # the TensorFlow installed (major.minor), None = none
    wanted_tensorflow: str | None  # the image's
    wanted_python: str | None  # the image's Python version
    note: str | None = None  # one line when the image's TensorFlow could not be had here
    date: str | None = None  # unpinned packages resolve as of this day (the image's), None = today
    nearest: tuple[str, ...] = ()  # ``packages`` without the image's pins: what installs where those do not
    named: str | None = None  # the interpreter as the key names it, when not by its path and version (a setting)

    @property
    def key(self) -> str:
        """16 hex digits of what the layer holds: same interpreter and packages, same layer."""
        python = [self.named] if self.named else [self.python.path, self.python.version]
        data = json.dumps([*python, list(self.packages)] + ([self.date] if self.date else []))
        return hashlib.sha256(data.encode()).hexdigest()[:16]

    def as_of(self, *, pip: bool = False) -> tuple[str, ...]:
        """The image's day as every builder's cutoff (TF <= 2.11 gets its NumPy 1): uv's ``--exclude-newer``, pip's
        ``--uploaded-prior-to`` (:data:`PIP_AS_OF`; none runs on Python < 3.9, whose newest wheels are of that era)."""
        if not self.date or (pip and tuple(map(int, self.python.version.split("."))) < (3, 9)):
            return ()
        return ("--uploaded-prior-to" if pip else "--exclude-newer", f"{self.date}T23:59:59Z")

    def describe(self) -> str:
        """``Python 3.10 + TensorFlow 2.17 (+ tensorboard)``, with what the image has where it differs."""
        tf = f"TensorFlow {self.tensorflow}" if self.tensorflow else "no TensorFlow"
        py = f"Python {self.python.version}"
        if self.wanted_python and self.wanted_python != self.python.version:
            py += f" (the image has {self.wanted_python})"
        names = [re.split(r"[<>=!~;\[ ]", p)[0] for p in self.packages]
        extras = [n for n in names if n not in ("tensorflow", "pip", "setuptools", "wheel")]
        shown = ", ".join(extras) if len(extras) <= 4 else f"{', '.join(extras[:3])} and {len(extras) - 3} more"
        as_of = f" (as of {self.date}, the image's)" if self.date else ""
        return f"{py} + {tf}" + (f" + {shown}" if extras else "") + as_of


def _layer(cloud: str, tf: str, slim: bool) -> dict[str, Any]:
    """The :class:`Image` fields of ``tf``'s layer: what every image ships (``shipped``, the slim layer) and,
    unless ``slim``, what the cloud's image of ``tf`` ships as pinned there, as of the image's day; the slim layer
    as of ``tf``'s last release (``images`` in ``catalog/data/local_images.json``, from ``tools/local_images.py``:
    TF <= 2.11 gets NumPy 1); and the same names unpinned (``nearest``: what installs where the pins do not)."""
    data = load("local_images")
    entry = {} if slim else data["images"].get(cloud, {}).get("versions", {}).get(tf, {})
    packages = (f"tensorflow=={tf}.*", *data["shipped"][cloud], *entry.get("packages", ()))
    unpinned = tuple(re.split(r"[<>=!~;\[ ]", p)[0] for p in packages[1:])
    return {
        "packages": packages,
        "date": entry.get("date", data["images"]["released"].get(tf)),
        "nearest": (packages[0], *unpinned) * (unpinned != packages[1:]),
    }


def supported_pythons(tensorflow: str) -> list[str]:
    """Python versions ``tensorflow`` (major.minor) has wheels for, oldest first; [] if unknown."""
    span = load("local_images")["tensorflow_pythons"].get(tensorflow)
    if not span:
        return []
    (lo_major, lo), (_, hi) = (tuple(int(x) for x in v.split(".")) for v in span)
    return [f"{lo_major}.{minor}" for minor in range(lo, hi + 1)]


def resolve_image(
    cloud: str,
    tensorflow: str | None,
    *,
    find: Find,
    probe: Probe | None = None,
    python: str | None = None,
    image_python: str | None = None,
    slim: bool = False,
) -> Image:
    """The base layer for the image of ``tensorflow`` on ``cloud`` (``None``: the cloud's default).

    ``python``: ``local.python`` (a path or a version); ``image_python``: ``image.python`` (else the image's newest).
    ``find`` and ``probe`` find interpreters (:mod:`.interpreters`, which starts processes; tests inject their own).
    ``slim``: ``local.layer: slim``, what every image ships instead of what this one ships."""
    tf = _major_minor(tensorflow or catalog.default_tensorflow(cloud))
    wanted_py = image_python or (catalog.image_pythons(cloud, tf) or (None,))[-1]
    pythons = _preference(supported_pythons(tf), wanted_py)

    def image(interpreter: Interpreter) -> Image:
        return Image(
            cloud, interpreter, tensorflow=tf, wanted_tensorflow=tf, wanted_python=wanted_py, **_layer(cloud, tf, slim)
        )

    if python and os.sep in python:  # an explicit interpreter: use it, whatever its version
        chosen = probe(python) if probe else None
        if chosen is None:
            raise UsageError(f"local.python {python!r} does not run", "point it at a python3 executable")
        return (
            image(chosen)
            if chosen.version in pythons
            else _fallback(cloud, tf, wanted_py, [chosen], slim, f"local.python {python}")
        )
    found = next((i for i in (find(v, python) for v in pythons) if i is not None), None)
    if found is not None:
        return image(found)
    here = [i for i in (find(f"3.{minor}", python) for minor in range(14, 7, -1)) if i is not None]
    looked = "local.python " + python if python else "PATH, pyenv's versions folder and this interpreter"
    return _fallback(cloud, tf, wanted_py, here, slim, looked)


def prebuilt_image(uri: str) -> tuple[str, str, str | None] | None:
    """The (cloud, TensorFlow, Python) of a prebuilt training image's URI (``…/training/tf-cpu.2-3:latest``,
    ``….dkr.ecr.….amazonaws.com/tensorflow-training:2.11.0-gpu-py39``); None for any other image."""
    for cloud, pattern in load("local_images")["prebuilt_uris"].items():
        match = re.search(pattern, uri)
        if match:  # "py3" names no minor version: None
            return cloud, f"{match['major']}.{match['minor']}", python_version(match["py"])
    return None


def image_for(
    spec: JobSpec,
    find: Find,
    probe: Probe | None = None,
    *,
    slim: bool | None = None,
) -> Image:
    """The image layer of a job: its TensorFlow on its cloud; for ``image.uri``, the prebuilt image it names,
    or (a custom image) ``image.tensorflow`` if given, else the cloud's default with a note saying so.
    ``slim``: the slim layer or not, whatever ``local.layer`` says (None: as it says)."""
    cloud, tf, python, note = spec.cloud, spec.tensorflow_version, python_version(spec.image_python), None
    uri = spec.container.image_uri if spec.container else spec.image_uri
    known = prebuilt_image(uri) if tf is None and uri else None
    slim = spec.local_layer == "slim" if slim is None else slim
    if known:
        cloud, tf, python = known[0], known[1], python or known[2]
    elif tf is None and uri:
        tf = catalog.default_tensorflow(cloud)
        note = (
            f"image {uri} is not a prebuilt TensorFlow image cloudtrain knows: --local runs the {cloud} TensorFlow "
            f"{tf} image's packages instead; set image.tensorflow to the TensorFlow it holds"
            + ("" if slim else " (or local.layer: slim)")
        )
    image = resolve_image(cloud, tf, find=find, probe=probe, python=spec.local_python, image_python=python, slim=slim)
    return dataclasses.replace(image, note="; ".join(n for n in (note, image.note) if n)) if note else image


def _fallback(
    cloud: str,
    tf: str,
    wanted_py: str | None,
    interpreters: list[Interpreter],
    slim: bool,
    looked: str,
) -> Image:
    """The TensorFlow nearest to ``tf`` that one of ``interpreters`` can install, with the note."""
    versions = sorted((v for v in load("local_images")["tensorflow_pythons"] if v[0].isdigit()), key=version_key)
    newer = [v for v in versions if version_key(v) >= version_key(tf)]
    newer_first = newer + [v for v in reversed(versions) if v not in newer]
    span = supported_pythons(tf)
    need = f"Python {span[0]}–{span[-1]}" if span else "Python with its wheels"
    for candidate in newer_first:
        for interpreter in interpreters:
            if interpreter.version in supported_pythons(candidate):
                note = mapped_line(
                    "image.tensorflow",
                    tf,
                    candidate,
                    f"locally: TensorFlow {tf}, the image's, has "
                    f"no wheels for Python {interpreter.version} and no {need} was found ({looked}); "
                    f"the nearest version Python {interpreter.version} installs, newer first",
                )
                fields = _layer(cloud, candidate, slim)
                return Image(
                    cloud,
                    interpreter,
                    tensorflow=candidate,
                    wanted_tensorflow=tf,
                    wanted_python=wanted_py,
                    note=note,
                    **fields,
                )
    raise UsageError(
        f"no Python here can install TensorFlow {tf} or any version near it (looked in {looked})",
        f"install {need} (e.g. pyenv install {span[1] if len(span) > 1 else '3.10'}) or set local.python",
    )


def _preference(pythons: list[str], wanted: str | None) -> list[str]:
    """The image's Python first, then the others nearest to it (newer before older)."""
    if not wanted or wanted not in pythons:
        return list(reversed(pythons))
    at = pythons.index(wanted)
    return sorted(pythons, key=lambda v: (abs(pythons.index(v) - at), pythons.index(v) < at))


def _major_minor(version: str) -> str:
    return ".".join(str(version).strip().split(".")[:2])
