# locksim_layer(NAME DEPS...): a static library from every .cpp in the calling directory,
# or an interface library while the directory has none. Include paths are rooted at the
# project root, so code includes "ss/avtab.h", "kernel/kernel.h" and so on.
function(locksim_layer name)
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  if(sources)
    add_library(${name} STATIC ${sources})
    target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
    target_link_libraries(${name} PUBLIC ${ARGN})
  else()
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${name} INTERFACE ${ARGN})
  endif()
endfunction()

# locksim_test_dir(NAME LIBS... [LABELS extra...]): one GoogleTest executable from every
# *_test.cpp in the calling directory, each test registered with CTest under the label NAME
# (and the extra labels, e.g. `tsan` for the tests scripts/test.sh also runs under
# ThreadSanitizer).
function(locksim_test_dir name)
  cmake_parse_arguments(ARG "" "" "LABELS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cpp)
  if(NOT sources)
    return()
  endif()
  add_executable(${name}_tests ${sources})
  target_link_libraries(${name}_tests PRIVATE ${ARG_UNPARSED_ARGUMENTS} GTest::gtest_main)
  target_compile_definitions(${name}_tests PRIVATE
    LOCKSIM_POLICY_DIR="${LOCKSIM_POLICY_DIR}"
    LOCKSIM_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    LOCKSIM_BINARY_DIR="${PROJECT_BINARY_DIR}")
  set(labels ${name} ${ARG_LABELS})
  include(GoogleTest)
  gtest_discover_tests(${name}_tests DISCOVERY_MODE PRE_TEST PROPERTIES LABELS "${labels}"
    DISCOVERY_TIMEOUT 60)
endfunction()
