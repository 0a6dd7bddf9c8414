import sys

from cloudtrain.cli import main

sys.exit(main())
