"""Reproducible sdists of a training package folder: pure Python and standard library only, no build subprocess."""

from .script import build_script_sdist
from .sdist import SIZE_WARNING_BYTES, BuiltPackage, SdistOptions, build_sdist, required
from .tree import check_module

__all__ = [
    "SIZE_WARNING_BYTES",
    "BuiltPackage",
    "SdistOptions",
    "build_script_sdist",
    "build_sdist",
    "check_module",
    "required",
]
