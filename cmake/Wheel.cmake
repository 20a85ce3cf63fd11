# SPDX-License-Identifier: MIT
# What the Python wheel installs (pyproject.toml builds with OPTLOG_WHEEL=ON and installs only this
# component): the CLI and its engine in the package's folder optlog/_bin, where the console script
# `optlog` (app/python/optlog/_binary.py) finds them and `optlog` finds its engine beside it
# (installedEngine). The Python module itself is copied by scikit-build-core (wheel.packages).
if(NOT OPTLOG_WITH_ENGINE)
  message(FATAL_ERROR "optlog: the wheel is the engine for the environment that holds torch: "
                      "configure it with OPTLOG_WITH_ENGINE=ON")
endif()
set(optlog_wheel_bin optlog/_bin)
install(TARGETS optlog optlog-engine RUNTIME DESTINATION ${optlog_wheel_bin} COMPONENT wheel)
# The engine finds the environment's LibTorch from where pip puts both packages: optlog/_bin and
# torch/lib side by side in one site-packages. No LD_LIBRARY_PATH, no path of the build machine.
# It links CUDA's runtime too, which torch's nvidia-* packages hold in folders that vary with the
# CUDA version (nvidia/cu13/lib for 2.11's): libtorch_cuda's own run path names them from torch/lib,
# and so from optlog/_bin, as deep in site-packages.
set(optlog_wheel_rpath "$ORIGIN/../../torch/lib")
foreach(library libtorch_cuda.so libtorch_cpu.so)
  if(EXISTS ${TORCH_INSTALL_PREFIX}/lib/${library})
    execute_process(COMMAND ${CMAKE_OBJDUMP} -p ${TORCH_INSTALL_PREFIX}/lib/${library} OUTPUT_VARIABLE dynamic)
    if(dynamic MATCHES "R(UN)?PATH +([^\n]+)")
      string(REPLACE ":" ";" entries "${CMAKE_MATCH_2}")
      foreach(entry ${entries})
        string(FIND "${entry}" "$ORIGIN/../../" at)
        if(at EQUAL 0)
          list(APPEND optlog_wheel_rpath "${entry}")
        endif()
      endforeach()
    endif()
  endif()
endforeach()
list(REMOVE_DUPLICATES optlog_wheel_rpath)
message(STATUS "optlog: the wheel's engine finds LibTorch at ${optlog_wheel_rpath}")
set_target_properties(optlog-engine PROPERTIES INSTALL_RPATH "${optlog_wheel_rpath}")
