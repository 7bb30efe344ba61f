#!/bin/bash
# usage: bash bench/sim_ab.sh RUNS BINARY_A BINARY_B
# Simulator speed, A/B: interleaved runs (A, B, A, B, ...) of `myrix bench sim` on 16
# switches (100 ms simulated) and 1024 switches (4 ms), loads 0.005 and 0.015; prints the
# median delivered flits per CPU second of each binary per point and the ratio B/A.
RUNS=${1:-5}; A=$2; B=$3
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
run() { # binary tag
  { $1 bench sim --sizes 16 --loads 0.005,0.015 --sim-time 100ms
    $1 bench sim --sizes 1024 --loads 0.005,0.015 --sim-time 4ms; } |
    awk -v t="$2" '$1 ~ /^[0-9]+$/ { print t, $1 "@" $2, $8 }' >>"$W/all"
}
for i in $(seq "$RUNS"); do run "$A" A; run "$B" B; done
med() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf "%-12s %14s %14s %8s\n" point "A median" "B median" "B/A"
for p in $(awk '{print $2}' "$W/all" | sort -u -t@ -k1,1n -k2,2); do
  a=$(awk -v p="$p" '$1=="A" && $2==p {print $3}' "$W/all" | med)
  b=$(awk -v p="$p" '$1=="B" && $2==p {print $3}' "$W/all" | med)
  printf "%-12s %14s %14s %8.3f   A: %s  B: %s\n" "$p" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN {print b / a}')" \
    "$(awk -v p="$p" '$1=="A" && $2==p {printf "%s ", $3}' "$W/all")" \
    "$(awk -v p="$p" '$1=="B" && $2==p {printf "%s ", $3}' "$W/all")"
done
