"""``backend: slurm``: a training package on any Slurm cluster, here or through its login node over ssh.

The registry names :mod:`cloudtrain.backends.slurm.backend` (its ``BACKEND``) and
:mod:`cloudtrain.backends.slurm.section` (the ``slurm:`` keys) apart, and this package imports
neither: the config schema loads the section while ``cloudtrain.config`` is still being imported,
and the backend imports the config."""
