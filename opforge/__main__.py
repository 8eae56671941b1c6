import sys

from opforge.tools.cli import main

sys.exit(main())
