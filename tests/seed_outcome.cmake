# The seed's outcome on the torch under test, as the corpus pins it (the one place that
# says which tier a torch release shows: tier 1 before 2.13, tier 2 from 2.13). Sets
# SEED_SIG ("<signature>@compiled:<stage>"), SEED_ID, SEED_STAGE and OTHER_SIG (the other
# tier, for "a wrong expectation is refused" checks). Needs FLCE.
execute_process(COMMAND ${FLCE} replay --expected --json --only seed-model-bf16-accum-fp32
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
string(REGEX MATCH "{[^\n]*}" _line "${_out}")
if(NOT _rc EQUAL 0 OR NOT _line)
  message(FATAL_ERROR "flce replay --expected: exit ${_rc}\n${_out}\n${_err}")
endif()
string(JSON SEED_SIG GET "${_line}" expected)
string(JSON _torch GET "${_line}" torch)
if(NOT SEED_SIG MATCHES "^([a-z0-9-]+)@compiled:([a-z_]+)$")
  message(FATAL_ERROR "corpus/expectations.json pins no seed outcome for torch ${_torch}: '${SEED_SIG}'")
endif()
set(SEED_ID ${CMAKE_MATCH_1})
set(SEED_STAGE ${CMAKE_MATCH_2})
if(SEED_ID STREQUAL "tier1-decomposition")
  set(OTHER_SIG "tier2-lowering@compiled:inductor")
else()
  set(OTHER_SIG "tier1-decomposition@compiled:eager")
endif()
message(STATUS "seed outcome on torch ${_torch}: ${SEED_SIG}")
