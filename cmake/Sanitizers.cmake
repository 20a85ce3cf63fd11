# SPDX-License-Identifier: MIT
# OPTLOG_SANITIZE: sanitizers for every target of the project, the workbench included, as the
# compiler's -fsanitize= takes them: "address,undefined" or "thread". Empty (the default): none.
# Libraries from Debian (LibTorch, Qt, oneDNN, SQLite) stay uninstrumented; ASan still sees their
# reads and writes of blocks optlog allocated through its interceptors. Every report stops the
# process (no recovery), so a test under a sanitizer fails on the first one.
set(OPTLOG_SANITIZE "" CACHE STRING "sanitizers for the whole build: address,undefined or thread; empty for none")
if(OPTLOG_SANITIZE)
  if(OPTLOG_SANITIZE MATCHES "thread" AND OPTLOG_SANITIZE MATCHES "address")
    message(FATAL_ERROR "OPTLOG_SANITIZE=${OPTLOG_SANITIZE}: ThreadSanitizer cannot be combined with "
                        "AddressSanitizer; build them in two build folders")
  endif()
  set(optlog_sanitize_flags -fsanitize=${OPTLOG_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_compile_options(${optlog_sanitize_flags})
  add_link_options(${optlog_sanitize_flags})
  message(STATUS "optlog: built with -fsanitize=${OPTLOG_SANITIZE}")
endif()
