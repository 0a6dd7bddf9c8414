"""A SageMaker script-mode entry point that only looks: it writes what it was started with
(environment, argv, working directory, sys.path) to ``$SM_MODEL_DIR/probe.json``.

Standard library only, so it runs in any interpreter: the local run's and the one that runs
AWS's own container entry.
"""

import json
import os
import sys

seen = {"env": dict(os.environ), "argv": sys.argv[1:], "cwd": os.getcwd(), "sys_path": sys.path}
with open(os.path.join(os.environ["SM_MODEL_DIR"], "probe.json"), "w") as f:
    json.dump(seen, f, indent=2, sort_keys=True)
