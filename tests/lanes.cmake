# Campaign lanes (fuzz/campaign/lanes.hpp): the eager lane never compiles and outruns the compiled one; a
# two-lane campaign resumes exactly; compiled workers share ladders and families retire at the
# first repeat; dynamic-shape cases hold at most their share of the compiled lane. Included from
# tests/CMakeLists.txt it registers the tests; run with -P -DPART=<name> it is the test itself.
if(NOT CMAKE_SCRIPT_MODE_FILE)
  foreach(part eager resume memo deferred spare dynamic stage_shrink lend)
    add_test(NAME campaign_lanes_${part} COMMAND ${CMAKE_COMMAND} -DFLCE=$<TARGET_FILE:flce> -DSRC=${CMAKE_SOURCE_DIR} -DPY=${FLCE_PYTHON}
             -DWORK=${CMAKE_CURRENT_BINARY_DIR}/campaign_lanes_${part} -DPART=${part} -P ${CMAKE_CURRENT_LIST_FILE})
    set_tests_properties(campaign_lanes_${part} PROPERTIES LABELS "python" TIMEOUT 600)
  endforeach()
  return()
endif()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

function(require cond_text)
  if(NOT (${ARGN}))
    if(BG_PID)
      execute_process(COMMAND kill -9 ${BG_PID} ERROR_QUIET)
    endif()
    message(FATAL_ERROR "${cond_text}")
  endif()
endfunction()

function(campaign)  # exit 0 or 1 (the model subject may show findings); anything else fails
  execute_process(COMMAND ${FLCE} campaign ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "flce campaign ${ARGN}: exit ${rc}\n${out}")
  require("exit ${rc}\n${out}\n${err}" rc EQUAL 0 OR rc EQUAL 1)
endfunction()

# EAGER_LADDERS: how many of the ladders in report.json `rj` have a key matching `pattern`;
# each must have been walked once and break first at `eager` (the planted bugs break there).
function(plugknown dir)  # a plug-in whose compiled graphs raise data-dependent-equal's text at every rung
  file(WRITE ${dir}/plugknown.py "import torch\nfrom flce_subjects import compiled_tap, model\n\n\n"
       "def _tap(x: torch.Tensor) -> torch.Tensor:\n"
       "    raise RuntimeError('DataDependentOutputException: aten.equal.default (planted)')\n\n\n"
       "VARIANT, flce, version = compiled_tap.tapped('plug-known', _tap, lambda x: torch.empty_like(x))\n"
       "supports = model.supports\n")
endfunction()

function(eager_ladders rj pattern what)
  set(count 0)
  string(JSON nl LENGTH "${rj}" ladders)
  if(nl GREATER 0)
    math(EXPR last "${nl} - 1")
    foreach(i RANGE ${last})
      string(JSON key GET "${rj}" ladders ${i} key)
      if(key MATCHES "${pattern}")
        math(EXPR count "${count} + 1")
        string(JSON w GET "${rj}" ladders ${i} walks)
        string(JSON stage GET "${rj}" ladders ${i} first_failing_stage)
        require("${what}: ladder ${key} walked ${w} times, stage ${stage}; want once, eager" w EQUAL 1 AND stage STREQUAL "eager")
      endif()
    endforeach()
  endif()
  set(EAGER_LADDERS ${count} PARENT_SCOPE)
endfunction()

# LANE_CASES, LANE_COMPILED_RUNS, LANE_COMPILE_MS, LANE_LADDER_MS, LANE_PER_MIN of `lane` in DIR/report.json
# (0 when the lane did not run).
function(lane dir name)
  file(READ ${dir}/report.json rj)
  string(JSON has ERROR_VARIABLE e GET "${rj}" lanes ${name})
  foreach(v CASES COMPILED_RUNS COMPILE_MS LADDER_MS PER_MIN)
    set(LANE_${v} 0 PARENT_SCOPE)
  endforeach()
  if(e)
    return()
  endif()
  string(JSON n GET "${rj}" lanes ${name} cases)
  string(JSON r GET "${rj}" lanes ${name} compiled_runs)
  string(JSON c GET "${rj}" lanes ${name} ms compile_ms)
  string(JSON l GET "${rj}" lanes ${name} ms ladder_ms)
  string(JSON m GET "${rj}" lanes ${name} cases_per_min)
  set(LANE_CASES ${n} PARENT_SCOPE)
  set(LANE_COMPILED_RUNS ${r} PARENT_SCOPE)
  set(LANE_COMPILE_MS ${c} PARENT_SCOPE)
  set(LANE_LADDER_MS ${l} PARENT_SCOPE)
  set(LANE_PER_MIN ${m} PARENT_SCOPE)
endfunction()

# KEYS: the journal's case keys, in order; fails on a key twice.
function(journal_keys dir)
  file(STRINGS ${dir}/cases.jsonl lines)
  set(keys "")
  foreach(line IN LISTS lines)
    string(JSON k GET "${line}" key)
    list(FIND keys "${k}" at)
    require("${k} ran twice (journal ${dir}/cases.jsonl)" at LESS 0)
    list(APPEND keys "${k}")
  endforeach()
  set(KEYS "${keys}" PARENT_SCOPE)
endfunction()

if(PART STREQUAL "eager")
  # Eager lane alone: golden + eager, plain cases, never a compile.
  set(D ${WORK}/eager)
  # Ends at 3,000 cases (a few seconds here): what it asserts holds for every case it ran.
  campaign(--minutes 0.75 --max-cases 3000 --out ${D} --subject model --lanes eager=2 --seed 5 --minimize-s 0 --quiet)
  lane(${D} eager)
  set(eager_alone ${LANE_CASES})
  require("eager lane ran ${LANE_CASES} cases" LANE_CASES GREATER 0)
  require("eager lane compiled ${LANE_COMPILED_RUNS} times (${LANE_COMPILE_MS} ms, ladder ${LANE_LADDER_MS} ms)"
          LANE_COMPILED_RUNS EQUAL 0 AND LANE_COMPILE_MS EQUAL 0 AND LANE_LADDER_MS EQUAL 0)
  lane(${D} compiled)
  require("an eager-only campaign ran ${LANE_CASES} compiled cases" LANE_CASES EQUAL 0)
  journal_keys(${D})
  foreach(k IN LISTS KEYS)
    # "~J": the coverage-guided pick (candidate J of that index, fuzz/campaign/coverage_guide.hpp)
    require("eager-lane key ${k}" k MATCHES "^sample:5/eager#[0-9]+(~[0-9]+)?$")
  endforeach()
  file(READ ${D}/report.md md)
  require("report.md lacks the lanes table" md MATCHES "## Lanes" AND md MATCHES "\\| eager \\| 2 \\|")
  # Both lanes side by side, one worker each: the eager lane runs many more cases.
  set(B ${WORK}/both)
  campaign(--minutes 0.5 --out ${B} --subject model --lanes eager=1,compiled=1 --seed 5 --minimize-s 0 --quiet)
  lane(${B} eager)
  set(e ${LANE_CASES})
  set(e_rate ${LANE_PER_MIN})
  lane(${B} compiled)
  message(STATUS "eager=2 alone: ${eager_alone} cases (at most 3,000 or 0.75 min); eager=1,compiled=1 (0.5 min): eager ${e} cases (${e_rate}/min), "
                 "compiled ${LANE_CASES} cases (${LANE_PER_MIN}/min, ${LANE_COMPILED_RUNS} compiled runs)")
  require("eager lane ${e} cases, compiled lane ${LANE_CASES}: want eager > compiled" e GREATER LANE_CASES)
  require("compiled lane ran no compile: ${LANE_COMPILED_RUNS}" LANE_CASES EQUAL 0 OR LANE_COMPILED_RUNS GREATER 0)
  # Bad --lanes: exit 2, named.
  execute_process(COMMAND ${FLCE} campaign --minutes 1 --out ${WORK}/bad --subject model --lanes eager=2,jit=1
                  RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
  require("unknown lane: exit ${rc}: ${err}" rc EQUAL 2 AND err MATCHES "unknown lane 'jit'")
  execute_process(COMMAND ${FLCE} campaign --minutes 1 --out ${WORK}/bad --subject model --lanes eager=2 --workers 3
                  RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
  require("--lanes/--workers mismatch: exit ${rc}: ${err}" rc EQUAL 2 AND err MATCHES "must agree")
elseif(PART STREQUAL "resume")
  # Two lanes; a run that ends at its case limit, one killed with -9, then a resume: every case
  # exactly once, the state's cursors and lane totals agree with the journal.
  set(D ${WORK}/run)
  # --candidates 1: every case a sample index of its lane (the checks count indices per lane).
  set(ARGS --minutes 5 --out ${D} --subject model --lanes eager=1,compiled=1 --seed 11 --family 4 --minimize-s 0 --quiet --candidates 1)
  campaign(${ARGS} --max-cases 6)
  string(REPLACE ";" " " args_sh "${ARGS}")  # a CMake list in a shell line: ';' would end the command
  execute_process(COMMAND sh -c "'${FLCE}' campaign ${args_sh} --max-cases 400 </dev/null >${WORK}/bg.log 2>&1 & echo $!"
                  OUTPUT_VARIABLE BG_PID OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(n 0)
  foreach(i RANGE 600)
    execute_process(COMMAND ${CMAKE_COMMAND} -E sleep 0.2)
    file(STRINGS ${D}/cases.jsonl lines)
    list(LENGTH lines n)
    if(n GREATER 12)
      break()
    endif()
  endforeach()
  execute_process(COMMAND kill -9 ${BG_PID})
  execute_process(COMMAND ${CMAKE_COMMAND} -E sleep 1)
  unset(BG_PID)
  require("the background run never got past 12 cases (${n})" n GREATER 12)
  file(READ ${D}/state.json st)
  string(JSON done GET "${st}" cases_done)
  math(EXPR want "${done} + 6")
  campaign(${ARGS} --max-cases ${want})
  journal_keys(${D})
  list(LENGTH KEYS nk)
  file(READ ${D}/state.json st)
  string(JSON done GET "${st}" cases_done)
  require("journal ${nk} cases, state ${done}, want ${want}" nk EQUAL want AND done EQUAL want)
  string(JSON ne GET "${st}" lanes eager cases)
  string(JSON nc GET "${st}" lanes compiled cases)
  math(EXPR sum "${ne} + ${nc}")
  require("lane totals ${ne} + ${nc} != ${done}" sum EQUAL done)
  set(eager_keys 0)
  foreach(k IN LISTS KEYS)
    if(k MATCHES "^sample:11/eager#([0-9]+)$")
      math(EXPR eager_keys "${eager_keys} + 1")
    else()
      require("compiled-lane key ${k}" k MATCHES "^sample:11#[0-9]+$")
    endif()
  endforeach()
  require("journal has ${eager_keys} eager cases, state ${ne}" eager_keys EQUAL ne)
  # The eager stream is dense: indices 0..ne-1, none skipped, none above.
  string(JSON next GET "${st}" eager_seeds 11 next)
  string(JSON above LENGTH "${st}" eager_seeds 11 done_above)
  require("eager cursor next ${next} (+${above} above), want ${ne}" next EQUAL ne AND above EQUAL 0)
  foreach(i RANGE 1 ${ne})
    math(EXPR j "${i} - 1")
    list(FIND KEYS "sample:11/eager#${j}" at)
    require("eager case ${j} missing" at GREATER_EQUAL 0)
  endforeach()
  string(JSON runs GET "${st}" runs)
  require("runs ${runs}, want 3" runs EQUAL 3)
elseif(PART STREQUAL "memo")
  # A subject that always fails at trace time (same-dtype accumulation through addmm.dtype_out):
  # two compiled workers walk each (graph, signature) ladder once in the whole campaign, and a
  # family retires at its first repeat of a known failure. The walks are the lane's here
  # (--walk-ladders-in-lane), so later cases reuse them at once; part `deferred` checks the
  # same sharing off the lane.
  set(D ${WORK}/run)
  campaign(--minutes 6 --max-cases 10 --out ${D} --subject model-dtype-out --lanes compiled=2 --seed 3 --family 4
           --minimize-s 0 --quiet --candidates 1 --walk-ladders-in-lane)  # the plain families, whose failures repeat
  file(READ ${D}/report.json rj)
  string(JSON nl LENGTH "${rj}" ladders)
  require("no shared ladder recorded" nl GREATER 0)
  set(hits 0)
  math(EXPR last "${nl} - 1")
  foreach(i RANGE ${last})
    string(JSON key GET "${rj}" ladders ${i} key)
    string(JSON w GET "${rj}" ladders ${i} walks)
    string(JSON h GET "${rj}" ladders ${i} hits)
    require("ladder ${key} walked ${w} times, want once" w EQUAL 1)
    math(EXPR hits "${hits} + ${h}")
  endforeach()
  string(JSON mh GET "${rj}" lanes compiled memo_hits)
  string(JSON saved GET "${rj}" lanes compiled traces_saved)
  message(STATUS "${nl} shared ladders, ${mh} memo hits, ${saved} traces saved")
  require("memo hits ${mh} (per ladder ${hits}): want > 0 and equal" mh GREATER 0 AND mh EQUAL hits)
  require("traces saved ${saved}" saved GREATER 0)
  string(JSON fr GET "${rj}" families_retired)
  require("no family retired" fr GREATER 0)
  # Journal order is commit order: a family's case that repeats a known (graph, failure) is its last.
  file(STRINGS ${D}/cases.jsonl lines)
  set(seen "")
  set(retired "")
  foreach(line IN LISTS lines)
    string(JSON k GET "${line}" key)
    string(JSON g GET "${line}" graph)
    string(JSON o GET "${line}" outcome)
    string(REGEX REPLACE "^sample:3#" "" idx "${k}")
    math(EXPR fam "${idx} / 4")
    list(FIND retired ${fam} r)
    require("family ${fam} ran ${k} after its first repeat of a known failure" r LESS 0)
    if(o MATCHES "@compiled:")
      string(REGEX REPLACE "@.*" "" sig "${o}")
      list(FIND seen "${g}|${sig}" s)
      if(s GREATER_EQUAL 0)
        list(APPEND retired ${fam})
      else()
        list(APPEND seen "${g}|${sig}")
      endif()
    endif()
  endforeach()
  require("no case repeated a known failure" retired)
elseif(PART STREQUAL "lend")
  # Issue #21: while exploring, an analysis borrows an eager slot, not a compiled one, even for a
  # compiled finding (model-bug-trace-error: every compile raises, eager passes). No analysis
  # worker of its own, so the finding's analysis must borrow. On the H200 lending one of four
  # compiled slots to analyses held main's compiled lane at 29 graph configurations a minute.
  # --lend-from finder restores the finder's lane (the A/B of BENCHMARKS.md): the compiled slot.
  # Each stops once a finding's analysis ended, which it did on a lent slot.
  foreach(mode eager finder)
    set(D ${WORK}/lend-${mode})
    campaign(--minutes 0.75 --max-cases 100000 --out ${D} --subject model-bug-trace-error --lanes eager=1,compiled=1
             --analysis-workers 0 --lend-from ${mode} --stop-after-findings 1 --seed 5 --family 4 --candidates 1
             --minimize-s 0 --grace-s 120 --quiet)
    file(READ ${D}/report.json rj)
    string(JSON analyses GET "${rj}" analyses)
    string(JSON from GET "${rj}" lend_from)
    string(JSON le ERROR_VARIABLE e1 GET "${rj}" analyses lent_eager)
    string(JSON lc ERROR_VARIABLE e2 GET "${rj}" analyses lent_compiled)
    message(STATUS "${mode}: analyses ${analyses}, lend_from ${from}")
    require("${mode}: report.json lend_from is ${from}" from STREQUAL mode)
    file(READ ${D}/report.md md)
    if(mode STREQUAL "eager")
      require("no analysis borrowed the eager slot: ${analyses}" NOT e1 AND le GREATER 0)
      require("an analysis borrowed the compiled slot while exploring: ${analyses}" e2 OR lc EQUAL 0)
      require("report.md lacks the lent slots' lanes"
              md MATCHES "on a lane's lent slot \\([1-9][0-9]* eager, 0 compiled. lent from the eager lane")
    else()
      require("finder: no analysis borrowed the compiled slot: ${analyses}" NOT e2 AND lc GREATER 0)
      require("finder: an analysis borrowed the eager slot: ${analyses}" e1 OR le EQUAL 0)
      require("report.md lacks the lent slots' lanes"
              md MATCHES "on a lane's lent slot \\(0 eager, [1-9][0-9]* compiled. lent from the finder's lane")
    endif()
  endforeach()
elseif(PART STREQUAL "deferred")
  # Issue #21 item 2: a compile failure of no known signature (model-bug-trace-error: every trace
  # raises) is recorded at once, with the compiled run's own rung, and its ladder is walked
  # afterwards on the analysis worker: the lane's one worker never walks (its ladder time is 0),
  # yet the walk is shared (walked once per graph, first failing stage `eager`, the first rung).
  # With --walk-ladders-in-lane the lane walks it itself.
  foreach(mode deferred inlane)
    set(D ${WORK}/${mode})
    set(extra "")
    if(mode STREQUAL "inlane")
      set(extra --walk-ladders-in-lane)
    endif()
    campaign(--minutes 5 --max-cases 4 --out ${D} --subject model-bug-trace-error --lanes compiled=1
             --analysis-workers 1 --seed 5 --family 4 --candidates 1 --minimize-s 0 --grace-s 240 --quiet ${extra})
    lane(${D} compiled)
    file(READ ${D}/report.json rj)
    string(JSON queued GET "${rj}" ladder_walks_deferred queued)
    string(JSON walked GET "${rj}" ladder_walks_deferred walked)
    string(JSON nl LENGTH "${rj}" ladders)
    require("${mode}: no ladder recorded" nl GREATER 0)
    eager_ladders("${rj}" "\\|bucket-" ${mode})
    set(buckets ${EAGER_LADDERS})
    require("${mode}: no ladder of the planted (unknown) failure" buckets GREATER 0)
    message(STATUS "${mode}: ${LANE_CASES} compiled cases, lane ladder ${LANE_LADDER_MS} ms, walks queued ${queued}, walked ${walked}")
    if(mode STREQUAL "deferred")
      require("deferred: the lane walked (${LANE_LADDER_MS} ms of ladder)" LANE_LADDER_MS EQUAL 0)
      # The signature's first walk took the one analysis worker before the finding's analysis
      # did (own workers are numbered in start order): on the H200 analyses kept ten campaigns'
      # analysis workers busy and 1 of 243 queued walks ran.
      require("deferred: the first own worker was not the walk" EXISTS ${D}/workers/walk-0.log)
      require("deferred: ${walked} of ${queued} walks done, ${buckets} ladders" queued GREATER 0 AND walked EQUAL buckets)
    else()
      require("in lane: nothing deferred (${queued})" queued EQUAL 0)
      require("in lane: the lane did not walk" LANE_LADDER_MS GREATER 0)
    endif()
  endforeach()
  # A known signature's one walk per campaign is off the lane too, and the cases before it ends
  # take the stage the known list gives (findings/known.hpp, known_stage), so the bug keeps one
  # name. The plug-in's compiled graphs raise data-dependent-equal's text at every rung (first
  # failing stage eager, not the lane's inductor). On the H200 a walk in the lane ran at its
  # eager rung and held the compiled lane of seven of ten campaigns for its whole --case-timeout,
  # and deferred without the known stage the seed's tier 1 showed as a new `:inductor` finding.
  set(P ${WORK}/plugknown)
  plugknown(${P})
  set(common --minutes 5 --max-cases 4 --subject plugknown:flce --subject-path ${P} --lanes compiled=1
             --analysis-workers 1 --seed 5 --family 4 --candidates 1 --minimize-s 0 --grace-s 240 --quiet)
  campaign(${common} --out ${WORK}/known-a --walk-ladders-in-lane)
  set(D ${WORK}/known-b)
  campaign(${common} --out ${D} --known ${WORK}/known-a)
  lane(${D} compiled)
  file(READ ${D}/report.json rj)
  string(JSON walked GET "${rj}" ladder_walks_deferred walked)
  string(JSON any_walks ERROR_VARIABLE e GET "${rj}" ladders 0 walks)
  string(JSON any_key ERROR_VARIABLE e GET "${rj}" ladders 0 key)
  string(JSON nl LENGTH "${rj}" ladders)
  string(JSON nknown GET "${rj}" known_findings)
  string(JSON nnew GET "${rj}" new_findings)
  file(READ ${D}/cases.jsonl journal)
  message(STATUS "known: ${LANE_CASES} compiled cases, lane ladder ${LANE_LADDER_MS} ms, ladders ${nl} (${any_key} walked ${any_walks}), deferred walked ${walked}, findings ${nknown} known, ${nnew} new\n${journal}")
  require("known: the lane walked (${LANE_LADDER_MS} ms of ladder)" LANE_LADDER_MS EQUAL 0)
  require("known: want one ladder, *|data-dependent-equal, walked once off the lane; got ${nl}: ${any_key} x${any_walks}, ${walked} walked"
          nl EQUAL 1 AND any_key STREQUAL "*|data-dependent-equal" AND any_walks EQUAL 1 AND walked EQUAL 1)
  require("known: a case named the bug by the lane's own rung, not the known stage" NOT journal MATCHES "@compiled:inductor")
  require("known: want 1 known finding and no new one, got ${nknown} and ${nnew}" nknown EQUAL 1 AND nnew EQUAL 0)
  # Wrong values walk off the lane too (model-bug-drop-chunk: every gradient of BT > 4 is
  # wrong at every rung): on the H200 a value failure's in-lane walk hung at aot_eager and held
  # a shared box's compiled lane for its whole --case-timeout.
  set(D ${WORK}/values)
  campaign(--minutes 5 --max-cases 4 --out ${D} --subject model-bug-drop-chunk --lanes compiled=1
           --analysis-workers 1 --seed 5 --family 4 --candidates 1 --minimize-s 0 --grace-s 240 --quiet)
  lane(${D} compiled)
  file(READ ${D}/report.json rj)
  string(JSON walked GET "${rj}" ladder_walks_deferred walked)
  eager_ladders("${rj}" "\\|judge:" values)
  set(judged ${EAGER_LADDERS})
  message(STATUS "values: ${LANE_CASES} compiled cases, lane ladder ${LANE_LADDER_MS} ms, ${judged} value ladders, walked ${walked}")
  require("values: the lane walked (${LANE_LADDER_MS} ms of ladder)" LANE_LADDER_MS EQUAL 0)
  require("values: no value ladder walked off the lane" judged GREATER 0 AND walked EQUAL judged)
elseif(PART STREQUAL "stage_shrink")
  # The walk of a signature names later sightings by its first failing stage (eager here), while
  # the finding keeps its first sighting's, the lane's rung (inductor). The shrink must keep such a
  # finding: on the H200 (main-s197) it shrank three fullgraph findings from 206 to 4 input
  # elements and then called each "lost", comparing the two stages as strings.
  set(P ${WORK}/plugknown)
  plugknown(${P})
  set(D ${WORK}/c)
  campaign(--minutes 5 --max-cases 4 --subject plugknown:flce --subject-path ${P} --lanes compiled=1
           --analysis-workers 1 --seed 5 --family 4 --candidates 1 --minimize-s 60 --grace-s 400 --quiet --out ${D})
  file(READ ${D}/state.json sj)
  string(JSON nf LENGTH "${sj}" findings)
  set(checked 0)
  math(EXPR last "${nf} - 1")
  foreach(i RANGE ${last})
    string(JSON sig GET "${sj}" findings ${i} signature)
    string(JSON shrink GET "${sj}" findings ${i} shrink)
    message(STATUS "finding ${sig}: shrink '${shrink}'")
    if(sig MATCHES "^data-dependent-equal@compiled:")
      require("the shrink of ${sig} lost it: '${shrink}'" NOT shrink MATCHES "^lost")
      require("the shrink of ${sig} did not end: '${shrink}'" shrink MATCHES "^(minimized|smallest|budget)")
      math(EXPR checked "${checked} + 1")
    endif()
  endforeach()
  require("no data-dependent-equal finding (${nf} findings)" checked GREATER 0)
elseif(PART STREQUAL "dynamic")
  # Issue #21: dynamic=True cases (25-45 s compiles of Liger on the H200, and a dynamic finding's
  # neighbours are dynamic too) hold at most a quarter of the compiled slots, at least one: with
  # two compiled workers, never two dynamic cases in flight. aten-dtype-out draws hundreds a
  # minute, about one in seven dynamic. Journal rows end in order of their end; each row's span
  # [end - its oracles' ms, end] lies within its real one, so overlapping spans are real overlaps.
  set(D ${WORK}/run)
  # A count, not a time: CI run 23's machine, with the sanitizer build beside it, ran 454 cases
  # (32 dynamic) in 30 s where an idle one runs 2,273 (328 dynamic).
  campaign(--minutes 3 --max-cases 1000 --out ${D} --subject aten-dtype-out --lanes compiled=2 --seed 5 --quiet
           --minimize-s 0 --grace-s 5)
  execute_process(COMMAND ${PY} -c [=[
import json, sys
rows = [json.loads(x) for x in open(sys.argv[1])]
spans = [(r["campaign_s"] - sum(r.get("ms", {}).values()) / 1e3, r["campaign_s"]) for r in rows if r.get("dynamic")]
overlaps = sum(b[0] < a[1] for a, b in zip(spans, spans[1:]))
print(len(rows), len(spans), overlaps)
]=] ${D}/cases.jsonl OUTPUT_VARIABLE counts OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE prc)
  require("journal check failed (${prc})" prc EQUAL 0)
  separate_arguments(counts)
  list(GET counts 0 cases)
  list(GET counts 1 dynamic)
  list(GET counts 2 overlaps)
  message(STATUS "${cases} cases, ${dynamic} dynamic, ${overlaps} overlapping pairs")
  require("only ${dynamic} dynamic cases of ${cases}: the check would say nothing" dynamic GREATER 40)
  require("${overlaps} pairs of dynamic cases were in flight together on two compiled slots" overlaps EQUAL 0)

elseif(PART STREQUAL "spare")
  # Issue #21: a dead compiled worker is replaced by the ready spare, not by a cold start. The
  # segfault subject kills its worker on every case; with --spare-workers 1 the slot takes the
  # spare (started once the first worker was ready) and the next spare starts behind it.
  set(D ${WORK}/run)
  execute_process(COMMAND ${FLCE} campaign --minutes 3 --max-cases 4 --out ${D} --subject segfault --lanes compiled=1
                          --spare-workers 1 --seed 2 --minimize-s 0 --grace-s 0 --quiet
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "exit ${rc}\n${out}")
  require("exit ${rc}, want 1 (crash findings)\n${err}" rc EQUAL 1)
  file(READ ${D}/report.json rj)
  string(JSON swaps GET "${rj}" spare_swaps)
  string(JSON done GET "${rj}" cases_this_run)
  string(JSON restarts GET "${rj}" worker_restarts)
  message(STATUS "${done} cases, ${restarts} dead workers, ${swaps} replaced by the spare")
  require("${done} cases, want 4" done EQUAL 4)
  require("no dead worker was replaced by the spare (${swaps} of ${restarts})" swaps GREATER 0)
  require("more swaps (${swaps}) than dead workers (${restarts})" NOT swaps GREATER restarts)
  file(GLOB spare_logs ${D}/workers/spare-*.log)
  list(LENGTH spare_logs nlogs)
  math(EXPR most "${swaps} + 1")
  require("spares started ${nlogs}, want ${most} at most" NOT nlogs GREATER most)
else()
  message(FATAL_ERROR "unknown PART ${PART}")
endif()
