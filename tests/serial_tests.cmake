# Read by ctest after the discovered doctest cases (TEST_INCLUDE_FILES):
# test cases that measure the thread pool's scheduling run alone. With
# another test busy on the second of two CPUs, a worker woken for a burst is
# placed on the caller's CPU, where it goes back to sleep by design, try
# after try ("wake_for wakes sleeping workers" failed that way under
# ctest -j 2).
foreach(test IN LISTS edgemt_runtime_tests_TESTS)
  if(test MATCHES "^core/thread_pool: wake_for")
    set_tests_properties("${test}" PROPERTIES RUN_SERIAL TRUE)
  endif()
endforeach()
