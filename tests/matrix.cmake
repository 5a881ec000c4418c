# ctest registrations for flce matrix (included from tests/CMakeLists.txt when the Python oracles are built)
