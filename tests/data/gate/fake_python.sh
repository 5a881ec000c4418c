#!/bin/bash
# Stands in for `python -m flce_subjects.subprocess_worker` in gate_matrix_test.cpp: answers
# the environment request, crashes on subject "crash", never answers for "hang", and says
# "unsupported" for any other run, so the worker client's crash/timeout/restart paths are
# tested without torch.
while IFS= read -r line; do
  case "$line" in
    *'"op":"environment"'*) echo '{"python":"fake","torch":"9.9.9","gpu":""}' ;;
    *'"subject":"crash"'*) kill -SEGV $$ ;;
    *'"subject":"hang"'*) sleep 100 ;;
    *'"op":"run"'*) echo '{"status":"unsupported","reason":"fake worker"}' ;;
    *) echo '{}' ;;
  esac
done
