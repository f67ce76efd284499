#!/usr/bin/env bash
# Issue 23 on a GPU: a user's first hour with the triton-cuda profile, end
# to end. A git repository with a Triton operator (examples/gpu/OP's
# reference, committed), `kport init --profile triton-cuda --op OP --repo`,
# the spec's FILL IN lines filled as a user would (sed below), the
# claude-code adapter driving a stand-in `claude` (profile_job/claude) that
# replays examples/gpu/OP/recording, then `kport run`: the job must end
# ACCEPTED with a commit on its branch kport/OP/<job> and port.patch in the
# evidence. Needs a CUDA device, torch, Triton and CuPy; run from the
# repository root with build/bundle (scripts/device-bundle).
#   benchmarks/gpu/profile_job.sh [OP]     (default softmax)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
op=${1:-softmax}
bin=${KPORT_BIN:-$root/build/bundle/bin/kport}
work=${KPORT_PROFILE_JOB_DIR:-/tmp/kport-profile-job}
rm -rf "$work" && mkdir -p "$work"
export PYTHONPATH=$root/sdk/python${PYTHONPATH:+:$PYTHONPATH}

repo=$work/repo
git init -q "$repo"
cp -r "$root/examples/gpu/$op/reference" "$repo/$op"
git -C "$repo" add -A
git -C "$repo" -c user.name=user -c user.email=user@example.com commit -qm "$op: Triton reference"

"$bin" init --profile triton-cuda --op "$op" --repo "$repo" -o "$work/job/port.toml"
spec=$work/job/port.toml
# What the user fills in: the reference's folder in the repository, one
# bench config for the IR dump, and the port's kernel names (the recorded
# port's, read from the example's spec).
config=$(grep -o '"--config", "[^"]*"' "$root/examples/gpu/$op/port.toml" | head -1 | sed 's/.*, "\(.*\)"/\1/')
sed -i -e "s|^dir = \".*\"|dir = \"$repo/$op\"|" \
  -e "s|\"--config\", \"CONFIG\"|\"--config\", \"$config\"|" "$spec"
cat >> "$spec" <<TOML

[agents.env]
FAKE_RECORDING = "$root/examples/gpu/$op/recording"
TOML
# The stand-in is `claude` on PATH, as the real CLI would be.
export PATH=$root/benchmarks/gpu/profile_job:$PATH
echo "== spec"; cat "$spec"
echo "== kport run"
rc=0
"$bin" run "$spec" --runs-dir "$work/runs" --json > "$work/run.json" || rc=$?
cat "$work/run.json"
job=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][0]["job"])' "$work/run.json")
echo "== exit $rc, job $job"
python3 - "$work/runs/$job/verdict.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
print("state", v.get("state"), "reason", v.get("reason"))
perf = v.get("perf") or {}
print("geomean", perf.get("geomean"), "floor", perf.get("floor"))
for k in ("usage", "git", "commit", "branch", "sandbox"):
    if k in v:
        print(k, json.dumps(v[k])[:300])
PY
echo "== branches"; git -C "$repo" branch -a
echo "== last commit on the port branch"
branch=$(git -C "$repo" branch --list "kport/$op/*" --format='%(refname:short)' | head -1)
[[ -n $branch ]] && git -C "$repo" log -1 --stat "$branch"
ls "$work/runs/$job"
exit $rc
