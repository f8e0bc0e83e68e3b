#!/bin/bash
# A Slurm job array: one shard per array task, then merge. Submit from your checkout of
# pytest-lsrb (or set LSRB_PACKAGE to a wheel built from it, or to a pinned VCS URL such as
# "pytest-lsrb @ git+https://github.com/<owner>/pytest-lsrb@<commit>") with
#   sbatch examples/slurm-array.sh
# (on nodes with fewer than the 4 CPUs a task asks below: sbatch --cpus-per-task=1 ...)
# and, once all tasks finished (or chained: sbatch --dependency=afterok:<jobid> ...):
#   lsrb merge lsrb-out/shards/shard-* --out lsrb-out/merged
#
# Retry-safe: on preemption (or scancel) Slurm sends SIGTERM; lsrb keeps every finished attempt and
# exits 143, Slurm requeues the task (--requeue), and the same command (--lsrb-resume-or-start)
# continues the shard, answering from the shared response cache what was already asked.
#SBATCH --job-name=lsrb
#SBATCH --array=0-3
#SBATCH --cpus-per-task=4
#SBATCH --time=04:00:00
#SBATCH --requeue
#SBATCH --open-mode=append
#SBATCH --output=lsrb-%A_%a.log
set -euo pipefail
cd "${SLURM_SUBMIT_DIR:-.}"

# One environment for every task, made by the first task that gets the lock (the others wait).
LSRB_PACKAGE=${LSRB_PACKAGE:-$PWD}
LSRB_VENV=${LSRB_VENV:-$HOME/.cache/lsrb-venv}
mkdir -p "$(dirname "$LSRB_VENV")"
(
  flock 9
  if [ ! -x "$LSRB_VENV/bin/lsrb" ]; then
    python3 -m venv "$LSRB_VENV"
    "$LSRB_VENV/bin/python" -m pip install --quiet "$LSRB_PACKAGE"
  fi
) 9>"$LSRB_VENV.lock"

# SIGTERM reaches every process of the job: this shell waits for lsrb to save the run and exit.
trap 'echo "slurm-array: SIGTERM: the shard saves its run and stops; a requeue continues it"' TERM

# --lsrb-shard-index auto reads SLURM_ARRAY_TASK_ID (minus SLURM_ARRAY_TASK_MIN, so --array=1-4
# works too) and the count from SLURM_ARRAY_TASK_COUNT. The response cache may live on the shared
# filesystem: on NFS/Lustre it uses SQLite's rollback journal instead of WAL by itself.
status=0
"$LSRB_VENV/bin/lsrb" run goal_to_tactic_proposal_v1 -n "$SLURM_CPUS_PER_TASK" \
  --lsrb-adapter=openai --lsrb-base-url="$LSRB_BASE_URL" --lsrb-model="$LSRB_MODEL" \
  --lsrb-outcome=record \
  --lsrb-shard-index=auto \
  --lsrb-resume-or-start \
  --lsrb-cache-dir="$HOME/.cache/lsrb" \
  --lsrb-output-dir="lsrb-out/shards/shard-$SLURM_ARRAY_TASK_ID" || status=$?
exit "$status"
