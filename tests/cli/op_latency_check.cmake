# Runs a scenario and checks, from its results, that operations ran and what they cost in
# simulated time (deterministic: not a host timing):
#   cmake -DLOCKSIM=... -DSCENARIO=... -DOUT=... "-DCHECKS=op:field:least;..." -P op_latency_check.cmake
# Each check asks that run 0 completed `op` at least once and that its latency_ns `field`
# (min, p50, max...) is at least `least` ns.
execute_process(COMMAND ${LOCKSIM} run ${SCENARIO} -q -o ${OUT} RESULT_VARIABLE rc
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "locksim run failed (${rc}): ${err}")
endif()
file(READ ${OUT}/results.json json)
foreach(check ${CHECKS})
  string(REPLACE ":" ";" parts "${check}")
  list(GET parts 0 op)
  list(GET parts 1 field)
  list(GET parts 2 least)
  string(JSON done ERROR_VARIABLE missing GET "${json}" runs 0 detail ops ${op} completed)
  if(missing)
    message(FATAL_ERROR "${op}: not in the results (${missing})")
  endif()
  string(JSON value GET "${json}" runs 0 detail ops ${op} latency_ns ${field})
  message(STATUS "${op}: ${done} done, ${field} ${value} ns")
  if(done LESS 1 OR value LESS least)
    message(FATAL_ERROR "${op}: ${done} done, ${field} ${value} ns, less than ${least} ns")
  endif()
endforeach()
