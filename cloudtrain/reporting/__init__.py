"""``cloudtrain report``: one self-contained HTML page (and PNGs beside it) per set of runs.

:mod:`.collect` gathers a run's numbers (its status, the trainer's events, its phases, its
cost) from history and the backend; :mod:`.figures` draws them with matplotlib (an optional
extra: ``pip install 'cloudtrain[report]'``); :mod:`.page` writes the HTML.
"""
