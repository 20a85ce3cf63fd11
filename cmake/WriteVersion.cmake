# SPDX-License-Identifier: MIT
# Writes optlog_version.h with the project's version and the commit being built, at build time,
# so that `optlog --version` and every report name the commit the binary was built from (a
# configure-time `git describe` goes stale with each commit). configure_file() rewrites the header
# only when its text changes, so an unchanged commit rebuilds nothing.
# Inputs: IN, OUT, SOURCE_DIR, PROJECT_VERSION.
execute_process(COMMAND git describe --always --dirty --tags
                WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE OPTLOG_GIT_DESCRIBE OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET)
if(NOT OPTLOG_GIT_DESCRIBE)
  set(OPTLOG_GIT_DESCRIBE "unknown")
endif()
configure_file(${IN} ${OUT} @ONLY)
