"""`python -m langgraph_chronomem.models provision|verify`."""

import sys

from langgraph_chronomem.models.provisioning import main

sys.exit(main())
