# redist_plan_scale_streamed_equal: redist-plan's statistics evaluated one step at a time
# (--materialise-max 0) equal those of the materialised schedule, for each product strategy and
# all-at-once, with and without limits.
set(problem --2d 300,200 --a 3,2,8,16 --b 5,7,8,8)
foreach(schedule stepwise caterpillar circulant greedy all-at-once)
  foreach(limits "" "--max-concurrent;5" "--max-memory;800")
    if(schedule STREQUAL "all-at-once" AND NOT limits STREQUAL "")
      continue()
    endif()
    execute_process(COMMAND ${EXE} ${problem} --schedule ${schedule} ${limits}
                    OUTPUT_VARIABLE built RESULT_VARIABLE rc1)
    execute_process(COMMAND ${EXE} ${problem} --schedule ${schedule} ${limits} --materialise-max 0
                    OUTPUT_VARIABLE streamed RESULT_VARIABLE rc2)
    string(REGEX REPLACE "scale:[^\n]*\n" "" built "${built}")
    if(NOT streamed MATCHES "scale: +evaluated one step at a time")
      message(FATAL_ERROR "${schedule} ${limits}: not streamed:\n${streamed}")
    endif()
    string(REGEX REPLACE "scale:[^\n]*\n" "" streamed "${streamed}")
    if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0 OR NOT built STREQUAL streamed)
      message(FATAL_ERROR "${schedule} ${limits}: built\n${built}\nstreamed\n${streamed}")
    endif()
  endforeach()
endforeach()
message(STATUS "streamed statistics equal the built ones")
