# locksim_layer(NAME DEPS...): a static library from every .cpp in the calling directory,
# or an interface library while the directory has none. Include paths are rooted at the
# project root, so code includes "ss/avtab.h", "kernel/platform.h" and so on.
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
  # Extra labels go on the directory: a list does not survive gtest_discover_tests' PROPERTIES.
  if(ARG_LABELS)
    set_property(DIRECTORY APPEND PROPERTY LABELS ${ARG_LABELS})
  endif()
  # Executables whose tests run under ThreadSanitizer are what the tsan_tests target builds.
  if("tsan" IN_LIST ARG_LABELS)
    add_dependencies(tsan_tests ${name}_tests)
  endif()
  include(GoogleTest)
  gtest_discover_tests(${name}_tests DISCOVERY_MODE PRE_TEST PROPERTIES LABELS ${name}
    DISCOVERY_TIMEOUT 60)
endfunction()

# locksim_area_subdirectories(): adds every subdirectory of the calling directory that has a
# CMakeLists.txt (tests/<area>, bench/<area>).
function(locksim_area_subdirectories)
  file(GLOB areas LIST_DIRECTORIES true ${CMAKE_CURRENT_SOURCE_DIR}/*)
  foreach(area ${areas})
    if(IS_DIRECTORY ${area} AND EXISTS ${area}/CMakeLists.txt)
      add_subdirectory(${area})
    endif()
  endforeach()
endfunction()
