# ctest registration for flce bisect and --subject-git (included from tests/CMakeLists.txt
# when the Python oracles are built): a scratch repository of a plug-in, bisected eager-only.
add_test(NAME bisect_git COMMAND ${CMAKE_COMMAND} -DFLCE=$<TARGET_FILE:flce> -DSRC=${CMAKE_SOURCE_DIR}
         -DOUT=${CMAKE_CURRENT_BINARY_DIR}/bisect_git -P ${CMAKE_CURRENT_SOURCE_DIR}/data/bisect/bisect_contract.cmake)
set_tests_properties(bisect_git PROPERTIES LABELS "python" TIMEOUT 600)
