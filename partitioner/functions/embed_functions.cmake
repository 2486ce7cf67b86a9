# Turns the function bodies in partitioner/functions (ONNX textual syntax)
# into one C file holding the table function_texts[] (function_expand.h), so
# the table can never drift from its sources: the build writes it, nobody
# edits it. In: OUT (the .c to write), SOURCES ('|'-separated .onnxtxt paths).
#
# Each file is named OP-SINCE.onnxtxt (several bodies for one op add a suffix:
# OP-SINCE-WHAT.onnxtxt) and starts with a line
#   # tessera: since=N [until=M] [domain=D] [when=ATTR:VALUE] [has=IN1,IN2] [lacks=IN3]
#               [hasattr=A1,A2] [lacksattr=A3] [rank=INPUT:R]
# saying for which opsets of the op it is valid and, for ops whose body
# depends on an attribute, an input's type or size (when=__type_X:N,
# when=__dim_X_A:N; when=ATTR:!VALUE negates) or on whether an optional
# input is given, for which value (docs/function-expansion.md).
#
# The text is embedded as bytes, as providers/opencl/embed_cl.cmake embeds
# kernels: no escaping to get wrong (quotes, backslashes, trigraphs), and the
# whole file, comments too, so parse errors give the file's line numbers.
string(REPLACE "|" ";" SOURCES "${SOURCES}")
# The first entry that applies is taken, so the order is part of the
# meaning: file names in byte order, whatever the caller's glob gave.
list(SORT SOURCES)

# A C string literal of s (metadata values are plain words; escape anyway).
function(c_string out s)
  string(REPLACE "\\" "\\\\" s "${s}")
  string(REPLACE "\"" "\\\"" s "${s}")
  set(${out} "\"${s}\"" PARENT_SCOPE)
endfunction()

set(body "/* Generated from the .onnxtxt files in partitioner/functions by embed_functions.cmake;\n")
string(APPEND body " * edit those files, not this one. */\n")
string(APPEND body "#include \"function_expand.h\"\n\n")
set(table "")
set(index 0)
foreach(src ${SOURCES})
  get_filename_component(base ${src} NAME)
  string(REGEX REPLACE "\\.onnxtxt$" "" base "${base}")
  string(REGEX REPLACE "-.*$" "" op "${base}")
  file(READ ${src} head LIMIT 4096)
  if(NOT head MATCHES "^# tessera:[ ]*([^\n]*)" OR CMAKE_MATCH_1 STREQUAL "")
    message(FATAL_ERROR "${src}: first line must be '# tessera: since=N ...'")
  endif()
  string(REGEX MATCHALL "[^ \t\r]+" kvs "${CMAKE_MATCH_1}")
  set(since 0)
  set(until 0)
  set(domain "")
  set(has "")
  set(lacks "")
  # Optional fields as designated initializers, in the struct's order; a key
  # given twice keeps its last value, lists (has=, lacks=) join.
  foreach(f when hasattr lacksattr rank)
    set(${f} "")
  endforeach()
  foreach(kv ${kvs})
    if(kv MATCHES "^since=(.*)$")
      set(since "${CMAKE_MATCH_1}")
    elseif(kv MATCHES "^until=(.*)$")
      set(until "${CMAKE_MATCH_1}")
    elseif(kv MATCHES "^domain=(.*)$")
      set(domain "${CMAKE_MATCH_1}")
    elseif(kv MATCHES "^when=([^:]*):(.*)$")
      c_string(wa "${CMAKE_MATCH_1}")
      c_string(wv "${CMAKE_MATCH_2}")
      set(when " .when_attr = ${wa}, .when_value = ${wv},")
    elseif(kv MATCHES "^has=(.*)$")
      # has= and lacks= may repeat; their lists join.
      if(has STREQUAL "")
        set(has "${CMAKE_MATCH_1}")
      else()
        set(has "${has},${CMAKE_MATCH_1}")
      endif()
    elseif(kv MATCHES "^lacks=(.*)$")
      if(lacks STREQUAL "")
        set(lacks "${CMAKE_MATCH_1}")
      else()
        set(lacks "${lacks},${CMAKE_MATCH_1}")
      endif()
    elseif(kv MATCHES "^hasattr=(.*)$")
      c_string(s "${CMAKE_MATCH_1}")
      set(hasattr " .has_attrs = ${s},")
    elseif(kv MATCHES "^lacksattr=(.*)$")
      c_string(s "${CMAKE_MATCH_1}")
      set(lacksattr " .lacks_attrs = ${s},")
    elseif(kv MATCHES "^rank=([^:]*):(.*)$")
      c_string(s "${CMAKE_MATCH_1}")
      set(rank " .rank_input = ${s}, .rank = ${CMAKE_MATCH_2},")
    else()
      message(FATAL_ERROR "${src}: unknown key '${kv}'")
    endif()
  endforeach()
  if(NOT since MATCHES "^[0-9]+$" OR NOT until MATCHES "^[0-9]+$")
    message(FATAL_ERROR "${src}: since= and until= must be numbers")
  endif()
  set(fields "${when}")
  if(NOT has STREQUAL "")
    c_string(s "${has}")
    string(APPEND fields " .has_inputs = ${s},")
  endif()
  if(NOT lacks STREQUAL "")
    c_string(s "${lacks}")
    string(APPEND fields " .lacks_inputs = ${s},")
  endif()
  string(APPEND fields "${hasattr}${lacksattr}${rank}")

  file(READ ${src} hex HEX)
  # A last line without its newline still ends in one, as every other does.
  if(NOT hex STREQUAL "" AND NOT hex MATCHES "0a$")
    string(APPEND hex "0a")
  endif()
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
  string(APPEND body "/* ${base}.onnxtxt */\nstatic const char text_${index}[] = {${hex}0x00};\n")
  c_string(d "${domain}")
  c_string(o "${op}")
  string(APPEND table "    {.domain = ${d}, .op_type = ${o}, .since = ${since}, .until = ${until},"
                      "${fields}\n     .file = \"functions/${base}.onnxtxt\", .text = text_${index}},\n")
  math(EXPR index "${index} + 1")
endforeach()
string(APPEND body "\nconst function_text function_texts[] = {\n${table}};\n\n")
string(APPEND body "const size_t function_text_count = sizeof function_texts / sizeof function_texts[0];\n")
# Written through a temporary so an unchanged table keeps its timestamp and
# nothing recompiles.
file(WRITE ${OUT}.tmp "${body}")
configure_file(${OUT}.tmp ${OUT} COPYONLY)
