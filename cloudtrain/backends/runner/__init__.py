"""Running a job's replicas on a machine cloudtrain reaches itself (here, a Slurm cluster's nodes), for any backend.

:mod:`.image` stands in for the cloud's image, :mod:`.venv` builds the cached environment on it, :mod:`.contract`
plans each replica under the contract of the backend the job follows (``Backend.local_contract``, read through the
registry), :mod:`.buckets` reads a bucket channel with its backend's ``bucket_store``. Nothing here imports a
backend's folder."""
