# Nights (issue #40, docs/nights.md): a findings store across campaigns, progression and the
# night's report. Included from tests/CMakeLists.txt this registers the tests; with -P -DPART=...
# it is the test:
#   three    three nights of a planted plug-in tree: night 1 finds its bug (exit 1, New); night 2's
#            tree has it fixed (Fixed, nothing new, exit 0); night 3 brings another bug (only that
#            one New, exit 1; the first still fixed). Then the store's pins, triage, and two
#            writers recording into one store at once, ten times: both findings, no corruption.
#   refused  a store of another subject (exit 2 naming both), not a store, bad triage input, a
#            writer killed inside its transaction.
#   identity a fake Liger tree exported from a throwaway repository: its identity is the commit's
#            src tree, an identity index names the commit, and a pin of that commit applies to it.
if(NOT CMAKE_SCRIPT_MODE_FILE)
  foreach(part three refused identity)
    add_test(NAME nights_${part} COMMAND ${CMAKE_COMMAND} -DFLCE=$<TARGET_FILE:flce> -DSRC=${CMAKE_SOURCE_DIR}
             -DPY=${FLCE_PYTHON} -DWORK=${CMAKE_CURRENT_BINARY_DIR}/nights_${part} -DPART=${part}
             -P ${CMAKE_CURRENT_LIST_FILE})
    set_tests_properties(nights_${part} PROPERTIES LABELS "python" TIMEOUT 400)
  endforeach()
  return()
endif()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/empty)
set(DB ${WORK}/nights.db)

function(require cond_text)
  if(NOT (${ARGN}))
    message(FATAL_ERROR "${cond_text}")
  endif()
endfunction()

# A plug-in tree: module plugnight, flce's model with the planted bug `bug` (model.Variant's
# fields; "" none). Three trees, three content identities.
function(plug_tree dir bug)
  file(WRITE ${dir}/plugnight.py "from flce_subjects import model\n\n"
       "CONTRACT = model.CONTRACT\n"
       "VARIANT = model.Variant(name='plug-night'${bug})\n"
       "flce = model.subject(VARIANT)\n"
       "supports = model.supports\n\n\n"
       "def version():\n    return 'plugnight (planted)'\n")
endfunction()

# One night: sets rc, rj (report.json), NEW, FIXED, OPEN (the night section's keys, ;-lists).
function(night label tree)
  if(NOT MAX_CASES)
    set(MAX_CASES 400)
  endif()
  execute_process(COMMAND ${FLCE} campaign --minutes 1 --max-cases ${MAX_CASES} --out ${WORK}/${label} --corpus ${WORK}/empty
                          --subject plugnight:flce --subject-path ${tree} --lanes eager=1 --analysis-workers 1 --seed 1
                          --candidates 1 --minimize-s 0 --grace-s 30 --stop-after-findings 1 --quiet
                          --store ${DB} --night ${label} ${ARGN}
                  RESULT_VARIABLE r OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "night ${label}: exit ${r}\n${out}")
  require("night ${label}: no report.json (exit ${r})\n${err}" EXISTS ${WORK}/${label}/report.json)
  file(READ ${WORK}/${label}/report.json j)
  foreach(section new fixed still_open fixed_earlier)
    set(keys "")
    string(JSON n LENGTH "${j}" night ${section})
    if(n GREATER 0)
      math(EXPR last "${n} - 1")
      foreach(i RANGE ${last})
        string(JSON k GET "${j}" night ${section} ${i} key)
        list(APPEND keys "${k}")
      endforeach()
    endif()
    string(TOUPPER ${section} S)
    set(${S} "${keys}" PARENT_SCOPE)
  endforeach()
  file(READ ${WORK}/${label}/report.md md)
  set(md "${md}" PARENT_SCOPE)
  set(rc ${r} PARENT_SCOPE)
  set(rj "${j}" PARENT_SCOPE)
  set(log "${out}\n${err}" PARENT_SCOPE)
endfunction()

function(flce_cmd)  # sets rc, out, err
  execute_process(COMMAND ${FLCE} ${ARGN} RESULT_VARIABLE r OUTPUT_VARIABLE o ERROR_VARIABLE e)
  message(STATUS "flce ${ARGN}: exit ${r}\n${o}${e}")
  set(rc ${r} PARENT_SCOPE)
  set(out "${o}" PARENT_SCOPE)
  set(err "${e}" PARENT_SCOPE)
endfunction()

if(PART STREQUAL "three")
  plug_tree(${WORK}/tree1 ", gw_scale_softcap=2.0")
  plug_tree(${WORK}/tree2 "")
  plug_tree(${WORK}/tree3 ", gw_scale_smoothing=2.0")
  string(TIMESTAMP t0 "%s")

  night(n1 ${WORK}/tree1)
  require("night 1: exit ${rc}, want 1 (its bug is new)\n${log}" rc EQUAL 1)
  list(LENGTH NEW nn)
  require("night 1: want one New finding under softcap, got '${NEW}'" nn EQUAL 1 AND NEW MATCHES "softcap")
  set(first "${NEW}")
  require("night 1: report.md does not open with the night's sections" md MATCHES "^# [^\n]*\n\n## Night n1: 1 new")
  string(JSON identity1 GET "${rj}" night identity)
  require("night 1: identity '${identity1}' is not a tree's" identity1 MATCHES "^tree [0-9a-f]+ ")

  set(MAX_CASES 150)  # a tree without the bug: enough cases to show nothing, no more
  night(n2 ${WORK}/tree2)
  set(MAX_CASES 400)
  require("night 2: exit ${rc}, want 0 (its bug fixed, nothing new)\n${log}" rc EQUAL 0)
  list(LENGTH NEW nn)
  require("night 2: want nothing New, got '${NEW}'" nn EQUAL 0)
  require("night 2: want '${first}' Fixed, got '${FIXED}' (still open: '${STILL_OPEN}')" FIXED STREQUAL first)
  require("night 2: report.md has no Fixed section naming it" md MATCHES "### Fixed \\(1\\)")
  string(JSON identity2 GET "${rj}" night identity)
  require("night 2: the fixed tree has night 1's identity '${identity1}'" NOT identity2 STREQUAL identity1)
  string(JSON fixed_on GET "${rj}" night fixed 0 fixed_identity)
  require("night 2: fixed on '${fixed_on}', want tonight's '${identity2}'" fixed_on STREQUAL identity2)

  night(n3 ${WORK}/tree3)
  require("night 3: exit ${rc}, want 1 (another bug is new)\n${log}" rc EQUAL 1)
  list(LENGTH NEW nn)
  require("night 3: want one New finding under label smoothing, got '${NEW}'"
          nn EQUAL 1 AND NEW MATCHES "smoothing" AND NOT NEW MATCHES "softcap")
  require("night 3: '${first}' should stay fixed (fixed earlier: '${FIXED_EARLIER}')" FIXED_EARLIER STREQUAL first)
  list(LENGTH FIXED nf)
  require("night 3: nothing was fixed tonight, got '${FIXED}'" nf EQUAL 0)
  string(TIMESTAMP t1 "%s")
  math(EXPR nights_s "${t1} - ${t0}")
  message(STATUS "three nights in ${nights_s} s")

  # Triage, then the pins the store implies: flce reads them back as a known list.
  flce_cmd(triage ${DB} out-of-bounds-eager-label --state triaged --link https://example.org/issues/1 --owner ana)
  require("triage: exit ${rc}" rc EQUAL 0 AND out MATCHES "triaged")
  flce_cmd(store export ${DB} -o ${WORK}/pins/expectations.json)
  require("store export: exit ${rc}" rc EQUAL 0 AND out MATCHES "^2 pins")
  flce_cmd(replay ${WORK}/pins/expectations.json --expected --json --subject-path ${WORK}/tree3)
  require("the exported pins do not load: exit ${rc}" rc EQUAL 0)
  require("the exported pins: want the open one's outcome and the fixed one's pass:\n${out}"
          out MATCHES "\"expected\":\"pass\"" AND out MATCHES "\"expected\":\"judge:")

  # Night 4, night 3's tree again: its bug is re-run first and still fails (Still open, known while
  # exploring, exit 0). Night 5, night 1's tree again: the fixed bug is back (New, regressed, exit 1).
  set(MAX_CASES 120)
  night(n4 ${WORK}/tree3)
  list(LENGTH NEW nn)
  require("night 4: exit ${rc} with New '${NEW}', want 0 and none\n${log}" rc EQUAL 0 AND nn EQUAL 0)
  require("night 4: want the smoothing bug Still open, got '${STILL_OPEN}'" STILL_OPEN MATCHES "smoothing")
  string(JSON tonight GET "${rj}" night still_open 0 tonight)
  require("night 4: its re-run says '${tonight}', want still-open" tonight STREQUAL "still-open")
  set(MAX_CASES 400)  # as night 1, which found it: the sampled stream is the same
  night(n5 ${WORK}/tree1)
  list(LENGTH NEW nn)
  require("night 5: exit ${rc}, want 1 and '${first}' New again, got '${NEW}'" rc EQUAL 1 AND nn EQUAL 1 AND NEW STREQUAL first)
  require("night 5: want the smoothing bug Fixed (tree 1 lacks it), got '${FIXED}'" FIXED MATCHES "smoothing")
  string(JSON regressed GET "${rj}" night new 0 regressed)
  require("night 5: '${first}' not marked regressed" regressed)
  require("night 5: report.md does not say regressed" md MATCHES "\\*\\*regressed\\*\\*")
  string(TIMESTAMP t2 "%s")
  math(EXPR nights_s "${t2} - ${t0}")
  message(STATUS "five nights in ${nights_s} s")

  flce_cmd(store list ${DB} --json)
  require("store list: exit ${rc}" rc EQUAL 0)
  string(JSON nf LENGTH "${out}" findings)
  string(JSON nn LENGTH "${out}" nights)
  require("store list: want 2 findings over 5 nights, got ${nf} over ${nn}" nf EQUAL 2 AND nn EQUAL 5)
  foreach(i 0 1)
    string(JSON key GET "${out}" findings ${i} key)
    string(JSON state GET "${out}" findings ${i} state)
    string(JSON fixed_night GET "${out}" findings ${i} fixed_night)
    string(JSON first_night GET "${out}" findings ${i} first_night)
    string(JSON id GET "${out}" findings ${i} id)
    if(key STREQUAL first)
      # Fixed on night 2, back on night 5: open again, its history kept.
      string(JSON note GET "${out}" findings ${i} note)
      require("store: ${key} is ${state} ('${note}'), want new again, regressed on n5 after its fix on n2"
              state STREQUAL "new" AND first_night STREQUAL "n1" AND note MATCHES "regressed on night n5.*fixed since night n2")
    else()
      string(JSON last_night GET "${out}" findings ${i} last_night)
      string(JSON owner GET "${out}" findings ${i} owner)
      # Triaged on night 3, still failing on night 4, passing on night 5's tree (it lacks the bug).
      require("store: ${key} is ${state} since '${fixed_night}' (owner '${owner}'), nights ${first_night}..${last_night}; want fixed since n5, ana, n3..n4"
              state STREQUAL "fixed" AND fixed_night STREQUAL "n5" AND owner STREQUAL "ana"
              AND first_night STREQUAL "n3" AND last_night STREQUAL "n4")
    endif()
  endforeach()

  # Two writers at once, ten rounds, each into a fresh store: both findings present, the file
  # whole. (Two COMMANDs of one execute_process would be a pipeline: the second's early exit
  # kills the first's output with SIGPIPE. So a shell runs both in the background.)
  set(two_writers [=[
"$0" store record "$1" "$2" --night s >"$1.a" 2>&1 & a=$!
"$0" store record "$1" "$3" --night s >"$1.b" 2>&1 & b=$!
wait $a; ra=$?; wait $b; rb=$?
cat "$1.a" "$1.b"; printf '%s,%s' "$ra" "$rb"]=])
  foreach(round RANGE 1 10)
    set(S ${WORK}/shards-${round}.db)
    execute_process(COMMAND sh -c "${two_writers}" ${FLCE} ${S} ${WORK}/n1 ${WORK}/n3
                    OUTPUT_VARIABLE o ERROR_VARIABLE e)
    string(REGEX MATCH "[0-9]+,[0-9]+$" rcs "${o}")
    require("round ${round}: exits ${rcs}\n${o}${e}" rcs STREQUAL "0,0")
    execute_process(COMMAND ${FLCE} store list ${S} --json RESULT_VARIABLE r OUTPUT_VARIABLE o ERROR_VARIABLE e)
    require("round ${round}: store list exit ${r}: ${e}" r EQUAL 0)
    string(JSON nf LENGTH "${o}" findings)
    string(JSON nn LENGTH "${o}" nights)
    require("round ${round}: want 2 findings and 2 records, got ${nf} and ${nn}" nf EQUAL 2 AND nn EQUAL 2)
    execute_process(COMMAND ${PY} -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])" ${S}
                    OUTPUT_VARIABLE ok OUTPUT_STRIP_TRAILING_WHITESPACE)
    require("round ${round}: integrity_check says '${ok}'" ok STREQUAL "ok")
  endforeach()
elseif(PART STREQUAL "refused")
  plug_tree(${WORK}/tree ", gw_scale_softcap=2.0")
  file(COPY ${SRC}/tests/data/nights/report.json DESTINATION ${WORK}/done)
  flce_cmd(store record ${DB} ${WORK}/done --night n0)
  require("store record: exit ${rc}" rc EQUAL 0)
  # Another subject's store: refused before anything runs, naming both subjects.
  flce_cmd(campaign --minutes 1 --out ${WORK}/other --subject model --store ${DB})
  require("another subject's store: exit ${rc}, want 2 naming both subjects: ${err}"
          rc EQUAL 2 AND err MATCHES "subject 'plugnight:flce'" AND err MATCHES "--subject 'model'")
  require("another subject's store: the campaign ran" NOT EXISTS ${WORK}/other/state.json)
  file(WRITE ${WORK}/not-a-store.db "hello, not SQLite\n")
  flce_cmd(store list ${WORK}/not-a-store.db)
  require("not a store: exit ${rc}: ${err}" rc EQUAL 2 AND err MATCHES "not a flce store")
  flce_cmd(triage ${DB} no-such-finding --state wontfix --why x)
  require("unknown finding: exit ${rc}: ${err}" rc EQUAL 2 AND err MATCHES "FINDING 'no-such-finding'")
  flce_cmd(triage ${DB} judge --state later)
  require("unknown state: exit ${rc}: ${err}" rc EQUAL 2 AND err MATCHES "--state 'later': must be one of new, triaged, wontfix, fixed")
  flce_cmd(triage ${DB} judge --state triaged --link https://example.org/1)
  require("triaged without --owner: exit ${rc}: ${err}" rc EQUAL 2 AND err MATCHES "--owner is missing")
  flce_cmd(triage ${DB} judge --state wontfix)
  require("wontfix without --why: exit ${rc}: ${err}" rc EQUAL 2 AND err MATCHES "needs --why")
  flce_cmd(store list ${DB})
  require("the refused triage changed the store:\n${out}" rc EQUAL 0 AND out MATCHES "  new\n")
  # A writer killed inside its transaction (SIGKILL, no cleanup): the store reads as before it,
  # and the next writer rolls the journal back and writes.
  execute_process(COMMAND ${PY} -c [=[
import os, signal, sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
db.execute("UPDATE findings SET state = 'fixed', key = 'half-written'")
db.execute("DELETE FROM sightings")
os.kill(os.getpid(), signal.SIGKILL)
]=] ${DB} RESULT_VARIABLE killed)
  require("the killed writer was not killed: ${killed}" NOT killed EQUAL 0)
  flce_cmd(store list ${DB} --json)
  require("after a killed writer: exit ${rc}: ${err}" rc EQUAL 0)
  string(JSON state GET "${out}" findings 0 state)
  string(JSON key GET "${out}" findings 0 key)
  string(JSON hits GET "${out}" findings 0 hits)
  require("after a killed writer: ${key} is ${state} with ${hits} cases; want the state before it"
          state STREQUAL "new" AND key STREQUAL "out-of-bounds@eager[softcap]" AND hits EQUAL 3)
  flce_cmd(triage ${DB} judge --state wontfix --why "a planted bug")
  require("after a killed writer, a write: exit ${rc}: ${err}" rc EQUAL 0 AND out MATCHES "wontfix")
elseif(PART STREQUAL "identity")
  # Liger's layout in a throwaway repository, two commits; the first exported as a plain tree.
  set(REPO ${WORK}/liger)
  set(GIT git -C ${REPO} -c user.name=flce -c user.email=flce@example.invalid -c commit.gpgsign=false)
  file(WRITE ${REPO}/src/liger_kernel/__init__.py "")
  file(WRITE ${REPO}/src/liger_kernel/ops.py "SCALE = 1\n")
  file(WRITE ${REPO}/pyproject.toml "[project]\nname = 'liger_kernel'\nversion = '0.8.6'\n")
  foreach(step "init -q" "add -A" "commit -qm one")
    separate_arguments(args UNIX_COMMAND "${step}")
    execute_process(COMMAND ${GIT} ${args} RESULT_VARIABLE r ERROR_VARIABLE e)
    require("git ${step}: ${e}" r EQUAL 0)
  endforeach()
  execute_process(COMMAND ${GIT} rev-parse HEAD OUTPUT_VARIABLE one OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${GIT} rev-parse HEAD:src OUTPUT_VARIABLE one_src OUTPUT_STRIP_TRAILING_WHITESPACE)
  file(WRITE ${REPO}/src/liger_kernel/ops.py "SCALE = 2\n")
  execute_process(COMMAND ${GIT} commit -qam two RESULT_VARIABLE r)
  file(MAKE_DIRECTORY ${WORK}/export)
  execute_process(COMMAND ${GIT} archive -o ${WORK}/one.tar ${one} RESULT_VARIABLE r)
  execute_process(COMMAND tar -xf ${WORK}/one.tar -C ${WORK}/export RESULT_VARIABLE r2)
  require("git archive / tar: ${r} ${r2}" r EQUAL 0 AND r2 EQUAL 0)
  file(WRITE ${WORK}/export/src/liger_kernel/__pycache__/ops.cpython-311.pyc "junk")  # never committed
  string(SUBSTRING "${one}" 0 12 one12)
  string(SUBSTRING "${one_src}" 0 12 src12)

  flce_cmd(identity ${WORK}/export/src)
  require("identity of the export: exit ${rc}, want tree ${one_src}:\n${out}" rc EQUAL 0 AND out MATCHES "tree ${one_src}")
  flce_cmd(identity --index ${REPO} --refs HEAD --path src -o ${WORK}/index/liger.json)
  require("identity --index: exit ${rc}: ${out}" rc EQUAL 0 AND out MATCHES "2 commits, 2 distinct trees of src")
  set(ENV{FLCE_IDENTITY_INDEX} ${WORK}/index)
  flce_cmd(identity ${WORK}/export/src)
  require("identity with the index: want tree ${src12} = git ${one12}:\n${out}" out MATCHES "tree ${src12} = git ${one12}")

  # A pin naming commit one (as corpus/expectations.json names Liger's) applies to the plain export.
  file(MAKE_DIRECTORY ${WORK}/pins/cases)
  file(COPY_FILE ${SRC}/corpus/cases/liger-softcap-fp32-none-tiny.json ${WORK}/pins/cases/c.json)
  file(WRITE ${WORK}/pins/expectations.json "[{\"case\": \"cases/c.json\", \"subject\": \"liger\", \"expect\": [
    {\"subject_version\": \"liger-kernel git ${one12}\", \"outcome\": \"judge:grad_weight:out-of-bounds@eager\"}]}]\n")
  flce_cmd(replay ${WORK}/pins/expectations.json --expected --json --subject-path ${WORK}/export/src)
  require("replay --expected: exit ${rc}: ${err}" rc EQUAL 0)
  string(JSON version GET "${out}" subject_version)
  string(JSON expected GET "${out}" expected)
  require("the plain export reads '${version}', expected '${expected}'; want liger-kernel git ${one12} and the pin"
          version MATCHES "^liger-kernel git ${one12}, source tree at ${WORK}/export, tree ${src12}"
          AND expected STREQUAL "judge:grad_weight:out-of-bounds@eager")
  # Without the index the tree is only itself: the pin does not apply.
  set(ENV{FLCE_IDENTITY_INDEX} ${WORK}/no-index)
  flce_cmd(replay ${WORK}/pins/expectations.json --expected --json --subject-path ${WORK}/export/src)
  string(JSON version GET "${out}" subject_version)
  string(JSON expected GET "${out}" expected)
  string(LENGTH "${expected}" elen)
  require("without an index: '${version}', expected '${expected}'; want the tree form and no expectation"
          version MATCHES "^liger-kernel source tree at .*, tree ${src12}" AND elen EQUAL 0)
endif()
