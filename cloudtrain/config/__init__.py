"""Job configs: YAML (or ML Engine's legacy format) → a validated, typed :class:`~.schema.JobConfig`
(:func:`~.load.load_config`). Importing this package loads nothing: the loader is imported where it is used."""
