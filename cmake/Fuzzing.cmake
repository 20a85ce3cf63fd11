# SPDX-License-Identifier: MIT
# OPTLOG_FUZZ: a build folder of its own that holds only the fuzzers (tests/fuzz) and the core they
# reach, with clang's libFuzzer under AddressSanitizer and UndefinedBehaviorSanitizer:
#   cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 -DOPTLOG_FUZZ=ON
# Every file of that folder is compiled with coverage for libFuzzer (fuzzer-no-link) and the
# sanitizers; only the fuzzers link libFuzzer's main. Every report stops the fuzzer.
option(OPTLOG_FUZZ "build only the fuzzers (tests/fuzz), with clang, ASan and UBSan" OFF)
if(OPTLOG_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "OPTLOG_FUZZ needs clang's libFuzzer, but the compiler is ${CMAKE_CXX_COMPILER_ID}: "
                        "configure a new build folder with -DCMAKE_CXX_COMPILER=clang++-14")
  endif()
  if(OPTLOG_SANITIZE)
    message(FATAL_ERROR "OPTLOG_FUZZ brings its own sanitizers (address,undefined); leave OPTLOG_SANITIZE empty")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  set(OPTLOG_BUILD_GUI OFF CACHE BOOL "" FORCE)
  set(OPTLOG_BUILD_TESTS OFF CACHE BOOL "" FORCE)
  message(STATUS "optlog: only the fuzzers, with -fsanitize=fuzzer,address,undefined")
endif()
