"""The application layer: prepare → plan → submit with fallbacks → record → follow → summarise, for the CLI and the
Python API alike. It never prints or exits: it returns data, reports through the callbacks and views it is given, and
raises :mod:`cloudtrain.errors`. Below it: config, spec, packaging, data, backends, history; none imports it."""
