"""``cloudtrain submit --local``: the same job on this machine, under the cloud's own contract.

The sdist a cloud submit would upload is installed into an environment cached by its hash
(:mod:`cloudtrain.backends.runner.venv`); each replica gets the variables and the ``/opt/ml``-shaped
tree its cloud would give it (:mod:`cloudtrain.backends.runner.contract`, shared with the Slurm
backend), and runs as its own process group whose output is merged live (:mod:`.processes`).
:mod:`.job` ties these together behind the shared :class:`~cloudtrain.backends.base.Backend`
interface. Standard library only.

The registry names :mod:`cloudtrain.backends.local.backend` (its ``BACKEND``) and
:mod:`cloudtrain.backends.local.section` (the ``local:`` keys) apart, and this package imports
neither: the config schema loads the section while ``cloudtrain.config`` is still being imported,
and the backend imports the config.
"""
