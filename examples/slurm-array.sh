#!/bin/bash
# A Slurm job array: one shard per array task, then merge. Submit with
#   sbatch examples/slurm-array.sh
# and, once all tasks finished (or chained: sbatch --dependency=afterok:<jobid> ...):
#   lsrb merge lsrb-out/shards/shard-* --out lsrb-out/merged
#SBATCH --job-name=lsrb
#SBATCH --array=0-3
#SBATCH --cpus-per-task=4
#SBATCH --time=04:00:00
#SBATCH --output=lsrb-%A_%a.log
set -euo pipefail

# --lsrb-shard-index auto reads SLURM_ARRAY_TASK_ID (minus SLURM_ARRAY_TASK_MIN, so --array=1-4
# works too) and the count from SLURM_ARRAY_TASK_COUNT. The response cache may live on the shared
# filesystem: on NFS/Lustre it uses SQLite's rollback journal instead of WAL by itself.
lsrb run goal_to_tactic_proposal_v1 -n "$SLURM_CPUS_PER_TASK" \
  --lsrb-adapter=openai --lsrb-base-url="$LSRB_BASE_URL" --lsrb-model="$LSRB_MODEL" \
  --lsrb-outcome=record \
  --lsrb-shard-index=auto \
  --lsrb-cache-dir="$HOME/.cache/lsrb" \
  --lsrb-output-dir="lsrb-out/shards/shard-$SLURM_ARRAY_TASK_ID"
