"""``backend: kubernetes``: a training package on any Kubernetes cluster (GKE, EKS, one's own), as an indexed
Job with a headless Service, or a JobSet.

The registry names :mod:`cloudtrain.backends.kubernetes.backend` (its ``BACKEND``) and
:mod:`cloudtrain.backends.kubernetes.section` (the ``kubernetes:`` keys) apart, and this package imports
neither: the config schema loads the section while ``cloudtrain.config`` is still being imported.
The official ``kubernetes`` client is imported only by :mod:`.api`, when a job talks to a cluster.
"""
