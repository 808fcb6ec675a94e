#!/usr/bin/env bash
# Picked up by bench/run.sh (which sets BUILD_DIR); the benchmark itself is resolve-scaling.sh.
exec bash "$(dirname "$0")/resolve-scaling.sh" "$@"
