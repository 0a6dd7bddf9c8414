"""``backend: slurm``: a training package on any Slurm cluster, here or through its login node over ssh."""

from cloudtrain.backends.slurm.backend import SlurmBackend

BACKEND = SlurmBackend()
