# Runs a scenario of syscalls and aim7 on a policy whose classes are not the kernel's and checks
# that their file and directory operations ran and searched the policy: each completed, and its
# median took at least 100 ns of simulated time (a check of class 0 with no permission, what
# they did before stand-ins, took 4 to 8 ns). aim7's exec, on the policy's process class, runs.
#   cmake -DLOCKSIM=... -DSCENARIO=... -DOUT=... -P classless_check.cmake
execute_process(COMMAND ${LOCKSIM} run ${SCENARIO} -q -o ${OUT} RESULT_VARIABLE rc
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "locksim run failed (${rc}): ${err}")
endif()
file(READ ${OUT}/results.json json)
foreach(op syscalls.read_write syscalls.open_stat aim7.creat aim7.read_write aim7.exec)
  set(least 100)
  if(op STREQUAL "aim7.exec")
    set(least 1)
  endif()
  string(JSON done ERROR_VARIABLE missing GET "${json}" runs 0 detail ops ${op} completed)
  if(missing)
    message(FATAL_ERROR "${op}: not in the results (${missing})")
  endif()
  string(JSON p50 GET "${json}" runs 0 detail ops ${op} latency_ns p50)
  message(STATUS "${op}: ${done} done, p50 ${p50} ns")
  if(done LESS 1 OR p50 LESS least)
    message(FATAL_ERROR "${op}: ${done} done, p50 ${p50} ns: it checked nothing")
  endif()
endforeach()
