# A hung case leaves its stacks: a campaign of the `hang` subject (crash_hang.py sleeps in
# flce()) kills its worker at --case-timeout, but first asks for the subject host's Python
# stacks (the `flce worker` forwards SIGUSR1 to it). The finding holds stacks.txt naming the
# stage and the hanging frame, flce's frames tagged [flce] (hang is a built-in); report.md and
# report.json point at it. Included from tests/CMakeLists.txt; -P -DPART=run is the test.
if(NOT CMAKE_SCRIPT_MODE_FILE)
  add_test(NAME campaign_hang_stacks COMMAND ${CMAKE_COMMAND} -DFLCE=$<TARGET_FILE:flce> -DWORK=${CMAKE_CURRENT_BINARY_DIR}/hang_stacks
           -DPART=run -P ${CMAKE_CURRENT_LIST_FILE})
  set_tests_properties(campaign_hang_stacks PROPERTIES LABELS "python" TIMEOUT 180)
  # A host that cannot answer (SIGUSR1 ignored, waiting for a child): the kernel's view says why.
  add_test(NAME campaign_hang_stacks_deaf COMMAND ${CMAKE_COMMAND} -DFLCE=$<TARGET_FILE:flce> -DSRC=${CMAKE_SOURCE_DIR}
           -DWORK=${CMAKE_CURRENT_BINARY_DIR}/hang_stacks_deaf -DPART=deaf -P ${CMAKE_CURRENT_LIST_FILE})
  set_tests_properties(campaign_hang_stacks_deaf PROPERTIES LABELS "python" TIMEOUT 180)
  return()
endif()

file(REMOVE_RECURSE ${WORK})
set(D ${WORK}/c)
if(PART STREQUAL "deaf")
  set(subject --subject deaf_hang:flce --subject-path ${SRC}/tests/data/subjects)
else()
  set(subject --subject hang)
endif()
execute_process(COMMAND ${FLCE} campaign --minutes 2 --max-cases 1 --out ${D} ${subject} --workers 1 --case-timeout 3
                        --quiet --minimize-s 0
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "campaign exit ${rc}, want 1 (a finding)\n${out}\n${err}")
endif()
file(GLOB stacks ${D}/findings/timeout-*/stacks.txt)
list(LENGTH stacks n)
if(NOT n EQUAL 1)
  file(GLOB_RECURSE all RELATIVE ${D} ${D}/findings/*)
  message(FATAL_ERROR "want one timeout finding with stacks.txt, found ${n}: ${all}\n${out}\n${err}")
endif()
file(READ ${stacks} s)
message(STATUS "stacks.txt:\n${s}")
if(PART STREQUAL "deaf")
  foreach(want
      "No Python stacks: the subject host did not answer"
      "The kernel's view \\(/proc\\)"
      "pid [0-9]+ `[^`]*flce worker[^`]*`: [SR]"  # the campaign's worker: R while it forwards the signal (CI run 13)
      # why no answer: the host the campaign's zygote forked for the worker, shown under it
      "\n  pid [0-9]+ `[^`]*-m flce_subjects\\.zygote [^`]*` \\(its subject host, forked by the campaign's zygote\\): S \\(sleeping\\), SIGUSR1 ignored"
      "\n    pid [0-9]+ `sleep 25`: S"                              # what the host waits for
      "x S in (clock_nanosleep|nanosleep)")
    if(NOT s MATCHES "${want}")
      message(FATAL_ERROR "stacks.txt lacks /${want}/")
    endif()
  endforeach()
  return()
endif()
foreach(want
    "flce: stage eager "                                    # the flce-side stage, as the outcome names it
    "killed after --case-timeout 3 s"
    "File \"[^\"]*flce_subjects/crash_hang\\.py\", line [0-9]+ in flce\n"  # the hanging function's frame
    "\\[flce\\] +File \"[^\"]*flce_subjects/subprocess_worker\\.py\", line [0-9]+ in main"  # tagged as flce's
    "Thread 0x[0-9a-f]+|Current thread 0x[0-9a-f]+"
    "The kernel's view \\(/proc\\)"
    "-m flce_subjects\\.zygote [^`]*` \\(its subject host, forked by the campaign's zygote\\): S \\(sleeping\\), SIGUSR1 caught")
  if(NOT s MATCHES "${want}")
    message(FATAL_ERROR "stacks.txt lacks /${want}/")
  endif()
endforeach()
get_filename_component(fdir ${stacks} DIRECTORY)
get_filename_component(id ${fdir} NAME)
file(READ ${fdir}/report.json fr)
string(JSON sf GET "${fr}" stacks)
file(READ ${D}/report.md md)
file(READ ${D}/report.json rj)
if(NOT sf STREQUAL "stacks.txt" OR NOT md MATCHES "\\[stacks.txt\\]\\(findings/${id}/stacks.txt\\)"
   OR NOT rj MATCHES "\"stacks\": \"findings/${id}/stacks.txt\"")
  message(FATAL_ERROR "the reports do not point at stacks.txt:\n${md}")
endif()
