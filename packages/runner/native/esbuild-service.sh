#!/bin/sh
# esbuild's service for the sandbox runner (its ESBUILD_BINARY_PATH): the esbuild beside this
# file, with every argument but `--ping`. With it, the service wakes itself and the runner once
# a second to learn whether the runner is still there: in hundreds of idle sessions on a node,
# most of a core. Without it the service still ends with the runner, when its stdin (a pipe
# from the runner) closes.
for arg do
  shift
  [ "$arg" = --ping ] || set -- "$@" "$arg"
done
exec "${0%/*}/esbuild" "$@"
