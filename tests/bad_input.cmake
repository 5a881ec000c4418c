# Bad input (issue #15): every row of docs/bad-input.md's table, run. Each must exit 2 with a
# message naming the thing (a file path, a field, a flag and its value); campaign rows must also
# leave an existing state.json and finding directory byte for byte as they were.
#   -DPART=fast     rows decided before any subject host starts (no torch): ctest bad_input, label cpu
#   -DPART=subject  rows that need the subject host's answer (torch): ctest bad_input_subject, label python
# Both parts check that docs/bad-input.md's table has no row this file does not define (and the reverse).
cmake_policy(SET CMP0057 NEW)  # if(IN_LIST)
set(W ${CMAKE_CURRENT_BINARY_DIR}/bad_input_${PART})
file(REMOVE_RECURSE ${W})
file(MAKE_DIRECTORY ${W})
set(IDS "")

# row(ID PART NEEDLE COMMAND...): exit 2 and NEEDLE (a plain substring) in stderr.
function(row id part needle)
  if(NOT id IN_LIST IDS)
    set(IDS ${IDS} ${id} PARENT_SCOPE)
  endif()
  if(NOT part STREQUAL PART)
    return()
  endif()
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err WORKING_DIRECTORY ${W}
                  TIMEOUT 300)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "${id}: exit ${rc}, expected 2\n${ARGN}\nstdout: ${out}\nstderr: ${err}")
  endif()
  string(FIND "${err}" "${needle}" at)
  if(at LESS 0)
    message(FATAL_ERROR "${id}: stderr lacks '${needle}'\n${ARGN}\nstderr: ${err}")
  endif()
  message(STATUS "${id}: exit 2: ${err}")
endfunction()

# --- inputs --------------------------------------------------------------------------------
execute_process(COMMAND ${FLCE} case example OUTPUT_FILE ${W}/good.json RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "flce case example: exit ${rc}")
endif()
file(WRITE ${W}/notjson.json "{\"BT\": 8,,}")
file(WRITE ${W}/type.json "{\"BT\": \"eight\"}")
file(WRITE ${W}/range.json "{\"label_smoothing\": 1.5}")
file(WRITE ${W}/unknown.json "{\"label_smothing\": 0.1}")
file(WRITE ${W}/newer.json "{\"schema_version\": 99}")
file(WRITE ${W}/broken-expect.json "[{\"case\": \"good.json\", \"subject\": \"model\", \"expect\": [}")
file(WRITE ${W}/entry-expect.json "[{\"case\": \"good.json\", \"expect\": []}]")
file(WRITE ${W}/device-expect.json "[{\"case\": \"good.json\", \"subject\": \"model\", \"expect\": [{\"outcome\": \"pass\", \"device\": \"tpu\"}]}]")
file(WRITE ${W}/case-expect.json "[{\"case\": \"range.json\", \"subject\": \"model\", \"expect\": []}]")
file(WRITE ${W}/a-file "not a directory")
file(MAKE_DIRECTORY ${W}/corpus-bad)
file(COPY_FILE ${W}/range.json ${W}/corpus-bad/range.json)
set(NOPE ${W}/no-such-dir)

# A git repository of a plug-in (two commits), for --subject-git and bisect.
set(REPO ${W}/repo)
file(MAKE_DIRECTORY ${REPO}/src/plug)
file(WRITE ${REPO}/src/plug/__init__.py "from flce_subjects.model import flce  # noqa: F401\n")
set(GIT git -C ${REPO} -c user.name=flce -c user.email=flce@example.invalid -c commit.gpgsign=false)
foreach(step init "add ." "commit -qm one" "commit -q --allow-empty -m two")
  separate_arguments(args UNIX_COMMAND "${step}")
  execute_process(COMMAND ${GIT} ${args} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "git ${step}: ${err}")
  endif()
endforeach()

# A campaign directory as a run of subject model, seed 5, family 8 (the default), on the CPU left it: a state
# and one finding. Refused resumes must leave both byte for byte.
set(CAMP ${W}/campaign)
set(FID judge-loss-out-of-bounds-eager-0badc0de)
file(MAKE_DIRECTORY ${CAMP}/findings/${FID})
file(COPY_FILE ${W}/good.json ${CAMP}/findings/${FID}/case.json)
file(WRITE ${CAMP}/findings/${FID}/finding.json "{\"signature\": \"judge:loss:out-of-bounds@eager\", \"first_case\": \"sample:5#0\"}\n")
file(WRITE ${CAMP}/state.json [=[{"schema": "flce-campaign-state/1", "subject": "model", "subject_path": "",
 "family_size": 8, "device": "cpu", "runs": 1, "cases_done": 1, "elapsed_s": 3.5, "first_finding_s": 3.0,
 "seeds": {"5": {"next": 1, "done_above": []}}, "corpus_done": [], "outcomes": {"judge:loss:out-of-bounds@eager": 1},
 "findings": [{"id": "judge-loss-out-of-bounds-eager-0badc0de", "signature": "judge:loss:out-of-bounds@eager",
   "count": 1, "first_case": "sample:5#0", "first_seen": "2026-12-01T00:00:00Z", "first_seen_s": 3.0,
   "last_seen": "2026-12-01T00:00:00Z"}]}
]=])
set(CAMP_FILES state.json findings/${FID}/case.json findings/${FID}/finding.json)
function(snapshot var)
  set(h "")
  foreach(f ${CAMP_FILES})
    file(SHA256 ${CAMP}/${f} x)
    list(APPEND h "${f}=${x}")
  endforeach()
  file(GLOB dirs RELATIVE ${CAMP}/findings ${CAMP}/findings/*)
  set(${var} "${h};findings:${dirs}" PARENT_SCOPE)
endfunction()
snapshot(CAMP_BEFORE)
# campaign_row(ID NEEDLE ARGS...): a row on an existing campaign directory, which must stay as it was.
function(campaign_row id needle)
  row(${id} fast "${needle}" ${ARGN})
  set(IDS ${IDS} PARENT_SCOPE)
  if(PART STREQUAL "fast")
    snapshot(after)
    if(NOT after STREQUAL CAMP_BEFORE)
      message(FATAL_ERROR "${id}: the campaign directory changed:\nbefore ${CAMP_BEFORE}\nafter  ${after}")
    endif()
  endif()
endfunction()
set(C ${FLCE} campaign --minutes 1 --out ${CAMP} --subject model --seed 5 --workers 1 --quiet)

# --- case files ------------------------------------------------------------------------------
row(case-missing fast "${W}/nope.json: cannot read the case file" ${FLCE} run ${W}/nope.json)
row(case-json fast "notjson.json: case: is not valid JSON" ${FLCE} run ${W}/notjson.json --subject model)
row(case-type fast "type.json: BT: must be an integer, got \"eight\"" ${FLCE} reference ${W}/type.json)
row(case-range fast "range.json: label_smoothing: must be in [0, 1], got 1.5" ${FLCE} repro ${W}/range.json --subject model)
row(case-range fast "range.json: label_smoothing" ${FLCE} matrix --python ${FLCE_PY} --cases ${W}/range.json)
# ~580 GiB of fp64 working set: more than any box flce runs on, with no ulimit (ASan cannot start under one).
file(WRITE ${W}/huge.json "{\"BT\": 2097152, \"H\": 8192, \"V\": 8192}")
row(case-memory fast "BT: needs about" ${FLCE} reference ${W}/huge.json)
row(case-memory fast "lower BT (or H)" ${FLCE} run ${W}/huge.json --subject model)
row(case-unknown-field fast "unknown.json: label_smothing: unknown field" ${FLCE} minimize ${W}/unknown.json)
row(case-newer-schema fast "newer.json: schema_version: must be 1, got 99" ${FLCE} run ${W}/newer.json)
# --- expectations files (replay, gate --corpus, matrix --corpus) -------------------------------
row(expect-json fast "broken-expect.json: is not valid JSON" ${FLCE} replay ${W}/broken-expect.json)
row(expect-json fast "line 1, column 55" ${FLCE} replay ${W}/broken-expect.json)
row(expect-json fast "--corpus ${W}/broken-expect.json: is not valid JSON" ${FLCE} gate --base subject=model
    --candidate subject=model --corpus ${W}/broken-expect.json)
row(expect-missing fast "${W}/nope.json: cannot read the expectations file" ${FLCE} replay ${W}/nope.json)
row(expect-field fast "entry-expect.json: entry 0: subject: must be a non-empty string" ${FLCE} replay ${W}/entry-expect.json)
row(expect-field fast "entry 0: expect[0].device: must be one of any, cpu, cuda" ${FLCE} replay ${W}/device-expect.json)
row(expect-field fast "entry-expect.json: entry 0: subject" ${FLCE} matrix --python ${FLCE_PY} --corpus ${W}/entry-expect.json)
row(expect-case fast "range.json: label_smoothing: must be in [0, 1]" ${FLCE} replay ${W}/case-expect.json)
# --- gate SPECs ------------------------------------------------------------------------------
row(gate-spec fast "bad SPEC: bogus: unknown key" ${FLCE} gate --base subject=model,bogus=1 --candidate subject=model)
row(gate-spec-path fast "path=${NOPE}: no such directory" ${FLCE} gate --base subject=model --candidate subject=model,path=${NOPE})
row(gate-spec-git fast "no-such-ref" ${FLCE} gate --base subject=model --candidate subject=model,git=${REPO}@no-such-ref)
# --- subject sources: --subject-path, --subject-git ------------------------------------------
foreach(verb run repro minimize)
  row(subject-path fast "--subject-path ${NOPE}: no such directory" ${FLCE} ${verb} ${W}/good.json --subject-path ${NOPE})
endforeach()
row(subject-path fast "--subject-path ${NOPE}: no such directory" ${FLCE} campaign --minutes 1 --out ${W}/c1
    --subject model --subject-path ${NOPE})
row(subject-path fast "--subject-path ${NOPE}: no such directory" ${FLCE} matrix --python ${FLCE_PY}
    --cases ${W}/good.json --subject-path ${NOPE})
row(subject-path fast "--subject-path ${W}/a-file: not a directory" ${FLCE} run ${W}/good.json --subject-path ${W}/a-file)
row(subject-path fast "--subject-path ${NOPE}: no such directory" ${FLCE} replay --subject-path ${NOPE})
row(subject-path-bisect fast "--subject-path no/such: no such directory in --good" ${FLCE} bisect ${W}/good.json
    --git ${REPO} --good HEAD~1 --bad HEAD --subject plug:flce --subject-path no/such)
row(subject-git-repo fast "--subject-git ${NOPE}@main" ${FLCE} run ${W}/good.json --subject-git ${NOPE}@main)
row(subject-git-ref fast "no-such-ref" ${FLCE} campaign --minutes 1 --out ${W}/c2 --subject model --subject-git ${REPO}@no-such-ref)
row(subject-git-ref fast "no-such-ref" ${FLCE} replay --subject-git ${REPO}@no-such-ref)
row(subject-git-inner fast "path=no/such: no such directory in commit" ${FLCE} run ${W}/good.json
    --subject-git ${REPO}@HEAD --subject-path no/such)
row(bisect-repo fast "${NOPE}" ${FLCE} bisect ${W}/good.json --git ${NOPE} --good a --bad b --subject plug:flce)
row(bisect-ancestor fast "is not an ancestor of --bad" ${FLCE} bisect ${W}/good.json --git ${REPO} --good HEAD --bad HEAD~1
    --subject plug:flce)
# --- flce report --bisect: the DIR of `flce bisect --out DIR` -----------------------------------
file(MAKE_DIRECTORY ${W}/finding ${W}/bisect-empty ${W}/bisect-garbled)
file(COPY_FILE ${W}/good.json ${W}/finding/case.json)
file(WRITE ${W}/finding/report.json "{\"subject\": \"model\", \"outcome\": \"judge:loss:out-of-bounds@eager\"}")
file(WRITE ${W}/bisect-garbled/bisect.json "{\"status\": \"found\",")
row(report-bisect-dir fast "--bisect ${W}/a-file: not a directory" ${FLCE} report ${W}/finding --bisect ${W}/a-file)
row(report-bisect-dir fast "--bisect ${NOPE}: no such directory" ${FLCE} report ${W}/finding --bisect ${NOPE})
row(report-bisect-json fast "--bisect ${W}/bisect-empty: no bisect.json in it" ${FLCE} report ${W}/finding
    --bisect ${W}/bisect-empty)
row(report-bisect-json fast "bisect.json is not a flce bisect result" ${FLCE} report ${W}/finding --bisect ${W}/bisect-garbled)
# --- output paths and names ------------------------------------------------------------------
row(out-dir fast "--out ${W}/a-file: exists and is not a directory" ${FLCE} gate --base subject=model --candidate subject=model
    --out ${W}/a-file)
row(out-dir fast "--out ${W}/a-file: exists and is not a directory" ${FLCE} matrix --python ${FLCE_PY} --out ${W}/a-file)
row(out-dir fast "--out ${W}/a-file: exists and is not a directory" ${FLCE} bisect ${W}/good.json --git ${REPO}
    --good HEAD~1 --bad HEAD --subject plug:flce --out ${W}/a-file)
row(out-file fast "--out ${W}: is a directory" ${FLCE} minimize ${W}/good.json --out ${W})
row(out-file fast "--out ${NOPE}/repro.py: its directory does not exist" ${FLCE} repro ${W}/good.json --emit-python
    -o ${NOPE}/repro.py)
row(minimize-pin fast "--pin ../x: must be letters" ${FLCE} minimize ${W}/good.json --pin ../x)
row(matrix-envs fast "--envs ${NOPE}: no such directory" ${FLCE} matrix --envs ${NOPE})
# --- campaign directories, corpus and flags ---------------------------------------------------
row(campaign-out fast "cannot create ${W}/a-file/x" ${FLCE} campaign --minutes 1 --out ${W}/a-file/x --subject model)
row(campaign-corpus fast "--corpus ${NOPE}: not a directory" ${FLCE} campaign --minutes 1 --out ${W}/c3
    --subject model --corpus ${NOPE})
row(campaign-corpus-case fast "--corpus: case ${W}/corpus-bad/range.json: label_smoothing" ${FLCE} campaign --minutes 1
    --out ${W}/c4 --subject model --corpus ${W}/corpus-bad)
row(campaign-flags fast "--minutes must be > 0" ${FLCE} campaign --minutes 0 --out ${W}/c5 --subject model)
campaign_row(campaign-resume-subject "--subject torch-native: ${CAMP} holds a campaign with --subject 'model'"
             ${FLCE} campaign --minutes 1 --out ${CAMP} --subject torch-native --seed 5 --quiet)
campaign_row(campaign-resume-subject-path "--subject-path ${W}: ${CAMP} holds a campaign with --subject-path ''" ${C}
             --subject-path ${W})
campaign_row(campaign-resume-seed "--seed 6: ${CAMP} holds a campaign with --seed 5"
             ${FLCE} campaign --minutes 1 --out ${CAMP} --subject model --seed 6 --quiet)
campaign_row(campaign-resume-family "--family 32: ${CAMP} holds a campaign with --family 8" ${C} --family 32)
campaign_row(campaign-resume-device "--device cuda: ${CAMP} holds a campaign with --device 'cpu'" ${C} --device cuda)
campaign_row(campaign-resume-corpus "--corpus: case ${W}/corpus-bad/range.json" ${C} --corpus ${W}/corpus-bad)
campaign_row(campaign-resume-gpus "--gpus 1: no GPU visible here" ${CMAKE_COMMAND} -E env CUDA_VISIBLE_DEVICES= ${C} --gpus 1)
# A state written by another flce (another schema), and one that is not JSON: refused, left as they are.
foreach(kind newer garbled)
  set(D ${W}/state-${kind})
  file(MAKE_DIRECTORY ${D})
  if(kind STREQUAL "newer")
    file(WRITE ${D}/state.json "{\"schema\": \"flce-campaign-state/2\", \"subject\": \"model\"}\n")
    set(needle "schema 'flce-campaign-state/2' is not the one this flce reads")
  else()
    file(WRITE ${D}/state.json "{\"schema\": \"flce-campaign-state/1\", ")
    set(needle "${D}/state.json: not a campaign state")
  endif()
  file(SHA256 ${D}/state.json h0)
  row(campaign-state-${kind} fast "${needle}" ${FLCE} campaign --minutes 1 --out ${D} --subject model --quiet)
  file(SHA256 ${D}/state.json h1)
  if(NOT h0 STREQUAL h1)
    message(FATAL_ERROR "campaign-state-${kind}: state.json changed")
  endif()
endforeach()

# --- subjects (the subject host answers: torch) ------------------------------------------------
row(subject-unknown subject "unknown subject 'no-such-subject'" ${FLCE} run ${W}/good.json --subject no-such-subject)
row(subject-module subject "--subject no_such_module:flce: cannot be used: ModuleNotFoundError" ${FLCE} run ${W}/good.json
    --subject no_such_module:flce)
row(subject-attribute subject "--subject os.path:no_such_function: cannot be used: AttributeError" ${FLCE} run ${W}/good.json
    --subject os.path:no_such_function)
row(subject-signature subject "--subject os.path:join: cannot be used: SignatureMismatch: posixpath.join(a, *p) is not an FLCE function"
    ${FLCE} run ${W}/good.json --subject os.path:join)
row(subject-signature subject "is not an FLCE function" ${FLCE} repro ${W}/good.json --subject os.path:join)
row(subject-signature subject "is not an FLCE function" ${FLCE} minimize ${W}/good.json --subject os.path:join)
row(subject-signature subject "subject 'os.path:join' cannot be loaded: SignatureMismatch" ${FLCE} gate --base subject=model
    --candidate subject=os.path:join --no-corpus --sample 1)
row(subject-module subject "subject 'no_such_module:flce' cannot be loaded: ModuleNotFoundError" ${FLCE} gate
    --base subject=model --candidate subject=no_such_module:flce --no-corpus --sample 1)
row(campaign-subject-unknown subject "unknown subject 'no-such-subject'" ${FLCE} campaign --minutes 2 --out ${W}/c6
    --subject no-such-subject --workers 1 --quiet)
row(campaign-subject-signature subject "subject unusable: " ${FLCE} campaign --minutes 2 --out ${W}/c7
    --subject os.path:join --workers 1 --quiet --minimize-s 0)

# --- the findings store (flce campaign --store, triage, store; docs/nights.md) ------------------
execute_process(COMMAND ${FLCE} store record ${W}/plug.db ${SRC}/tests/data/nights --night n0
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "flce store record: exit ${rc}: ${err}")
endif()
campaign_row(store-subject "a store of subject 'plugnight:flce', not of --subject 'model'" ${C} --store ${W}/plug.db)
campaign_row(store-not-a-store "${W}/a-file: not a flce store" ${C} --store ${W}/a-file)
row(store-not-a-store fast "store ${W}/a-file: not a flce store" ${FLCE} store list ${W}/a-file)
row(store-missing fast "store ${NOPE}.db: no such file" ${FLCE} store export ${NOPE}.db -o ${W}/pins.json)
row(triage-state fast "--state 'later': must be one of new, triaged, wontfix, fixed" ${FLCE} triage ${W}/plug.db judge
    --state later)
row(triage-finding fast "FINDING 'no-such-finding': no finding of store" ${FLCE} triage ${W}/plug.db no-such-finding
    --state wontfix --why x)
row(triage-needs fast "--state triaged needs --link (the upstream issue) and --owner (who has it); --owner is missing"
    ${FLCE} triage ${W}/plug.db judge --state triaged --link https://example.invalid/1)
row(triage-needs fast "--state wontfix needs --why" ${FLCE} triage ${W}/plug.db judge --state wontfix)
row(identity-dir fast "${NOPE}: no such directory" ${FLCE} identity ${NOPE})
row(identity-index-ref fast "${REPO}@no-such-ref: unknown ref" ${FLCE} identity --index ${REPO} --refs no-such-ref
    -o ${W}/index.json)
# --- docs/bad-input.md's table: one row per id above, none more -------------------------------
file(READ ${SRC}/docs/bad-input.md readme)
string(REGEX MATCHALL "\n\\| `bi:[a-z0-9-]+` \\|" found "${readme}")
set(TABLE "")
foreach(m ${found})
  string(REGEX REPLACE "^\n\\| `bi:([a-z0-9-]+)` \\|$" "\\1" id "${m}")
  list(APPEND TABLE ${id})
endforeach()
foreach(id ${TABLE})
  if(NOT id IN_LIST IDS)
    message(FATAL_ERROR "docs/bad-input.md's table has row bi:${id}, which tests/bad_input.cmake does not run")
  endif()
endforeach()
foreach(id ${IDS})
  if(NOT id IN_LIST TABLE)
    message(FATAL_ERROR "tests/bad_input.cmake runs ${id}, which docs/bad-input.md's table lacks (add a `bi:${id}` row)")
  endif()
endforeach()
list(LENGTH IDS n)
message(STATUS "bad input (${PART}): ${n} rows defined, docs/bad-input.md's table has each")
