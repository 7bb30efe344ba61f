#!/bin/bash
# usage: bash bench/ab.sh LEN RUNS BINARY...  Interleaved runs of several myrix binaries
# (shm ping-pong of LEN bytes, pinned to CPUs 0 and 1); prints each one's median
# one-way latency in µs. For A/B comparisons on a noisy machine: build the two
# versions, copy each binary aside, run them here.
LEN=${1:-8}; RUNS=${2:-7}; shift 2
declare -A res
for i in $(seq $RUNS); do
  for b in "$@"; do
    v=$($b bench pingpong --transport shm --cpu 0,1 --start $LEN --end $LEN --iterations 200000 --warmup 5000 --format json | sed 's/.*"latency_us":\([0-9.e+-]*\).*/\1/')
    res[$b]="${res[$b]} $v"
  done
done
for b in "$@"; do
  echo "$b: $(echo ${res[$b]} | tr ' ' '\n' | sort -g | awk '{a[NR]=$1} END {print "median", a[int((NR+1)/2)], "all:"}') ${res[$b]}"
done
