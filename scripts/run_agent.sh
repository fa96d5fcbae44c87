#!/usr/bin/env bash
# Runs a coding agent on EdgeKernelBench workloads (docs/AGENTS.md): for each workload and sample,
# `ekb workspace create` -> the agent inside the workspace under a wall-clock limit ->
# `ekb workspace collect` into a solutions directory that `ekb eval` then scores.
#
#   scripts/run_agent.sh [options] AGENT WORKLOAD...
#
# AGENT is claude-code, codex or aider (the recipes below), or any name together with
# --command CMD: CMD is run by bash inside the workspace, standard input closed, with
#   EKB_PROMPT         the instruction to give the agent
#   EKB_WORKSPACE      the workspace's absolute path (also the working directory)
#   EKB_SOLUTION_FILE  the file to write (solution.c, .cpp, .cu or .cl)
#   EKB_WORKLOAD       PATTERN/WORKLOAD
#   EKB_MAX_TURNS      --max-turns;  EKB_AGENT_MODEL  --model (may be empty)
# Its standard output is the transcript (token usage and cost are read from it); standard error
# goes to a log beside it.
#
# Options:
#   --backend B     cpu, cuda or opencl (default cpu)
#   --lang L        cpu: c or cpp (default c)
#   --out DIR       solutions directory (default agent-solutions/AGENT)
#   --work DIR      workspaces, transcripts and logs (default agent-work/AGENT)
#   --timeout S     wall-clock limit of one attempt in seconds (default 1800)
#   --samples N     attempts per workload (default 1)
#   --max-turns N   turns for agents that take a limit (default 40)
#   --model M       the agent's model
#   --command CMD   the agent command (see above)
#   --ekb PATH      the ekb binary (default $EKB, else build/ekb)
#   --eval          run `ekb eval` on the solutions directory afterwards (with $EKB_DB if set)
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "${1:-2}"; }

repo="$(cd "$(dirname "$0")/.." && pwd)"
backend=cpu lang=c out="" work="" timeout_s=1800 samples=1 max_turns=40 model="" command="" evaluate=0
ekb="${EKB:-$repo/build/ekb}"
while (($#)); do
  case "$1" in
    --backend) backend="$2"; shift 2 ;;
    --lang) lang="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --samples) samples="$2"; shift 2 ;;
    --max-turns) max_turns="$2"; shift 2 ;;
    --model) model="$2"; shift 2 ;;
    --command) command="$2"; shift 2 ;;
    --ekb) ekb="$2"; shift 2 ;;
    --eval) evaluate=1; shift ;;
    -h|--help) usage 0 ;;
    --) shift; break ;;
    -*) echo "run_agent: unknown option $1" >&2; usage ;;
    *) break ;;
  esac
done
(($# >= 2)) || usage
agent="$1"; shift
workloads=("$@")
[ -x "$ekb" ] || { echo "run_agent: no ekb at $ekb (build it, or pass --ekb PATH)" >&2; exit 2; }
ekb="$(cd "$(dirname "$ekb")" && pwd)/$(basename "$ekb")"

# The recipes. Each lets the agent read and edit files and run ./check, nothing else it needs.
if [ -z "$command" ]; then
  case "$agent" in
    claude-code)
      command='claude -p "$EKB_PROMPT" --output-format json --max-turns "$EKB_MAX_TURNS" \
        --allowedTools "Read,Write,Edit,Bash(./check:*)" ${EKB_AGENT_MODEL:+--model "$EKB_AGENT_MODEL"}' ;;
    codex)
      # ekb's own sandbox needs namespaces, which Codex's sandbox forbids: run this in a disposable
      # container or VM.
      command='codex exec --json --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox \
        ${EKB_AGENT_MODEL:+-m "$EKB_AGENT_MODEL"} "$EKB_PROMPT"' ;;
    aider)
      command='aider --message "$EKB_PROMPT" --yes --no-git --no-auto-commits --no-stream \
        --read TASK.md --read README.md --test-cmd ./check --auto-test \
        ${EKB_AGENT_MODEL:+--model "$EKB_AGENT_MODEL"} "$EKB_SOLUTION_FILE"' ;;
    *) echo "run_agent: no recipe for '$agent': pass --command CMD" >&2; exit 2 ;;
  esac
fi

out="${out:-agent-solutions/$agent}"
work="${work:-agent-work/$agent}"
mkdir -p "$out" "$work"
out="$(cd "$out" && pwd)"
work="$(cd "$work" && pwd)"

export EKB_MAX_TURNS="$max_turns" EKB_AGENT_MODEL="$model"
status=0
for workload in "${workloads[@]}"; do
  for ((s = 0; s < samples; s++)); do
    name="${workload//\//__}.a$s"
    ws="$work/$name"
    rm -rf "$ws"
    if ! "$ekb" workspace create "$workload" "$ws" --backend "$backend" --lang "$lang" >/dev/null; then
      status=1  # an unknown workload: the others still run
      continue
    fi
    solution_file="$(cd "$ws" && ls solution.* | head -n 1)"
    prompt="You are in an EdgeKernelBench workspace (the current directory). Read README.md and TASK.md, then write a correct and fast kernel in $solution_file. Run ./check to compile, test and time it against the baseline; iterate until it is correct and as fast as you can make it. Only $solution_file is collected."
    start=$(date +%s.%N)
    set +e
    (cd "$ws" && EKB_PROMPT="$prompt" EKB_WORKSPACE="$ws" EKB_SOLUTION_FILE="$solution_file" EKB_WORKLOAD="$workload" \
       timeout --kill-after=30 "$timeout_s" bash -c "$command" </dev/null >"$work/$name.transcript" 2>"$work/$name.log")
    code=$?
    set -e
    wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
    note="exit $code"
    ((code == 124 || code == 137)) && note="timed out after ${timeout_s} s"
    echo "run_agent: $workload attempt $s: agent $note, ${wall} s" >&2
    "$ekb" workspace collect "$ws" --out "$out" --transcript "$work/$name.transcript" --agent "$agent" \
      --wall-s "$wall" ${model:+--model "$model"} || status=1
  done
done

if ((evaluate)); then
  "$ekb" eval --backend "$backend" --solutions "$out" "${workloads[@]}" || status=1
fi
exit $status
