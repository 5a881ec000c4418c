# flce bisect contract (cmake -P; FLCE, SRC, OUT): a scratch git repository (under OUT) of a
# plug-in in Liger's src/ layout, src/bisectplug/mod.py wrapping flce_subjects.model's flce,
# a root commit `pre` whose flce() raises (a good end that fails another way), then
# twelve commits: c0 good; c5 does not import (a syntax error); c7 plants a numeric bug (the
# loss scaled by 1.01); the later ones keep it. Eager only (--no-compiled): each step is one
# subject host start and one small case.
find_program(GIT git REQUIRED)
set(repo ${OUT}/plugrepo)
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${repo}/src/bisectplug)
set(ENV{FLCE_TREE_CACHE} ${OUT}/trees)  # not the user's ~/.cache
function(git)
  execute_process(COMMAND ${GIT} -C ${repo} -c user.email=ci@flce -c user.name=ci ${ARGN} RESULT_VARIABLE rc OUTPUT_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "git ${ARGN} failed")
  endif()
endfunction()
function(must_match text regex what)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "${what}: no match for '${regex}' in:\n${text}")
  endif()
endfunction()
# mod.py with the given loss scale and a version string; `broken` adds a syntax error.
function(write_mod scale note broken)
  set(py "\"\"\"bisectplug (tests/data/bisect/bisect_contract.cmake): flce's model subject, wrapped.\"\"\"\n")
  string(APPEND py "from flce_subjects import model\n\nSCALE = ${scale}\n\n\n")
  string(APPEND py "def flce(x, w, target, *, bias=None, ce_weight=None, ignore_index=-100, lse_square_scale=0.0,\n")
  string(APPEND py "         label_smoothing=0.0, reduction=\"mean\", softcap=None, return_z_loss=False, accum_dtype=None,\n")
  string(APPEND py "         use_token_scaling=False, return_token_accuracy=False, return_predicted_tokens=False):\n")
  string(APPEND py "    loss, z_loss, acc, pred = model.flce(\n")
  string(APPEND py "        x, w, target, bias=bias, ce_weight=ce_weight, ignore_index=ignore_index,\n")
  string(APPEND py "        lse_square_scale=lse_square_scale, label_smoothing=label_smoothing, reduction=reduction,\n")
  string(APPEND py "        softcap=softcap, return_z_loss=return_z_loss, accum_dtype=accum_dtype,\n")
  string(APPEND py "        use_token_scaling=use_token_scaling, return_token_accuracy=return_token_accuracy,\n")
  string(APPEND py "        return_predicted_tokens=return_predicted_tokens)\n")
  string(APPEND py "    return loss * SCALE, z_loss, acc, pred\n\n\n")
  string(APPEND py "def version():\n    return \"bisectplug ${note}\"\n")
  if(broken)
    string(APPEND py "\n\ndef oops(:\n")
  endif()
  file(WRITE ${repo}/src/bisectplug/__init__.py "")
  file(WRITE ${repo}/src/bisectplug/mod.py "${py}")
endfunction()

git(init -q)
# pre: the plug-in before it worked (raises): not the bad outcome, not a pass either.
file(WRITE ${repo}/src/bisectplug/__init__.py "")
file(WRITE ${repo}/src/bisectplug/mod.py "def flce(x, w, target, **kwargs):\n    raise RuntimeError('bisectplug: not written yet')\n\n\ndef version():\n    return 'bisectplug pre'\n")
git(add -A)
git(commit -qm "Start the plug-in")
git(tag pre)
set(subjects "Add the bisectplug subject" "Add a README" "Name the version" "Document the scale"
             "Tidy the docstring" "Break the import with a syntax error" "Fix the import"
             "Scale the loss by 1.01" "Reword the README" "Bump the version" "More docs" "Last change")
set(k 0)
foreach(subject IN LISTS subjects)
  set(scale 1.0)
  if(k GREATER_EQUAL 7)
    set(scale 1.01)
  endif()
  set(broken OFF)
  if(k EQUAL 5)
    set(broken ON)
  endif()
  write_mod(${scale} "c${k}" ${broken})
  file(APPEND ${repo}/README.md "${subject}\n")
  git(add -A)
  git(commit -qm "${subject}")
  git(tag c${k})
  math(EXPR k "${k} + 1")
endforeach()
execute_process(COMMAND ${GIT} -C ${repo} status --porcelain OUTPUT_VARIABLE status_before)
execute_process(COMMAND ${GIT} -C ${repo} rev-parse HEAD OUTPUT_VARIABLE head_before)

set(BISECT bisect ${SRC}/tests/data/bisect/case.json --git ${repo} --subject bisectplug.mod:flce --no-compiled)
function(bisect rc_want)
  execute_process(COMMAND ${FLCE} ${BISECT} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}")
  if(NOT rc EQUAL rc_want)
    message(FATAL_ERROR "flce ${BISECT} ${ARGN}: exit ${rc}, expected ${rc_want}\n${out}\n${err}")
  endif()
  set(OUT_TEXT "${out}" PARENT_SCOPE)
  set(ERR_TEXT "${err}" PARENT_SCOPE)
endfunction()

# The planted commit, named by its subject line, with the unimportable one skipped.
bisect(0 --good c0 --bad c11 --out ${OUT}/found)
must_match("${OUT_TEXT}" "first bad commit `[0-9a-f]+` Scale the loss by 1\\.01" "the planted commit")
must_match("${OUT_TEXT}" "Skipped[^\n]*\n+- `[0-9a-f]+` Break the import with a syntax error: cannot import"
           "the skipped commit")
must_match("${OUT_TEXT}" "Bad outcome: `judge:[^`]+` \\(the outcome at --bad\\)" "the bad outcome")
file(READ ${OUT}/found/bisect.json j)
string(JSON status GET "${j}" status)
string(JSON first GET "${j}" first_bad subject)
string(JSON nskip LENGTH "${j}" skipped)
string(JSON nsteps LENGTH "${j}" steps)
if(NOT status STREQUAL "found" OR NOT first STREQUAL "Scale the loss by 1.01" OR NOT nskip EQUAL 1)
  message(FATAL_ERROR "bisect.json: status ${status}, first bad '${first}', ${nskip} skipped")
endif()
if(nsteps GREATER 8)
  message(FATAL_ERROR "bisect.json: ${nsteps} steps for 11 candidates")
endif()
if(NOT EXISTS ${OUT}/found/bisect.md)
  message(FATAL_ERROR "no bisect.md")
endif()
string(JSON bad_outcome GET "${j}" bad_outcome)

# --expect: the same answer when the outcome is named.
bisect(0 --good c0 --bad c9 --expect ${bad_outcome} -q)
must_match("${OUT_TEXT}" "first bad commit `[0-9a-f]+` Scale the loss by 1\\.01" "with --expect")

# Nothing to bisect: one commit; a bad end that passes; a good end that is bad already.
bisect(1 --good c11 --bad c11 -q)
must_match("${ERR_TEXT}" "--good c11 and --bad c11 are the same commit [0-9a-f]+: nothing to bisect" "good == bad")
bisect(1 --good c0 --bad c6 -q)
must_match("${ERR_TEXT}" "--bad c6 \\([0-9a-f]+\\) passes the case: nothing to bisect" "bad that passes")
bisect(1 --good c8 --bad c11 -q)
must_match("${ERR_TEXT}" "--good c8 \\([0-9a-f]+\\) already shows judge:" "good that is bad")

# A good end that fails another way: bisected, and said (stdout, bisect.md, bisect.json); the
# commit before the one found passes, so it is where a passing case broke.
bisect(0 --good pre --bad c8 --out ${OUT}/noted -q)
must_match("${OUT_TEXT}" "first bad commit `[0-9a-f]+` Scale the loss by 1\\.01" "from a failing good end")
must_match("${OUT_TEXT}" "\\*\\*Note:\\*\\* the good end pre \\([0-9a-f]+\\) does not pass: bucket-[0-9a-f]+@eager:-; but the commit before it in the order, [0-9a-f]+, passes: the commit found is where a passing case broke\\."
           "the good end's note")
file(READ ${OUT}/noted/bisect.md noted_md)
must_match("${noted_md}" "\\*\\*Note:\\*\\* the good end pre" "the note in bisect.md")
file(READ ${OUT}/noted/bisect.json nj)
string(JSON note GET "${nj}" note)
string(JSON good_outcome GET "${nj}" good_outcome)
must_match("${note}" "^the good end pre \\([0-9a-f]+\\) does not pass: ${good_outcome}; but " "bisect.json note")
# --expect-good pass: that good end is refused after the two ends, nothing between them run.
bisect(1 --good pre --bad c8 --expect-good pass --out ${OUT}/refused -q)
must_match("${ERR_TEXT}" "--good pre \\([0-9a-f]+\\) shows bucket-[0-9a-f]+@eager:-, not pass \\(--expect-good\\): not bisected"
           "--expect-good refusal")
file(READ ${OUT}/refused/bisect.json rj)
string(JSON nsteps LENGTH "${rj}" steps)
string(JSON expect_good GET "${rj}" expect_good)
if(NOT nsteps EQUAL 2 OR NOT expect_good STREQUAL "pass")
  message(FATAL_ERROR "--expect-good refusal: ${nsteps} steps (the two ends only), expect_good '${expect_good}'")
endif()
bisect(0 --good c0 --bad c8 --expect-good pass -q)
must_match("${OUT_TEXT}" "first bad commit `[0-9a-f]+` Scale the loss by 1\\.01" "--expect-good met")

# flce report carries the bisect: a finding folder from `flce run --subject-git --json` (which
# records the repository, ref and commit), reported with --bisect, then with bisect/ in it.
set(F ${OUT}/finding)
file(MAKE_DIRECTORY ${F})
file(COPY_FILE ${SRC}/tests/data/bisect/case.json ${F}/case.json)
execute_process(COMMAND ${FLCE} run ${F}/case.json --subject bisectplug.mod:flce --subject-git ${repo}@c8 --no-compiled --json
                OUTPUT_FILE ${F}/report.json RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "flce run --subject-git @c8 --json: exit ${rc}\n${err}")
endif()
execute_process(COMMAND ${GIT} -C ${repo} rev-parse --short=12 c8 OUTPUT_VARIABLE c8 OUTPUT_STRIP_TRAILING_WHITESPACE)
execute_process(COMMAND ${FLCE} report ${F} --bisect ${OUT}/noted RESULT_VARIABLE rc OUTPUT_VARIABLE md ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "flce report --bisect: exit ${rc}\n${err}")
endif()
message("${md}")
must_match("${md}" "Subject `bisectplug\\.mod:flce`: bisectplug git `${c8}` \\(c8\\), a tree exported from `[^`]*plugrepo@c8`; outcome"
           "the subject's tree, as a user names it")
must_match("${md}" "\n## Bisect\n\nFrom `flce bisect` \\(`[^`]*noted/bisect\\.json`\\): first bad commit `[0-9a-f]+` Scale the loss by 1\\.01\\."
           "the report's first bad commit")
must_match("${md}" "Range: --good `pre` \\(`[0-9a-f]+`\\) \\.\\. --bad `c8` \\(`[0-9a-f]+`\\) in `[^`]*plugrepo`, 9 commits on the ancestry path, [0-9]+ runs"
           "the report's range")
must_match("${md}" "\\*\\*Note:\\*\\* the good end pre [^\n]*where a passing case broke\\." "the report repeats the note")
must_match("${md}" "\n\\| # \\| role \\| commit \\| subject \\| outcome \\| verdict \\|\n\\|---\\|---\\|---\\|---\\|---\\|---\\|\n\\| 1 \\| bad end \\| `[0-9a-f]+` \\| Reword the README \\|"
           "the report's steps")
file(COPY ${OUT}/noted/ DESTINATION ${F}/bisect)
execute_process(COMMAND ${FLCE} report ${F} RESULT_VARIABLE rc OUTPUT_VARIABLE md2)
if(NOT rc EQUAL 0 OR NOT md2 MATCHES "From `flce bisect` \\(`[^`]*finding/bisect/bisect\\.json`\\): first bad commit")
  message(FATAL_ERROR "flce report: the finding's own bisect/ not found (exit ${rc})\n${md2}")
endif()

# Bad input.
bisect(2 --good c0 --bad no-such-ref -q)
must_match("${ERR_TEXT}" "plugrepo@no-such-ref: unknown ref" "unknown ref")
bisect(2 --good c11 --bad c0 -q)
must_match("${ERR_TEXT}" "is not an ancestor of --bad c0" "reversed ends")
execute_process(COMMAND ${FLCE} bisect ${SRC}/tests/data/bisect/case.json --git ${OUT}/no-such-repo --good a --bad b
                        --subject model RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "no-such-repo: no such directory")
  message(FATAL_ERROR "missing repository: exit ${rc}\n${err}")
endif()

# --subject-git on flce run: the same trees from the cache; a bad spec is exit 2.
execute_process(COMMAND ${FLCE} run ${SRC}/tests/data/bisect/case.json --subject bisectplug.mod:flce
                        --subject-git ${repo}@c11 --no-compiled RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1 OR NOT out MATCHES "outcome: ${bad_outcome}" OR NOT err MATCHES "Last change")
  message(FATAL_ERROR "flce run --subject-git @c11: exit ${rc}\n${out}\n${err}")
endif()
execute_process(COMMAND ${FLCE} run ${SRC}/tests/data/bisect/case.json --subject bisectplug.mod:flce
                        --subject-git ${repo}@nope RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "--subject-git [^ ]*plugrepo@nope: [^ ]*plugrepo@nope: unknown ref")
  message(FATAL_ERROR "flce run --subject-git @nope: exit ${rc}\n${err}")
endif()

# --subject-git on flce matrix: every environment runs the subject from that commit's tree.
execute_process(COMMAND ${FLCE} matrix --cases ${SRC}/tests/data/bisect/case.json --subject bisectplug.mod:flce
                        --subject-git ${repo}@c11 --quiet RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "${bad_outcome}")
  message(FATAL_ERROR "flce matrix --subject-git @c11: exit ${rc}\n${out}\n${err}")
endif()
execute_process(COMMAND ${FLCE} matrix --cases ${SRC}/tests/data/bisect/case.json --subject bisectplug.mod:flce
                        --subject-git ${repo}@nope --quiet RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "--subject-git [^ ]*plugrepo@nope: .*unknown ref")
  message(FATAL_ERROR "flce matrix --subject-git @nope: exit ${rc}\n${err}")
endif()

# The trees lie in the cache, one per commit id; the repository is as it was.
file(GLOB trees LIST_DIRECTORIES true ${OUT}/trees/*)
foreach(t IN LISTS trees)
  get_filename_component(n ${t} NAME)
  if(NOT n MATCHES "^[0-9a-f]+$" OR NOT EXISTS ${t}/src/bisectplug/mod.py)
    message(FATAL_ERROR "unexpected entry in the tree cache: ${t}")
  endif()
endforeach()
execute_process(COMMAND ${GIT} -C ${repo} status --porcelain OUTPUT_VARIABLE status_after)
execute_process(COMMAND ${GIT} -C ${repo} rev-parse HEAD OUTPUT_VARIABLE head_after)
execute_process(COMMAND ${GIT} -C ${repo} worktree list OUTPUT_VARIABLE worktrees)
string(REGEX MATCHALL "\n" wl "${worktrees}")
list(LENGTH wl nwt)
if(NOT status_after STREQUAL status_before OR NOT head_after STREQUAL head_before OR NOT nwt EQUAL 1)
  message(FATAL_ERROR "the repository changed:\n${status_after}\n${head_after}\n${worktrees}")
endif()
