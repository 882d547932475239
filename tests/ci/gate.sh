#!/usr/bin/env bash
# A CI job's regression gate, as docs/ci.md sets one up: a base run, the change's run, and
# `accessbench compare --fail-on` deciding the job's status. Here the "change" is made on
# purpose — one run over a path with 2 ms of added latency, one over 10 ms — and an A/A pair
# (two runs of the same settings) shows the gate stays quiet when nothing changed.
#
#   tests/ci/gate.sh DIR     runs in DIR; prints each gate's exit status; exits 0 when the A/A
#                            gate passed (0) and the slowed one failed (1), else 1
set -u
dir=${1:?usage: tests/ci/gate.sh DIR}
ab=${ACCESSBENCH:-accessbench}
cd "$dir" || exit 1

measure() {  # STORE PATH: the change's job measures what the base job measured
    "$ab" --store "$1" run --target postgresql --method py-psycopg --step sel1-prepared --quick \
        --trials 5 --no-report --path "$2" >/dev/null || exit 1
}
measure base.db tcp+2ms
measure same.db tcp+2ms
measure slower.db tcp+10ms

"$ab" --store base.db compare last same.db:last --fail-on 'slower>50%,mismatch' --summary aa.md
aa=$?
"$ab" --store base.db compare last slower.db:last --fail-on 'slower>50%,mismatch' --summary slowed.md
slowed=$?
echo "A/A gate: exit $aa; slowed gate: exit $slowed"
[ "$aa" -eq 0 ] && [ "$slowed" -eq 1 ]
