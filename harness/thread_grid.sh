#!/usr/bin/env bash
# Measures scenario x threads with the harness's `--json` report (issue 24).
#
# Each round runs every thread count of a row back to back (a paired run),
# so a change of machine load hits the thread counts of one round alike;
# the script prints, per row, the median ticks per second of each thread
# count over the rounds and the median over the rounds of each paired
# ratio to the first thread count.
#
# Usage: harness/thread_grid.sh [ROWS...]
#   ROWS: small movers1k movers10k shmup particles (default: all)
# Environment:
#   HARNESS  the binary (default: target/release/harness; build it with
#            `cargo build --release -p harness`)
#   THREADS  thread counts, the first being the ratios' base (default "1 2 8")
#   RUNS     rounds (default 5)
# Needs `jq`. Prints a Markdown table; `uptime` before and after shows the
# machine's load while it ran.
set -euo pipefail

HARNESS=${HARNESS:-target/release/harness}
THREADS=${THREADS:-"1 2 8"}
RUNS=${RUNS:-5}
ROWS=("$@")
if [ ${#ROWS[@]} -eq 0 ]; then
    ROWS=(small movers1k movers10k shmup particles)
fi

args_of() {
    case "$1" in
        small) echo "--scenario harness/scenarios/small.toml" ;;
        movers1k) echo "--scenario movers --ticks 20000" ;;
        movers10k) echo "--scenario movers --scale 10 --ticks 5000" ;;
        shmup) echo "" ;;
        particles) echo "--scenario particles --ticks 150" ;;
        *) echo "unknown row '$1' (small movers1k movers10k shmup particles)" >&2; exit 2 ;;
    esac
}

median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

read -r -a threads <<<"$THREADS"
base=${threads[0]}
echo "load before: $(uptime)"
header="| row |"
rule="|---|"
for t in "${threads[@]}"; do
    header+=" $t thr (ticks/s) |"
    rule+="---|"
done
for t in "${threads[@]:1}"; do
    header+=" $t / $base |"
    rule+="---|"
done
echo
echo "$header"
echo "$rule"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for row in "${ROWS[@]}"; do
    # shellcheck disable=SC2207
    args=($(args_of "$row"))
    for _ in $(seq "$RUNS"); do
        for t in "${threads[@]}"; do
            "$HARNESS" "${args[@]}" --threads "$t" --json | jq -r .ticks_per_second >"$tmp/now"
            cat "$tmp/now" >>"$tmp/$row.$t"
        done
        first=$(tail -n 1 "$tmp/$row.$base")
        for t in "${threads[@]:1}"; do
            awk -v a="$(tail -n 1 "$tmp/$row.$t")" -v b="$first" 'BEGIN { print a / b }' >>"$tmp/$row.ratio.$t"
        done
    done
    line="| $row |"
    for t in "${threads[@]}"; do
        line+=" $(median <"$tmp/$row.$t" | awk '{ printf "%.0f", $1 }') |"
    done
    for t in "${threads[@]:1}"; do
        line+=" $(median <"$tmp/$row.ratio.$t" | awk '{ printf "%.2fx", $1 }') |"
    done
    echo "$line"
done
echo
echo "load after: $(uptime)"
