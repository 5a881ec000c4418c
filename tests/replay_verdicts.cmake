# A stale expectation must come back "fixed" (the workaround makes the seed op pass) and
# a regression "regressed" (Liger #1324's routing makes the default model break), with
# exit code 1 because of the regression.
function(must_match regex text why)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "${why}")
  endif()
endfunction()
execute_process(COMMAND ${FLCE} replay ${SRC}/tests/data/stale_expectations.json RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "replay with a regression must exit 1, got ${rc}")
endif()
must_match("seed-raw-addmm-dtype-out.json +aten-dtype-out\\+workaround +fixed" "${out}" "workaround case not reported as fixed")
must_match("model-bf16-default.json +model-dtype-out +regressed" "${out}" "model-dtype-out not reported as regressed")

# Expectations per subject version (corpus/README.md, subject_version): the one naming another
# version is skipped, the one naming this version (the plug-in's __version__, "0.6.2-shaped")
# applies before the any-version one.
set(V ${SRC}/tests/data/version_expectations.json)
execute_process(COMMAND ${FLCE} replay ${V} --subject-path ${SRC}/tests/data/subjects --json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "replay by subject version: exit ${rc}, want 0 (as-expected and fixed only)")
endif()
string(REGEX MATCHALL "\"verdict\":\"[a-z-]+\"" verdicts "${out}")
if(NOT verdicts STREQUAL "\"verdict\":\"as-expected\";\"verdict\":\"fixed\"")
  message(FATAL_ERROR "want as-expected then fixed, got: ${verdicts}")
endif()
must_match("\"expected\":\"judge:loss:out-of-bounds@eager\",\"torch\":\"[^\"]+\",\"subject_version\":\"0\\.6\\.2-shaped\""
           "${out}" "the version-pinned expectation was not the one applied, or the version is not reported")
execute_process(COMMAND ${FLCE} replay ${V} --expected --subject-path ${SRC}/tests/data/subjects
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "expected +pass\n[^\n]*expected +judge:loss:out-of-bounds@eager\n")
  message(FATAL_ERROR "replay --expected by subject version: exit ${rc}\n${out}${err}")
endif()
