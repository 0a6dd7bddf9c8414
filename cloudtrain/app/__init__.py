"""The application layer: prepare → plan → submit with fallbacks → record → follow → summarise, for the CLI and the
Python API alike. It never prints or exits: it returns data, reports through callbacks, raises :mod:`.errors`."""
