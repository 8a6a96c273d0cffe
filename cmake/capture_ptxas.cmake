# Compiler launcher of the CUDA kernels' compile (cmake/cuda.cmake):
#   cmake -DREPORT=FILE -P capture_ptxas.cmake -- COMPILER ARGS...
# runs the compile, writes ptxas's resource report (--resource-usage: registers, stack and spills
# per kernel) to FILE for ptxas_registers_test, passes every other line of its output through, and
# fails when the compile fails.
set(_cmd)
set(_after OFF)
math(EXPR _last "${CMAKE_ARGC} - 1")
foreach(_i RANGE ${_last})
  if(_after)
    list(APPEND _cmd "${CMAKE_ARGV${_i}}")
  elseif("${CMAKE_ARGV${_i}}" STREQUAL "--")
    set(_after ON)
  endif()
endforeach()
if(NOT REPORT OR "${_cmd}" STREQUAL "")
  message(FATAL_ERROR "usage: cmake -DREPORT=FILE -P capture_ptxas.cmake -- COMPILER ARGS...")
endif()
execute_process(COMMAND ${_cmd} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
# ptxas's lines carry no ';' (mangled names): safe as list elements. The rest is kept as text.
set(_all "${_out}${_err}")
string(REGEX MATCHALL "ptxas info[^\n]*|[^\n]*bytes stack frame[^\n]*" _report_lines "${_all}")
list(JOIN _report_lines "\n" _report)
string(REGEX REPLACE "(ptxas info|[^\n]*bytes stack frame)[^\n]*\n?" "" _rest "${_all}")
string(STRIP "${_rest}" _rest)
get_filename_component(_dir "${REPORT}" DIRECTORY)
file(MAKE_DIRECTORY "${_dir}")
file(WRITE "${REPORT}" "${_report}\n")
if(NOT _rest STREQUAL "")
  message(NOTICE "${_rest}")
endif()
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "compile failed (${_rc})")
endif()
