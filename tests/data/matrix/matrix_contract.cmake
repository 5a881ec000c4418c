# flce matrix on the pinned torch only (cmake -P; FLCE, SRC, PY, OUT): two pinned cases must
# come back as the corpus expects for this torch (--strict), with the torch version as the
# column and the first failing ladder stage in the cell; a missing interpreter is bad input.
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${FLCE} matrix --python ${PY} --only raw-addmm-dtype-no-out model-bf16-default --strict
                --out ${OUT} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "flce matrix: exit ${rc}\n${err}")
endif()
execute_process(COMMAND ${PY} -c "import torch; print(torch.__version__, end='')" OUTPUT_VARIABLE tv)
string(REPLACE "+" "\\+" tv_re "${tv}")
foreach(re "case +subject +torch ${tv_re}" "cases/raw-addmm-dtype-no-out.json +aten-dtype-out +[a-z0-9-]+@[a-z_]+"
           "cases/model-bf16-default.json +model +pass")
  if(NOT out MATCHES "${re}")
    message(FATAL_ERROR "matrix table: no match for '${re}'")
  endif()
endforeach()
if(out MATCHES "\\[(regressed|changed|new)\\]")
  message(FATAL_ERROR "a pinned case did not come back as expected")
endif()
file(READ ${OUT}/matrix.json j)
# The failing raw op's ladder: walked from eager up to its first failing stage, which is
# the cell's, and ends with the compiled run's own backend.
string(JSON n LENGTH "${j}" rows 0 cells 0 ladder)
math(EXPR last "${n} - 1")
string(JSON last_backend GET "${j}" rows 0 cells 0 ladder ${last} backend)
string(JSON first_backend GET "${j}" rows 0 cells 0 ladder 0 backend)
if(n LESS 2 OR NOT first_backend STREQUAL "eager" OR NOT last_backend STREQUAL "inductor")
  message(FATAL_ERROR "the failing raw op's ladder must run from eager to inductor, got ${n} steps: ${first_backend}..${last_backend}")
endif()
execute_process(COMMAND ${FLCE} matrix --python /nonexistent/bin/python --only model-bf16-default
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "no Python interpreter at /nonexistent/bin/python")
  message(FATAL_ERROR "missing interpreter: exit ${rc}: ${err}")
endif()
