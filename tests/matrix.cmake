# ctest registrations for flce matrix (included from tests/CMakeLists.txt when the Python oracles are built)
# CI exercises the cross-version code path on the pinned torch only (two cases); the
# multi-version run is the nightly job (scripts/matrix_envs.sh, docs/matrix.md).
add_test(NAME matrix_pinned_torch COMMAND ${CMAKE_COMMAND} -DFLCE=$<TARGET_FILE:flce> -DSRC=${CMAKE_SOURCE_DIR}
         -DPY=${FLCE_PYTHON} -DOUT=${CMAKE_CURRENT_BINARY_DIR}/matrix_pinned
         -P ${CMAKE_CURRENT_SOURCE_DIR}/data/matrix/matrix_contract.cmake)
set_tests_properties(matrix_pinned_torch PROPERTIES LABELS "python" TIMEOUT 600)
