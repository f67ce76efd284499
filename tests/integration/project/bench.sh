#!/bin/sh
# The candidate's bench: runs the bench program ($1) with the per-config
# microseconds the candidate's bench.conf ($2) declares ("small=200 large=200"),
# and the options after them.
bench=${1:?usage: bench.sh BENCH CONF [OPTION...]}
conf=${2:?usage: bench.sh BENCH CONF [OPTION...]}
shift 2
# Word splitting of the file's one line is intended: one argument per config.
# shellcheck disable=SC2046
exec "$bench" "$@" $(cat "$conf")
