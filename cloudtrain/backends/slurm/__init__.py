"""``backend: slurm``: a training package on any Slurm cluster, here or through its login node over ssh.

This package imports neither :mod:`.backend` nor :mod:`.section`: the config schema loads the section while
``cloudtrain.config`` is still being imported, and the backend imports the config."""
