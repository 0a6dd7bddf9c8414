"""``cloudtrain report``: one self-contained HTML page (PNGs beside it) per set of runs: :mod:`.collect`,
:mod:`.figures` (matplotlib, the ``report`` extra), :mod:`.page`."""
