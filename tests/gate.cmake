# ctest registrations for flce gate (included from tests/CMakeLists.txt when the Python oracles are built)
