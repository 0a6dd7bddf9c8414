"""The application layer: prepare → plan → submit with fallbacks → record → follow → summarise.

The CLI (:mod:`cloudtrain.cli`) and the Python API (:mod:`cloudtrain.api`) both call it. It never
prints and never exits: it returns data, reports through the ``notify`` / ``on_event`` callbacks and
the views (:mod:`~cloudtrain.app.submit`, :mod:`~cloudtrain.app.sweeps.drive`) it is given, and raises the
exceptions of :mod:`cloudtrain.errors`, which the CLI turns into its one-line messages and exit codes.
Below it: config, spec, packaging, data, backends, history (they never import it); above it: the CLI
and the API.

* :mod:`~cloudtrain.app.submit` the one submit sequence (load, prepare, plan or create and follow), told to a view
* :mod:`~cloudtrain.app.prepare` config → spec → package, staged data, fallback candidates
* :mod:`~cloudtrain.app.plan` the exact request(s) and cost (``--dry-run``)
* :mod:`~cloudtrain.app.launch` submit with :mod:`~cloudtrain.app.fallback`, record in history
* :mod:`~cloudtrain.app.follow` a job followed to its end: masked lines, its progress, Ctrl-C as detach or cancel
* :mod:`~cloudtrain.app.outcome` a finished job's summary, kept in history
* :mod:`~cloudtrain.app.sweeps.drive` sweeps started, driven and resumed
  (with :mod:`~cloudtrain.app.sweeps.local`, :mod:`~cloudtrain.app.sweeps.lookup`)
* :mod:`~cloudtrain.app.locate` which backend, region and project a job id belongs to
* :mod:`~cloudtrain.app.tensorboard` TensorBoard over any jobs' event files (with :mod:`~cloudtrain.app.mirror`)
* :mod:`~cloudtrain.app.outputs` what a job produced, listed and downloaded
* :mod:`~cloudtrain.app.experiments` the jobs of an ``experiment:``
"""
