# flce repro / minimize. Included from tests/CMakeLists.txt, this registers the tests; run
# with -P and -DREPRO_TEST=<name>, the same file is the test (CMake-scripted CLI contracts).
if(NOT CMAKE_SCRIPT_MODE_FILE)
  foreach(t verdicts emit_seed inputs_bitwise emit_hostile minimize_seed short_verdicts check_alone)
    add_test(NAME repro_${t} COMMAND ${CMAKE_COMMAND} -DREPRO_TEST=${t} -DFLCE=$<TARGET_FILE:flce>
             -DSRC=${CMAKE_SOURCE_DIR} -DPY=${FLCE_PYTHON} -DWORK=${CMAKE_CURRENT_BINARY_DIR}/repro_${t}
             -P ${CMAKE_CURRENT_LIST_FILE})
    set_tests_properties(repro_${t} PROPERTIES LABELS "python" TIMEOUT 240)
  endforeach()
  # Timed against its budget: alone, so a concurrent test does not eat its cores.
  set_tests_properties(repro_minimize_seed PROPERTIES RUN_SERIAL TRUE TIMEOUT 360)
  # Every small CPU corpus case: the short script and flce repro, 20-60 s each.
  set_tests_properties(repro_short_verdicts PROPERTIES TIMEOUT 1200)
  return()
endif()

function(expect rc_want)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL rc_want)
    message(FATAL_ERROR "${ARGN}: exit ${rc}, expected ${rc_want}\n${out}\n${err}")
  endif()
  set(OUT "${out}" PARENT_SCOPE)
  set(ERR "${err}" PARENT_SCOPE)
endfunction()
function(require_true value what)
  if(NOT value)
    message(FATAL_ERROR "${what}: ${value}")
  endif()
endfunction()
function(must_match regex text what)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "${what}: expected /${regex}/ in:\n${text}")
  endif()
endfunction()

set(C ${SRC}/corpus/cases)
set(D ${SRC}/tests/data/repro)
include(${CMAKE_CURRENT_LIST_DIR}/seed_outcome.cmake)  # SEED_SIG: this torch's tier; OTHER_SIG: the other
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

if(REPRO_TEST STREQUAL "verdicts")
  # Expectation from the corpus entry (this torch's range), and from --expect.
  expect(0 ${FLCE} repro ${C}/seed-raw-addmm-dtype-out.json --subject aten-dtype-out)
  must_match("REPRODUCED: ${SEED_SIG}" "${OUT}" "raw seed")
  expect(1 ${FLCE} repro ${C}/seed-raw-addmm-dtype-out.json --subject aten-dtype-out -q
         --expect ${OTHER_SIG})
  must_match("^NOT REPRODUCED: got ${SEED_SIG}, expected ${OTHER_SIG}\n$" "${OUT}" "wrong --expect")
  expect(0 ${FLCE} repro ${C}/seed-model-bf16-accum-fp32.json --subject model -q)
  must_match("^REPRODUCED: ${SEED_SIG}\n$" "${OUT}" "model seed")
  # A campaign-style finding directory: report.json beats the corpus; none at all means "any failure".
  file(COPY ${C}/seed-raw-addmm-dtype-out.json DESTINATION ${WORK}/finding)
  file(WRITE ${WORK}/finding/report.json "{\"subject\": \"aten-dtype-out\", \"outcome\": \"out-dtype-unsupported@compiled:inductor\"}")
  expect(1 ${FLCE} repro ${WORK}/finding/seed-raw-addmm-dtype-out.json --subject aten-dtype-out -q)
  must_match("expected out-dtype-unsupported@compiled:inductor" "${OUT}" "report.json expectation")
  must_match("from .*finding/report.json" "${ERR}" "report.json named as the source")
  file(COPY ${C}/seed-raw-addmm-dtype-out.json DESTINATION ${WORK}/bare)
  expect(0 ${FLCE} repro ${WORK}/bare/seed-raw-addmm-dtype-out.json --subject aten-dtype-out)
  must_match("no expectation .*any failure reproduces" "${ERR}" "no expectation")
  must_match("REPRODUCED: ${SEED_SIG}" "${OUT}" "no expectation")
  expect(2 ${FLCE} repro ${WORK}/no-such-case.json --subject model)
  expect(2 ${FLCE} repro ${C}/model-bf16-default.json --subject no-such-subject)
  must_match("unknown subject 'no-such-subject'" "${ERR}" "unknown subject")

elseif(REPRO_TEST STREQUAL "check_alone")
  # `flce repro --emit-python -o F --check` runs the script alone and compares verdicts. A planted
  # numeric bug's short script gives flce's verdict (exit 0); a plug-in whose bug shows only in
  # flce's subject hosts (FLCE_STACKS_FILE set) gives another alone (exit 1, SCRIPT DIFFERS), and
  # flce report says so, but only for the script the check ran.
  file(MAKE_DIRECTORY ${WORK}/same ${WORK}/differs)
  expect(0 ${FLCE} repro ${D}/smoothing-fp32-aot-eager.json --subject model-bug-smoothing --emit-python
         -o ${WORK}/same/repro.py --check)
  must_match("script alone: REPRODUCED: [^ ]+@eager \\(exit 0" "${OUT}" "check of a planted bug")
  must_match("CHECKED: the script alone gives flce's verdict" "${OUT}" "check of a planted bug")
  file(READ ${WORK}/same/repro.check.json j)
  string(JSON same GET "${j}" same_verdict)
  require_true("${same}" "same_verdict in ${WORK}/same/repro.check.json")

  file(COPY ${D}/worker-only.json DESTINATION ${WORK}/differs)
  file(RENAME ${WORK}/differs/worker-only.json ${WORK}/differs/case.json)
  set(PLUG --subject worker_only_bug:flce --subject-path ${D})
  expect(1 ${FLCE} repro ${WORK}/differs/case.json ${PLUG} --emit-python -o ${WORK}/differs/repro.py --check)
  must_match("flce repro: REPRODUCED: judge:[a-z_]+:out-of-bounds@eager" "${OUT}" "flce's verdict on the plug-in")
  must_match("script alone: NOT REPRODUCED: got pass" "${OUT}" "the plug-in's script alone")
  must_match("SCRIPT DIFFERS: .* reproduce with flce repro .*case.json --subject worker_only_bug:flce" "${OUT}" "differs")
  file(READ ${WORK}/differs/repro.check.json j)
  string(JSON same GET "${j}" same_verdict)
  string(JSON how GET "${j}" alone how)
  must_match("no FLCE_\\* variables" "${how}" "how the script ran")
  if(same)
    message(FATAL_ERROR "same_verdict true for a script that did not reproduce alone:\n${j}")
  endif()
  expect(0 ${FLCE} report ${WORK}/differs ${PLUG})
  must_match("\\*\\*This script did not reproduce alone\\*\\*" "${OUT}" "report of a differing script")
  file(APPEND ${WORK}/differs/repro.py "# edited after the check\n")
  expect(0 ${FLCE} report ${WORK}/differs ${PLUG})
  if(OUT MATCHES "reproduce alone|Checked alone")
    message(FATAL_ERROR "report quoted a check of another script text")
  endif()
  expect(2 ${FLCE} repro ${D}/worker-only.json ${PLUG} --emit-python --check)
  must_match("--check needs --emit-python and -o FILE" "${ERR}" "--check without -o")

  # A campaign does the same for each new finding's repro.py with --check-repros: the plug-in's
  # one corpus case, shrunk, then its script alone.
  file(MAKE_DIRECTORY ${WORK}/corpus)
  file(COPY ${D}/worker-only.json DESTINATION ${WORK}/corpus)
  execute_process(COMMAND ${FLCE} campaign --minutes 2 --max-cases 1 --out ${WORK}/camp --corpus ${WORK}/corpus ${PLUG}
                          --lanes eager=1 --seed 3 --minimize-s 60 --grace-s 120 --check-repros --quiet
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 1)
    message(FATAL_ERROR "campaign --check-repros: exit ${rc}, want 1 (a finding)\n${out}\n${err}")
  endif()
  file(READ ${WORK}/camp/state.json st)
  string(JSON alone GET "${st}" findings 0 repro_alone)
  string(JSON id GET "${st}" findings 0 id)
  must_match("^differs: NOT REPRODUCED: got pass" "${alone}" "the finding's repro_alone")
  file(READ ${WORK}/camp/findings/${id}/repro.check.json j)
  string(JSON same GET "${j}" same_verdict)
  if(same)
    message(FATAL_ERROR "the campaign's check says same_verdict:\n${j}")
  endif()
  file(READ ${WORK}/camp/report.md md)
  must_match("run alone it does not reproduce" "${md}" "report.md")

elseif(REPRO_TEST STREQUAL "emit_seed")
  # A small case gets the short literal script: no flce, no numpy, the raw op case not even flce_subjects.
  expect(0 ${FLCE} repro --emit-python ${C}/seed-raw-addmm-dtype-out.json --subject aten-dtype-out -o ${WORK}/raw.py)
  file(READ ${WORK}/raw.py text)
  must_match("^# Reproducer by flce of seed-raw-addmm-dtype-out.json" "${text}" "short raw seed script")
  expect(0 ${CMAKE_COMMAND} -E env --unset=PYTHONPATH ${PY} ${WORK}/raw.py)
  must_match("eager: op-not-implemented-on-device: .*compiled: ${SEED_ID}: .*\nREPRODUCED: ${SEED_SIG}\n$" "${OUT}"
             "short raw seed script")
  # --long-form: the generator-port script, which prints the environment and its expectation.
  expect(0 ${FLCE} repro --emit-python ${C}/seed-raw-addmm-dtype-out.json --subject aten-dtype-out --long-form
         -o ${WORK}/raw-long.py)
  expect(0 ${CMAKE_COMMAND} -E env --unset=PYTHONPATH ${PY} ${WORK}/raw-long.py)
  must_match("PyTorch: .*GPU: .*Expected: ${SEED_SIG}.*\nREPRODUCED: ${SEED_SIG}\n" "${OUT}" "long raw seed script")
  # flce's model subject: runs with flce_subjects on PYTHONPATH, skips (2) and says why without.
  expect(0 ${FLCE} repro --emit-python ${C}/seed-model-bf16-accum-fp32.json --subject model -o ${WORK}/model.py)
  expect(0 ${CMAKE_COMMAND} -E env PYTHONPATH=${SRC}/subjects ${PY} ${WORK}/model.py)
  must_match("eager grad_weight: err [^\n]* ratio [^\n]*\\[MATH.md 5\\] .*\nREPRODUCED: ${SEED_SIG}\n" "${OUT}"
             "model seed script")
  expect(2 ${CMAKE_COMMAND} -E env --unset=PYTHONPATH ${PY} ${WORK}/model.py)
  must_match("SKIP: cannot import subject 'model'.*PYTHONPATH" "${OUT}" "model script without flce_subjects")
  expect(0 ${FLCE} repro --emit-python ${C}/seed-model-bf16-accum-fp32.json --subject model --long-form
         -o ${WORK}/model-long.py)
  expect(0 ${CMAKE_COMMAND} -E env PYTHONPATH=${SRC}/subjects ${PY} ${WORK}/model-long.py)
  must_match("Subject version: flce-model-1.*REPRODUCED: ${SEED_SIG}\n" "${OUT}" "long model seed script")
  # Numeric findings, in both forms: the planted smoothing bug reproduces, the correct model on
  # the same case does not (the short script's own fp64 reference, the long one's carried golden).
  set(JUDGE "judge:grad_input:out-of-bounds@eager")
  foreach(form short long)
    set(flag "")
    if(form STREQUAL "long")
      set(flag "--long-form")
    endif()
    foreach(subject model-bug-smoothing model)
      expect(0 ${FLCE} repro --emit-python ${D}/smoothing-fp32-aot-eager.json --subject ${subject} --expect ${JUDGE}
             ${flag} -o ${WORK}/judge-${subject}-${form}.py)
    endforeach()
    expect(0 ${CMAKE_COMMAND} -E env PYTHONPATH=${SRC}/subjects ${PY} ${WORK}/judge-model-bug-smoothing-${form}.py)
    must_match("\nREPRODUCED: ${JUDGE}\n" "${OUT}" "planted bug script (${form})")
    if(form STREQUAL "short")
      must_match("eager grad_input: err [^\n]* ratio [0-9.e+-]+ \\[MATH.md 5\\]" "${OUT}" "short: the bound's formula")
    endif()
    expect(1 ${CMAKE_COMMAND} -E env PYTHONPATH=${SRC}/subjects ${PY} ${WORK}/judge-model-${form}.py)
    must_match("NOT REPRODUCED: got pass, expected [^\n]*${JUDGE}" "${OUT}" "correct model script (${form})")
  endforeach()

elseif(REPRO_TEST STREQUAL "inputs_bitwise")
  file(GLOB cases ${D}/inputs/*.json)
  # The seed, a reduction-none case (the short script's upstream gradient), and the input regimes.
  expect(0 ${PY} ${D}/check_inputs.py ${FLCE} ${WORK} ${C}/seed-model-bf16-accum-fp32.json
         ${C}/model-fp32-all-flags-aot-eager.json ${cases})
  message(STATUS "${OUT}")

elseif(REPRO_TEST STREQUAL "emit_hostile")
  expect(0 ${PY} ${D}/hostile_emit.py ${FLCE} ${WORK} ${C}/seed-raw-addmm-dtype-out.json)
  message(STATUS "${OUT}")

elseif(REPRO_TEST STREQUAL "short_verdicts")
  expect(0 ${PY} ${D}/short_verdicts.py ${FLCE} ${WORK} ${SRC}/corpus)
  message(STATUS "${OUT}")

elseif(REPRO_TEST STREQUAL "minimize_seed")
  # The seed made bigger and noisier must shrink to a smaller case with the same outcome within
  # the budget, and pin into a scratch copy of the corpus. An idle 2-core machine reaches the
  # fixed point in about 45 s (15 runs); the budget leaves room for one at half that speed with a
  # cold Inductor cache (CI run 23: 3 runs in the first 37 s, then out of a 60 s budget).
  file(COPY ${SRC}/corpus/expectations.json DESTINATION ${WORK}/corpus)
  file(MAKE_DIRECTORY ${WORK}/corpus/cases)
  string(TIMESTAMP t0 "%s")
  expect(0 ${FLCE} minimize ${D}/seed-model-noisy.json --subject model --budget-s 150 --out ${WORK}/min.json
         --pin min-seed --corpus ${WORK}/corpus)
  string(TIMESTAMP t1 "%s")
  math(EXPR wall "${t1} - ${t0}")
  message(STATUS "${OUT}")
  must_match("outcome kept: ${SEED_SIG}" "${OUT}" "minimize")
  must_match("minimized in [0-9.]+ s, [0-9]+ runs" "${OUT}" "minimize summary")
  string(REGEX MATCH "minimized in ([0-9.]+) s" _ "${OUT}")
  if(CMAKE_MATCH_1 GREATER 150 OR wall GREATER 170)
    message(FATAL_ERROR "minimize took ${CMAKE_MATCH_1} s (process ${wall} s); budget 150 s")
  endif()
  file(READ ${D}/seed-model-noisy.json before)
  file(READ ${WORK}/min.json after)
  foreach(dim BT H V)
    string(JSON b GET "${before}" ${dim})
    string(JSON a GET "${after}" ${dim})
    if(a GREATER b)
      message(FATAL_ERROR "${dim} grew: ${b} -> ${a}")
    endif()
  endforeach()
  string(JSON bias GET "${after}" bias)
  string(JSON reduction GET "${after}" reduction)
  string(JSON bt GET "${after}" BT)
  string(JSON v GET "${after}" V)
  if(bias OR NOT reduction STREQUAL "mean" OR bt GREATER 32 OR v GREATER 48)
    message(FATAL_ERROR "not smaller: bias=${bias} reduction=${reduction} BT=${bt} V=${v}\n${after}")
  endif()
  # A fresh process confirms the kept outcome; the pin wrote the case and one more entry line.
  expect(0 ${FLCE} repro ${WORK}/min.json --subject model -q --expect ${SEED_SIG})
  expect(0 ${FLCE} repro ${WORK}/corpus/cases/min-seed.json --subject model -q)
  must_match("^REPRODUCED: ${SEED_SIG}" "${OUT}" "pinned case through its corpus expectation")
  file(READ ${WORK}/corpus/expectations.json pinned)
  file(READ ${SRC}/corpus/expectations.json orig)
  string(JSON n LENGTH "${pinned}")
  string(JSON n0 LENGTH "${orig}")
  string(JSON last_case GET "${pinned}" ${n0} case)
  string(JSON last_outcome GET "${pinned}" ${n0} expect 0 outcome)
  math(EXPR n0 "${n0} + 1")
  if(NOT n EQUAL n0 OR NOT last_case STREQUAL "cases/min-seed.json" OR NOT last_outcome STREQUAL SEED_SIG)
    message(FATAL_ERROR "expectations.json: ${n} entries (want ${n0}), last: ${last_case} ${last_outcome}")
  endif()
  string(LENGTH "${orig}" len0)
  math(EXPR len0 "${len0} - 3")  # the original text up to its last entry, then one more line
  string(SUBSTRING "${orig}" 0 ${len0} head)
  string(FIND "${pinned}" "${head},\n  {\"case\": \"cases/min-seed.json\", \"subject\": \"model\"" at)
  if(NOT at EQUAL 0 OR NOT pinned MATCHES "\"outcome\": \"${SEED_SIG}\"}]}\n]\n$")
    message(FATAL_ERROR "expectations.json lost its one-entry-per-line layout:\n${pinned}")
  endif()
  expect(2 ${FLCE} minimize ${C}/model-fp32-all-flags-aot-eager.json --subject model --budget-s 30)
  must_match("nothing to keep" "${ERR}" "minimize of a passing case")
else()
  message(FATAL_ERROR "unknown REPRO_TEST '${REPRO_TEST}'")
endif()
