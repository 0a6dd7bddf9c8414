"""The application layer: prepare → plan → submit with fallbacks → record → follow → summarise.

The CLI (:mod:`cloudtrain.cli`) and the Python API (:mod:`cloudtrain.api`) both call it. It never prints and never
exits: it returns data, reports through the ``notify`` / ``on_event`` callbacks and the views
(:mod:`~cloudtrain.app.submit`, :mod:`~cloudtrain.app.sweeps.drive`) it is given, and raises the exceptions of
:mod:`cloudtrain.errors`, which the CLI turns into its one-line messages and exit codes. Below it: config, spec,
packaging, data, backends, history (they never import it); above it: the CLI and the API.
"""
