"""Running a job's replicas on a machine cloudtrain reaches itself (this one, a Slurm cluster's nodes),
under a backend's environment contract: shared by the backends that do, and owned by none of them.

:mod:`.image` stands in for the cloud's prebuilt image (a Python and a package list), :mod:`.venv`
builds the package's cached environment on it (its phases told by :mod:`.build_steps`), and
:mod:`.contract` plans each replica under the contract of the backend the job follows, which that
backend gives as ``Backend.local_contract`` (:mod:`cloudtrain.backends.environment`) and this package
reads through the registry. :mod:`.buckets` reads a bucket data channel with the client of the backend
whose buckets they are (``Backend.bucket_store``). Nothing here imports a backend's folder.
"""
