# ctest registrations for flce campaign (included from tests/CMakeLists.txt when the Python oracles are built)
