# ctest registrations for flce repro (included from tests/CMakeLists.txt when the Python oracles are built)
