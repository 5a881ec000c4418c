# Capability-aware subjects (issue #13 A): a subject whose callable lacks a parameter a case
# uses -- tests/data/subjects/old_flce_api.py, shaped like Liger-Kernel 0.6.2, which has no
# use_token_scaling, return_token_accuracy or return_predicted_tokens -- says so for that case
# ("unsupported-by-subject:<param>", exit 3, never a finding) and runs every other one; a
# campaign of it never draws what it lacks; a gate from it to `model` shows new coverage; and a
# subject that can never be called (tests/data/subjects/broken_adapter.py) stops its campaign
# within seconds: "subject unusable", exit 2.
# Included from tests/CMakeLists.txt, this file registers the tests; run with -P -DPART=<name>
# it is the test itself.
if(NOT CMAKE_SCRIPT_MODE_FILE)
  foreach(part run campaign unusable gate)
    add_test(NAME capabilities_${part} COMMAND ${CMAKE_COMMAND} -DFLCE=$<TARGET_FILE:flce> -DSRC=${CMAKE_SOURCE_DIR}
             -DWORK=${CMAKE_CURRENT_BINARY_DIR}/capabilities_${part} -DPART=${part} -P ${CMAKE_CURRENT_LIST_FILE})
    set_tests_properties(capabilities_${part} PROPERTIES LABELS "python" TIMEOUT 400)
  endforeach()
  return()
endif()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(PLUG ${SRC}/tests/data/subjects)
set(CASES ${PLUG}/cases)
set(OLD old_flce_api:liger_fused_linear_cross_entropy)
set(LACKS "use_token_scaling, return_token_accuracy, return_predicted_tokens")

function(require cond_text)
  if(NOT (${ARGN}))
    message(FATAL_ERROR "${cond_text}")
  endif()
endfunction()

# Runs flce with ARGN; sets RC, OUT, ERR and SECONDS in the caller.
function(flce)
  string(TIMESTAMP t0 "%s")
  execute_process(COMMAND ${FLCE} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(TIMESTAMP t1 "%s")
  math(EXPR dt "${t1} - ${t0}")
  message(STATUS "flce ${ARGN}: exit ${rc} in ${dt} s")
  set(RC ${rc} PARENT_SCOPE)
  set(OUT "${out}" PARENT_SCOPE)
  set(ERR "${err}" PARENT_SCOPE)
  set(SECONDS ${dt} PARENT_SCOPE)
endfunction()

if(PART STREQUAL "run")
  # The case uses return_token_accuracy: the old API cannot take it. Exit 3, typed, nothing judged.
  flce(run ${CASES}/token-accuracy.json --subject ${OLD} --subject-path ${PLUG})
  require("token accuracy on the old API: exit ${RC}, want 3\n${OUT}\n${ERR}" RC EQUAL 3)
  require("outcome line not unsupported-by-subject:return_token_accuracy:\n${OUT}"
          OUT MATCHES "\noutcome: unsupported-by-subject:return_token_accuracy\n")
  require("the reason does not name the callable and the parameter:\n${OUT}"
          OUT MATCHES "eager +unsupported +old_flce_api[.]liger_fused_linear_cross_entropy has no parameter return_token_accuracy")
  flce(run ${CASES}/token-accuracy.json --subject ${OLD} --subject-path ${PLUG} --json --no-compiled)
  require("--json: exit ${RC}" RC EQUAL 3)
  string(JSON outcome GET "${OUT}" outcome)
  string(JSON status GET "${OUT}" oracles 0 status)
  string(JSON param GET "${OUT}" oracles 0 unsupported_params 0)
  require("--json: outcome ${outcome}, status ${status}, param ${param}"
          outcome STREQUAL "unsupported-by-subject:return_token_accuracy" AND status STREQUAL "unsupported"
          AND param STREQUAL "return_token_accuracy")
  # What it takes still runs, through its own signature: z-loss comes back as (loss, z_loss).
  flce(run ${CASES}/z-loss.json --subject ${OLD} --subject-path ${PLUG})
  require("z-loss on the old API: exit ${RC}, want 0 (pass)\n${OUT}\n${ERR}" RC EQUAL 0)
  require("z_loss not judged:\n${OUT}" OUT MATCHES "\n +ok +z_loss ")
  # The subject with every parameter runs the same case (return_token_accuracy judged).
  flce(run ${CASES}/token-accuracy.json --subject model --no-compiled)
  require("token accuracy on model: exit ${RC}\n${OUT}" RC EQUAL 0 AND OUT MATCHES "token_accuracy")
  # flce repro: an unsupported-by-subject outcome is "cannot run here" (3), not a failure.
  flce(repro ${CASES}/token-accuracy.json --subject ${OLD} --subject-path ${PLUG} --expect pass --quiet)
  require("repro: exit ${RC}, want 3\n${OUT}" RC EQUAL 3 AND OUT MATCHES "NOT REPRODUCED: got unsupported-by-subject")

elseif(PART STREQUAL "campaign")
  # A corpus case that uses return_token_accuracy is counted as unsupported by subject; sampled
  # cases (families of one: each its own draw of every option) never use what the old API lacks.
  file(MAKE_DIRECTORY ${WORK}/corpus)
  file(COPY ${CASES}/token-accuracy.json DESTINATION ${WORK}/corpus)
  set(D ${WORK}/run)
  flce(campaign --minutes 4 --max-cases 7 --out ${D} --corpus ${WORK}/corpus --subject ${OLD} --subject-path ${PLUG}
       --workers 1 --seed 5 --family 1 --minimize-s 0 --quiet --candidates 1)  # the plain stream: `case sample` below
  require("campaign: exit ${RC}, want 0 or 1\n${OUT}\n${ERR}" RC EQUAL 0 OR RC EQUAL 1)
  file(READ ${D}/report.json rj)
  string(JSON done GET "${rj}" cases_done)
  require("campaign ran ${done} cases, want 7" done EQUAL 7)
  string(JSON n GET "${rj}" unsupported_by_subject cases)
  string(JSON acc GET "${rj}" unsupported_by_subject by_param return_token_accuracy)
  require("report.json counts ${n} unsupported-by-subject cases (${acc} return_token_accuracy), want 1 (the corpus case)"
          n EQUAL 1 AND acc EQUAL 1)
  string(JSON nf LENGTH "${rj}" findings)
  if(nf GREATER 0)
    math(EXPR last "${nf} - 1")
    foreach(i RANGE ${last})
      string(JSON sig GET "${rj}" findings ${i} signature)
      require("an unsupported-by-subject outcome became a finding: ${sig}" NOT sig MATCHES "^unsupported")
    endforeach()
  endif()
  require("exit ${RC} with ${nf} findings" (nf EQUAL 0 AND RC EQUAL 0) OR (nf GREATER 0 AND RC EQUAL 1))
  string(JSON lacks GET "${rj}" capabilities lacks)
  string(JSON nl LENGTH "${lacks}")
  require("capabilities.lacks ${lacks}, want the 3 parameters 0.6.2 lacks" nl EQUAL 3)
  # Every sampled case ran on the old API (an unsupported-by-subject outcome would say it used
  # what it lacks), and the unrestricted stream would have used those parameters at these indices.
  file(STRINGS ${D}/cases.jsonl journal)
  set(would_use 0)
  foreach(line IN LISTS journal)
    string(JSON key GET "${line}" key)
    string(JSON outcome GET "${line}" outcome)
    if(NOT key MATCHES "^sample:5#([0-9]+)$")
      continue()
    endif()
    set(index ${CMAKE_MATCH_1})
    require("sampled case ${key} used a parameter the subject lacks: ${outcome}" NOT outcome MATCHES "^unsupported")
    execute_process(COMMAND ${FLCE} case sample --seed 5 --index ${index} --family 1 OUTPUT_VARIABLE full)
    execute_process(COMMAND ${FLCE} case sample --seed 5 --index ${index} --family 1
                            --without use_token_scaling,return_token_accuracy,return_predicted_tokens
                    OUTPUT_VARIABLE drawn)
    foreach(p use_token_scaling return_token_accuracy return_predicted_tokens)
      string(JSON v GET "${drawn}" ${p})
      require("flce case sample --without: ${key} has ${p} = ${v}" NOT v)
      string(JSON v GET "${full}" ${p})
      if(v)
        math(EXPR would_use "${would_use} + 1")
      endif()
    endforeach()
  endforeach()
  require("the unrestricted stream uses none of the lacking parameters at these indices: the test proves nothing"
          would_use GREATER 0)
  message(STATUS "sampled cases: the unrestricted stream would have used a lacking parameter ${would_use} times")
  file(READ ${D}/report.md md)
  require("report.md lacks the capability line:\n${md}" md MATCHES "supports: bias, ce_weight, [^|]*. not: ${LACKS}")  # '.': a ';' would split the argument
  require("report.md lacks the per-parameter count:\n${md}"
          md MATCHES "unsupported by subject \\| 1 cases \\(not findings\\), by parameter: return_token_accuracy 1")
  require("summary lacks the capability line:\n${OUT}" OUT MATCHES "subject supports: [^\n]*. not: ${LACKS}")
  file(READ ${D}/junit.xml jx)
  require("junit.xml lacks the skipped parameter bucket"
          jx MATCHES "name=\"unsupported-by-subject:return_token_accuracy\"><skipped")

elseif(PART STREQUAL "unusable")
  # Every call fails at the call with one TypeError: stop after the first cases, exit 2, with
  # what was written kept (state, reports, the cases run).
  set(D ${WORK}/run)
  flce(campaign --minutes 5 --out ${D} --subject broken_adapter:flce --subject-path ${PLUG} --workers 1 --quiet)
  require("broken adapter: exit ${RC}, want 2\n${OUT}\n${ERR}" RC EQUAL 2)
  require("no 'subject unusable' with the error:\n${ERR}"
          ERR MATCHES "subject unusable: builtins.TypeError: _kernel\\(\\) got an unexpected keyword argument 'return_token_accuracy'")
  require("the unusable campaign took ${SECONDS} s, want < 30" SECONDS LESS 30)
  foreach(f state.json report.md report.json junit.xml cases.jsonl)
    require("unusable campaign did not keep ${f}" EXISTS ${D}/${f})
  endforeach()
  file(READ ${D}/state.json st)
  string(JSON done GET "${st}" cases_done)
  string(JSON why GET "${st}" unusable)
  require("state: ${done} cases, unusable '${why}'" done EQUAL 3 AND why MATCHES "unexpected keyword argument")
  file(READ ${D}/report.md md)
  require("report.md does not say the subject is unusable:\n${md}" md MATCHES "subject unusable")
  # Three configurations, not three draws of one: the cases come from different families.
  file(STRINGS ${D}/cases.jsonl journal)
  set(keys "")
  foreach(line IN LISTS journal)
    string(JSON k GET "${line}" key)
    list(APPEND keys ${k})
  endforeach()
  string(JOIN "," keys ${keys})
  require("cases run: ${keys}; want the first of families 0, 1, 2 (of 8 cases)" keys STREQUAL "sample:1#0,sample:1#8,sample:1#16")
  # A subject failing inside its own code (a CUDA error each call, here) is never unusable: the
  # campaign runs its budget and reports the finding (tests/campaign.cmake, isolation, too).
  file(WRITE ${WORK}/plug/always_raises.py
       "def flce(*args, **kwargs):\n    raise TypeError('unsupported operand type(s) for +: int and NoneType')\n")
  flce(campaign --minutes 3 --max-cases 5 --out ${WORK}/inside --subject always_raises:flce --subject-path ${WORK}/plug
       --workers 1 --quiet --minimize-s 0)
  require("a subject failing in its own code: exit ${RC}, want 1 (a finding)\n${ERR}" RC EQUAL 1)
  file(READ ${WORK}/inside/state.json st)
  string(JSON done GET "${st}" cases_done)
  require("the finding campaign stopped after ${done} cases, want 5" done EQUAL 5)

elseif(PART STREQUAL "gate")
  # Base: the old API; candidate: model (every parameter). The token-accuracy case is new
  # coverage, the z-loss case the same pass on both: no regression.
  flce(gate --base subject=${OLD},path=${PLUG} --candidate subject=model --corpus ${PLUG}/gate.json --sample 0
       --out ${WORK}/out)
  require("gate old -> model: exit ${RC}, want 0\n${OUT}\n${ERR}" RC EQUAL 0)
  file(READ ${WORK}/out/gate.json gj)
  string(JSON reg GET "${gj}" summary regressions)
  string(JSON cov GET "${gj}" summary new_coverage)
  string(JSON acc GET "${gj}" summary unsupported_by_subject base return_token_accuracy)
  require("gate.json: ${reg} regressions, ${cov} new coverage, base lacks return_token_accuracy in ${acc}"
          reg EQUAL 0 AND cov EQUAL 1 AND acc EQUAL 1)
  string(JSON n LENGTH "${gj}" cases)
  math(EXPR last "${n} - 1")
  foreach(i RANGE ${last})
    string(JSON id GET "${gj}" cases ${i} id)
    string(JSON verdict GET "${gj}" cases ${i} verdict)
    set(verdict_${id} ${verdict})
  endforeach()
  require("token-accuracy case: ${verdict_cases/token-accuracy.json}" "${verdict_cases/token-accuracy.json}" STREQUAL "new-coverage")
  require("z-loss case: ${verdict_cases/z-loss.json}" "${verdict_cases/z-loss.json}" STREQUAL "same-pass")
  require("gate.md lacks the new coverage:\n${OUT}" OUT MATCHES "### New coverage" AND OUT MATCHES "no regressions")
  # The other way round the candidate lost a parameter: a regression.
  flce(gate --base subject=model --candidate subject=${OLD},path=${PLUG} --corpus ${PLUG}/gate.json --sample 0 --quiet)
  require("gate model -> old: exit ${RC}, want 1 (coverage lost)\n${OUT}" RC EQUAL 1 AND OUT MATCHES "lost")
else()
  message(FATAL_ERROR "unknown PART ${PART}")
endif()
