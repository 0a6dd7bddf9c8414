"""``cloudtrain submit --local``: the same job on this machine, under the cloud's own contract.

The sdist a cloud submit would upload is installed into an environment cached by its hash
(:mod:`cloudtrain.backends.runner.venv`); each replica gets its cloud's variables and ``/opt/ml``-shaped tree
(:mod:`cloudtrain.backends.runner.contract`) and runs as its own process group, output merged live
(:mod:`.processes`). Standard library only. This package imports neither :mod:`.backend` nor :mod:`.section`: the
config schema loads the section while ``cloudtrain.config`` is still being imported, and the backend imports the
config."""
