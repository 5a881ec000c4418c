# Order-dependent findings (issue #14): a campaign against model-bug-second-shape (its
# compiled path fails only on the second distinct shape a compiled function sees) finds the
# failure, the shrinker sees that the case alone passes, replays the worker's history, and
# leaves a 2-call sequence case that `flce run` and the emitted repro.py reproduce.
# Included from tests/CMakeLists.txt this registers the test; run with -P it is the test.
if(NOT CMAKE_SCRIPT_MODE_FILE)
  add_test(NAME order_dependent_sequence COMMAND ${CMAKE_COMMAND} -DFLCE=$<TARGET_FILE:flce> -DSRC=${CMAKE_SOURCE_DIR}
           -DPY=${FLCE_PYTHON} -DWORK=${CMAKE_CURRENT_BINARY_DIR}/order_dependent -P ${CMAKE_CURRENT_LIST_FILE})
  # Every shrink try starts a fresh worker (an interpreter and torch): slow on a loaded machine.
  set_tests_properties(order_dependent_sequence PROPERTIES LABELS "python" TIMEOUT 1500)
  add_test(NAME order_dependent_fresh_minimum COMMAND ${CMAKE_COMMAND} -DFLCE=$<TARGET_FILE:flce> -DSRC=${CMAKE_SOURCE_DIR}
           -DPY=${FLCE_PYTHON} -DWORK=${CMAKE_CURRENT_BINARY_DIR}/order_dependent_fresh -DPART=fresh
           -P ${CMAKE_CURRENT_LIST_FILE})
  set_tests_properties(order_dependent_fresh_minimum PROPERTIES LABELS "python" TIMEOUT 1500)
  return()
endif()

function(require what)
  if(NOT (${ARGN}))
    message(FATAL_ERROR "${what}")
  endif()
endfunction()
function(expect rc_want)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "${ARGN}: exit ${rc}")
  if(NOT rc EQUAL rc_want)
    message(FATAL_ERROR "${ARGN}: exit ${rc}, expected ${rc_want}\nstdout:\n${out}\nstderr:\n${err}")
  endif()
  set(OUT "${out}" PARENT_SCOPE)
  set(ERR "${err}" PARENT_SCOPE)
endfunction()

# A campaign of model-bug-second-shape over ${WORK}/corpus (one worker, MINIMIZE_S of shrinking)
# with exactly one finding: the report in RJ, the finding's signature and id in SIG and ID.
# --grace-s: the shrink must end on its own; the default 120 s stopped it mid-way on a loaded
# 2-core machine (the fresh-clone check of a459b8c: three steps in, status "").
function(one_finding max_cases minimize_s)
  expect(1 ${FLCE} campaign --minutes 15 --max-cases ${max_cases} --out ${WORK}/run --corpus ${WORK}/corpus
         --subject model-bug-second-shape --workers 1 --seed 1 --minimize-s ${minimize_s} --case-timeout 400
         --grace-s 900)
  message(STATUS "campaign:\n${OUT}\n${ERR}")
  file(READ ${WORK}/run/report.json rj)
  string(JSON n LENGTH "${rj}" findings)
  require("expected one finding, got ${n}:\n${rj}" n EQUAL 1)
  string(JSON sig GET "${rj}" findings 0 signature)
  string(JSON id GET "${rj}" findings 0 id)
  set(RJ "${rj}" PARENT_SCOPE)
  set(SIG "${sig}" PARENT_SCOPE)
  set(ID "${id}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/corpus)

if(PART STREQUAL "fresh")
  # A case that fails alone (its extra_BT gives the compiled function a second shape) but whose
  # shrink, with every try in one worker, would drop extra_BT: the tries before have already
  # shown the function another shape. The minimum must fail alone too (on the H200 such minima
  # gave scripts that printed NOT REPRODUCED alone): checked in a fresh worker, and shrunk again
  # with each try fresh, it keeps extra_BT, and `flce run` in a new process reproduces it.
  set(G "\"H\": 1, \"V\": 2, \"input_dtype\": \"fp32\", \"weight_dtype\": \"fp32\", \"compile\": {\"backend\": \"eager\"}")
  file(WRITE ${WORK}/corpus/x.json "{\"BT\": 2, ${G}, \"extra_BT\": [3], \"seed\": 3}\n")
  one_finding(1 60)  # a minute of shrinking: the fresh pass need not finish, only keep what the case needs alone
  string(JSON shrink GET "${RJ}" findings 0 shrink)
  require("shrink status: ${shrink}" shrink MATCHES "^(minimized|budget|smallest) \\(each try in a fresh worker")
  file(READ ${WORK}/run/findings/${ID}/minimized.json mj)
  string(JSON nx ERROR_VARIABLE no_extra LENGTH "${mj}" extra_BT)
  require("the minimum lost its second shape (extra_BT): ${mj}" NOT no_extra AND nx GREATER 0)
  expect(1 ${FLCE} run ${WORK}/run/findings/${ID}/minimized.json --subject model-bug-second-shape --no-ladder --json)
  string(JSON got GET "${OUT}" outcome)
  string(REGEX REPLACE "@compiled:.*" "" base "${SIG}")  # any stage: the shrink may reset the backend
  require("flce run on the minimum, alone: ${got}, want ${base} at any stage" got MATCHES "^${base}@compiled:")
  return()
endif()
# One graph (fp32, backend eager, automatic dynamic shapes), three calls in this order:
# a (BT 4) compiles it; b (BT 4 again, other values) reuses it; c (BT 6) recompiles it with
# symbolic sizes and fails. c alone passes; only a (or b) matters, so ddmin keeps one.
set(G "\"H\": 8, \"V\": 16, \"input_dtype\": \"fp32\", \"weight_dtype\": \"fp32\", \"compile\": {\"backend\": \"eager\"}")
file(WRITE ${WORK}/corpus/a-first.json "{\"BT\": 4, ${G}, \"seed\": 1}\n")
file(WRITE ${WORK}/corpus/b-same-shape.json "{\"BT\": 4, ${G}, \"seed\": 2}\n")
file(WRITE ${WORK}/corpus/c-second-shape.json "{\"BT\": 6, ${G}, \"seed\": 3}\n")
set(S model-bug-second-shape)
set(D ${WORK}/run)

one_finding(3 400)
set(sig "${SIG}")
set(id "${ID}")
string(JSON first GET "${RJ}" findings 0 first_case)
require("finding ${sig} not on the compiled path" sig MATCHES "@compiled:eager$")
require("finding first seen on ${first}, want c-second-shape" first MATCHES "^corpus:c-second-shape.json@")
set(F ${D}/findings/${id})

# The worker's result line carried the calls before it on that compiled function.
file(READ ${F}/report.json frep)
string(JSON nh LENGTH "${frep}" history compiled)
require("history of ${nh} calls, want 2 (a, b)" nh EQUAL 2)

# Alone, the case passes (exit 0): the per-case shrink cannot keep it.
expect(0 ${FLCE} run ${F}/case.json --subject ${S} --no-ladder)

# The shrinker turned it into a sequence case of 2 calls: a (or b), then c shrunk.
file(READ ${F}/finding.json fj)
string(JSON shrink GET "${fj}" shrink)
require("shrink status: ${shrink}" shrink MATCHES "^minimized-sequence: 2 calls \\(of 3")
file(READ ${F}/minimized.json mj)
string(JSON schema GET "${mj}" schema)
string(JSON calls LENGTH "${mj}" sequence)
require("minimized.json: schema ${schema}, ${calls} calls" schema STREQUAL "flce-sequence/1" AND calls EQUAL 2)
string(JSON bt0 GET "${mj}" sequence 0 BT)
string(JSON bt1 GET "${mj}" sequence 1 BT)
require("the two calls need two shapes: BT ${bt0}, ${bt1}" NOT bt0 EQUAL bt1)
file(READ ${D}/report.md md)
require("report.md does not point at the sequence case" md MATCHES "minimized-sequence" AND md MATCHES "minimized.json")

# flce run replays the sequence in one process: the finding again (exit 1, same outcome).
expect(1 ${FLCE} run ${F}/minimized.json --subject ${S} --json)
string(JSON got GET "${OUT}" outcome)
require("flce run on the sequence: ${got}, want ${sig}" got STREQUAL sig)
string(JSON ne LENGTH "${OUT}" earlier_outcomes)
require("flce run: ${ne} earlier outcomes" ne EQUAL 1)

# The repro.py the shrinker wrote runs without flce (the venv python, flce's subjects on the path).
execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${SRC}/subjects ${PY} ${F}/repro.py
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "repro.py: exit ${rc}\n${out}")
require("repro.py: exit ${rc}\n${out}\n${err}" rc EQUAL 0 AND out MATCHES "REPRODUCED: ${sig}" AND out MATCHES "Earlier call 1/1")

# A sequence whose calls would need two compiled functions is bad input naming the field.
set(B "\"H\": 8, \"V\": 16, \"input_dtype\": \"bf16\", \"weight_dtype\": \"bf16\", \"compile\": {\"backend\": \"eager\"}")
file(WRITE ${WORK}/bad-sequence.json
     "{\"schema\": \"flce-sequence/1\", \"sequence\": [{\"BT\": 4, ${G}}, {\"BT\": 6, ${B}}]}\n")
expect(2 ${FLCE} run ${WORK}/bad-sequence.json --subject ${S})
require("bad sequence: ${ERR}" ERR MATCHES "sequence\\[1\\]\\.input_dtype")
