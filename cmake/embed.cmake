# embed.cmake - turn a file into a C array:
#   cmake -DIN=file -DOUT=file.c -DNAME=symbol [-DLUA=ON | -DBINARY=ON] -P embed.cmake
# defines `const char NAME[]` (NUL-terminated) and `const size_t NAME_len`. With LUA=ON, comment
# lines and indentation are dropped (cls_lua compiles the program on every request, so less
# text is less work in the OSD). BINARY=ON takes the bytes as they are; an empty IN gives an
# empty array.
if(BINARY)
  set(hex "")
  if(IN)
    file(READ ${IN} hex HEX)
  endif()
  string(LENGTH "${hex}" len)
  math(EXPR len "${len} / 2")
else()
  file(READ ${IN} text)
  if(LUA)
    string(REGEX REPLACE "\n[ \t]*--[^\n]*" "\n" text "\n${text}")
    string(REGEX REPLACE "\n[ \t]+" "\n" text "${text}")
    string(REGEX REPLACE "\n\n+" "\n" text "${text}")
  endif()
  string(LENGTH "${text}" len)
  file(WRITE ${OUT}.tmp "${text}")
  file(READ ${OUT}.tmp hex HEX)
  file(REMOVE ${OUT}.tmp)
endif()
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n" hex "${hex}")
file(WRITE ${OUT} "/* generated from ${IN} by cmake/embed.cmake: do not edit */\n#include <stddef.h>\nconst char ${NAME}[] = {\n${hex}0};\nconst size_t ${NAME}_len = ${len};\n")
