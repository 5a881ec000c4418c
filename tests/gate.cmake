# ctest registrations for flce gate (included from tests/CMakeLists.txt when the Python oracles are built)
# The two CI gates of the issue: Liger PR #1324's routing (model-dtype-out) must be flagged
# against model, and the workaround must turn it green again. Both on the pinned corpus plus
# a small fixed-seed sample, so each stays around a minute on 2 cores.
foreach(_gate regression workaround spec git contract)
  add_test(NAME gate_${_gate} COMMAND ${CMAKE_COMMAND} -DFLCE=$<TARGET_FILE:flce> -DSRC=${CMAKE_SOURCE_DIR}
           -DWHICH=${_gate} -DOUT=${CMAKE_CURRENT_BINARY_DIR}/gate_${_gate}
           -P ${CMAKE_CURRENT_SOURCE_DIR}/data/gate/gate_contract.cmake)
  set_tests_properties(gate_${_gate} PROPERTIES LABELS "python" TIMEOUT 600)
endforeach()

# Unit tests of the gate/matrix logic and the worker client (a fake interpreter; no torch).
# bisect_test.cpp: bisection stepping, the tree cache and --merge-base (needs git, no torch).
add_executable(flce_gate_tests gate_matrix_test.cpp bisect_test.cpp)
target_link_libraries(flce_gate_tests PRIVATE flce_gate GTest::gtest_main)
target_compile_options(flce_gate_tests PRIVATE ${FLCE_WARNINGS})
flce_gtest_suite(flce_gate_tests flce_gate_tests cpu)
