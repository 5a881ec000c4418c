# A stale expectation must come back "fixed" (the workaround makes the seed op pass) and
# a regression "regressed" (Liger #1324's routing makes the default model break), with
# exit code 1 because of the regression.
execute_process(COMMAND ${FLCE} replay ${SRC}/tests/data/stale_expectations.json RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "replay with a regression must exit 1, got ${rc}")
endif()
if(NOT out MATCHES "seed-raw-addmm-dtype-out.json +aten-dtype-out\\+workaround +fixed")
  message(FATAL_ERROR "workaround case not reported as fixed")
endif()
if(NOT out MATCHES "model-bf16-default.json +model-dtype-out +regressed")
  message(FATAL_ERROR "model-dtype-out not reported as regressed")
endif()
