# cmake -DCMD="a;b;c" -DEXPECT_RC=N [-DEXPECT_TEXT=...] -P expect_exit.cmake
execute_process(COMMAND ${CMD} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL EXPECT_RC)
  message(FATAL_ERROR "exit status ${rc}, expected ${EXPECT_RC}\n${out}${err}")
endif()
if(DEFINED EXPECT_TEXT AND NOT "${out}${err}" MATCHES "${EXPECT_TEXT}")
  message(FATAL_ERROR "output lacks '${EXPECT_TEXT}':\n${out}${err}")
endif()
