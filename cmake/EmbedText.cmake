# Embed a text file in C++ as a char array, byte for byte (any content: no raw-string
# delimiter to collide with, no escaping). Run in script mode by a build step:
#
#   cmake -DINPUT=<file> [-DJOIN=<file>] -DOUTPUT=<header> -DNAMESPACE=<ns> -DNAME=<identifier> -P EmbedText.cmake
#
# The header defines `inline constexpr std::string_view <NAME>` in namespace <NAMESPACE>.
# JOIN: a second part, appended from the line after its first line starting "# @JOIN@" (what
# stands above that line, such as imports naming what it takes from INPUT, is left out): one
# text kept in two files, each short enough to read.
cmake_minimum_required(VERSION 3.22)  # today's policies in script mode: "@JOIN@" is text, not a variable
foreach(var INPUT OUTPUT NAMESPACE NAME)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "EmbedText.cmake: -D${var}=... is required")
  endif()
endforeach()

file(READ "${INPUT}" hex HEX)
set(shown_join "")
set(edit "that file")
if(DEFINED JOIN)
  file(READ "${JOIN}" join_text)
  string(FIND "${join_text}" "\n# @JOIN@" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "EmbedText.cmake: ${JOIN} has no line starting \"# @JOIN@\"")
  endif()
  math(EXPR at "${at} + 1")
  string(SUBSTRING "${join_text}" ${at} -1 marker_on)
  string(FIND "${marker_on}" "\n" eol)
  math(EXPR offset "${at} + ${eol} + 1")
  file(READ "${JOIN}" join_hex OFFSET ${offset} HEX)
  string(APPEND hex "${join_hex}")
  file(RELATIVE_PATH shown_join "${CMAKE_CURRENT_LIST_DIR}/.." "${JOIN}")
  set(shown_join " and ${shown_join}")
  set(edit "those files")
endif()
string(LENGTH "${hex}" digits)
math(EXPR size "${digits} / 2")
# 16 bytes a line: "0x23, 0x21, ..."
string(REPEAT "[0-9a-f][0-9a-f]" 16 line_pattern)
string(REGEX REPLACE "(${line_pattern})" "\\1\n" hex "${hex}")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1, " bytes "${hex}")
string(REGEX REPLACE ", \n" ",\n    " bytes "${bytes}")
string(REGEX REPLACE "[ \n]+$" "" bytes "${bytes}")

file(RELATIVE_PATH shown "${CMAKE_CURRENT_LIST_DIR}/.." "${INPUT}")
set(text "// Generated from ${shown}${shown_join} by cmake/EmbedText.cmake: edit ${edit}, not this one.
#pragma once

#include <string_view>

namespace ${NAMESPACE} {

inline constexpr char ${NAME}_bytes[${size} + 1] = {
    ${bytes} 0x00};
inline constexpr std::string_view ${NAME}{${NAME}_bytes, ${size}};

}  // namespace ${NAMESPACE}
")
file(WRITE "${OUTPUT}" "${text}")
