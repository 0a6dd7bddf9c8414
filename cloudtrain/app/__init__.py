"""The application layer: prepare → plan → submit with fallbacks → record → follow → summarise, for the CLI and
the Python API. It never prints or exits: it returns data, reports via callbacks, raises :mod:`~cloudtrain.errors`."""
