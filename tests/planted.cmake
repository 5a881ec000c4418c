# Planted bugs found by an eager-only campaign from an empty corpus: each model-bug-* below
# must be found within 60 s on 2 workers with the right outcome, every finding must be that
# bug's, and unmutated `model` must give no finding in the same budget. Included from
# tests/CMakeLists.txt, this file registers the tests; with -P -DPART=<subject> it is the test.
# Eager only: FLCE_FUZZ_COMPILED=0 (campaign_worker.cpp), until `--lanes eager=2` replaces it.
# --family 1: families only amortize compiles; with 32 the first 6 families (192 cases) are
# the plain configurations (mean, every input requiring grad, no autocast), where none of
# these bugs can show, and a family's configuration (autocast: ~3% of them) is drawn once.
if(NOT CMAKE_SCRIPT_MODE_FILE)
  foreach(part model-bug-token-grad-rows model-bug-autocast-no-bias model-bug-input-no-grad model)
    add_test(NAME planted_campaign_${part} COMMAND ${CMAKE_COMMAND} -DFLCE=$<TARGET_FILE:flce>
             -DWORK=${CMAKE_CURRENT_BINARY_DIR}/planted_${part} -DPART=${part} -P ${CMAKE_CURRENT_LIST_FILE})
    set_tests_properties(planted_campaign_${part} PROPERTIES LABELS "python" TIMEOUT 300)
  endforeach()
  return()
endif()

# What each planted bug must show (the outcome signature), and a word its detail must carry.
set(want_model-bug-token-grad-rows "^judge:grad_(input|weight):out-of-bounds@eager$")
set(detail_model-bug-token-grad-rows "out of bounds")
set(want_model-bug-autocast-no-bias "^amp-mat-dtype-mismatch@eager:-$")
set(detail_model-bug-autocast-no-bias "to have the same dtype")
set(want_model-bug-input-no-grad "^bucket-[0-9a-f]+@eager:-$")
set(detail_model-bug-input-no-grad "NoneType")

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/empty)
set(D ${WORK}/run)
set(rc_want 1)
if(PART STREQUAL "model")
  set(rc_want 0)
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env FLCE_FUZZ_COMPILED=0
                        ${FLCE} campaign --minutes 1 --out ${D} --corpus ${WORK}/empty --subject ${PART} --workers 2
                        --family 1 --seed 1 --minimize-s 0 --quiet
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "flce campaign --subject ${PART} (eager only, 2 workers, 60 s): exit ${rc}\n${out}")
file(READ ${D}/report.json rj)
string(JSON done GET "${rj}" cases_done)
string(JSON n LENGTH "${rj}" findings)
if(NOT rc EQUAL rc_want)
  message(FATAL_ERROR "exit ${rc}, expected ${rc_want} (${n} findings in ${done} cases)\n${out}\n${err}")
endif()
if(PART STREQUAL "model")
  if(NOT n EQUAL 0)
    string(JSON f GET "${rj}" findings)
    message(FATAL_ERROR "unmutated model: ${n} findings in ${done} eager cases (false findings):\n${f}")
  endif()
  message(STATUS "model: no finding in ${done} eager cases (60 s, 2 workers)")
  return()
endif()
if(n EQUAL 0)
  message(FATAL_ERROR "${PART} not found in ${done} eager cases (60 s, 2 workers)")
endif()
set(first "")
math(EXPR last "${n} - 1")
foreach(i RANGE ${last})
  string(JSON sig GET "${rj}" findings ${i} signature)
  string(JSON detail GET "${rj}" findings ${i} detail)
  string(JSON t GET "${rj}" findings ${i} first_seen_s)
  string(JSON count GET "${rj}" findings ${i} count)
  if(NOT sig MATCHES "${want_${PART}}")
    message(FATAL_ERROR "${PART}: finding ${sig} is not the planted bug's (${want_${PART}}): ${detail}")
  endif()
  string(FIND "${detail}" "${detail_${PART}}" at)
  if(at LESS 0)
    message(FATAL_ERROR "${PART}: finding ${sig} detail lacks '${detail_${PART}}': ${detail}")
  endif()
  if(first STREQUAL "" OR t LESS first)
    set(first ${t})
  endif()
  message(STATUS "${PART}: ${sig} x${count}: ${detail}")
endforeach()
if(first GREATER 60)
  message(FATAL_ERROR "${PART}: first found after ${first} s (budget 60 s)")
endif()
message(STATUS "time to find ${PART}: ${first} s (eager only, 2 workers, empty corpus, seed 1; ${done} cases in 60 s)")
