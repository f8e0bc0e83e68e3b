"""`python -m lean_sorry_repos_benchmark [args]` is `lsrb run goal_to_tactic_proposal_v1 [args]`."""

import sys

from lean_sorry_repos_benchmark import main

sys.exit(main())
