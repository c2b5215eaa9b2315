# ctest helper: runs EXE with the arguments after `-P <this file>` and passes only when the program fails
# cleanly: exit status 1..125 (not a signal, not a timeout), stderr starting a line with "<PREFIX>: ",
# and no AddressSanitizer/UndefinedBehaviorSanitizer report.
#   cmake -DEXE=/path/mace_run -DPREFIX=mace_run -P expect_error_exit.cmake [args...]
set(args)
set(after_script OFF)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE 1 ${last})
  if(after_script)
    list(APPEND args "${CMAKE_ARGV${i}}")
  elseif(CMAKE_ARGV${i} STREQUAL "-P")
    math(EXPR next "${i} + 1")
    set(skip ${next})
  endif()
  if(DEFINED skip AND i EQUAL skip)
    set(after_script ON)
  endif()
endforeach()

execute_process(COMMAND ${EXE} ${args}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 50)
message(STATUS "command: ${EXE} ${args}\nexit: ${rc}\nstdout:\n${out}\nstderr:\n${err}")
if(NOT rc MATCHES "^[0-9]+$")
  message(FATAL_ERROR "expected a clean error exit, got: ${rc}")
endif()
if(rc EQUAL 0 OR rc GREATER 125)
  message(FATAL_ERROR "expected exit status 1..125, got ${rc}")
endif()
if(err MATCHES "AddressSanitizer|LeakSanitizer|runtime error:")
  message(FATAL_ERROR "sanitizer report in stderr")
endif()
if(NOT err MATCHES "(^|\n)${PREFIX}: ")
  message(FATAL_ERROR "expected an error message starting with '${PREFIX}: ' on stderr")
endif()
