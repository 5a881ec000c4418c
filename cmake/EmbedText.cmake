# Embed a text file in C++ as a char array, byte for byte (any content: no raw-string
# delimiter to collide with, no escaping). Run in script mode by a build step:
#
#   cmake -DINPUT=<file> -DOUTPUT=<header> -DNAMESPACE=<ns> -DNAME=<identifier> -P EmbedText.cmake
#
# The header defines `inline constexpr std::string_view <NAME>` in namespace <NAMESPACE>.
foreach(var INPUT OUTPUT NAMESPACE NAME)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "EmbedText.cmake: -D${var}=... is required")
  endif()
endforeach()

file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" digits)
math(EXPR size "${digits} / 2")
# 16 bytes a line: "0x23, 0x21, ..."
string(REPEAT "[0-9a-f][0-9a-f]" 16 line_pattern)
string(REGEX REPLACE "(${line_pattern})" "\\1\n" hex "${hex}")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1, " bytes "${hex}")
string(REGEX REPLACE ", \n" ",\n    " bytes "${bytes}")
string(REGEX REPLACE "[ \n]+$" "" bytes "${bytes}")

file(RELATIVE_PATH shown "${CMAKE_CURRENT_LIST_DIR}/.." "${INPUT}")
set(text "// Generated from ${shown} by cmake/EmbedText.cmake: edit that file, not this one.
#pragma once

#include <string_view>

namespace ${NAMESPACE} {

inline constexpr char ${NAME}_bytes[${size} + 1] = {
    ${bytes} 0x00};
inline constexpr std::string_view ${NAME}{${NAME}_bytes, ${size}};

}  // namespace ${NAMESPACE}
")
file(WRITE "${OUTPUT}" "${text}")
