# SPDX-License-Identifier: MIT
# LibTorch: Debian's (1.13, CPU) or PyTorch's own (a `torch` wheel's, 2.x, with CUDA), whichever
# CMAKE_PREFIX_PATH names first (docs/building.md).
# The wheel (pyproject.toml) links the torch of the environment it builds in: that torch's CMake
# files go first, or its TorchConfig would take a system LibTorch's Caffe2 targets (Debian's 1.13,
# beside libtorch-dev), searched before the folder it names.
if(OPTLOG_WHEEL)
  execute_process(COMMAND "${Python_EXECUTABLE}" -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
                  OUTPUT_VARIABLE optlog_torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE failed)
  if(failed)
    message(FATAL_ERROR "optlog: ${Python_EXECUTABLE} has no torch: the wheel links the torch of the "
                        "environment it builds in (pip install torch there, then --no-build-isolation)")
  endif()
  list(PREPEND CMAKE_PREFIX_PATH "${optlog_torch_prefix}")
endif()
find_package(Torch REQUIRED)

# TorchConfig.cmake looks for libc10 (and libtorch, for its message) with find_library, which
# searches the system's folders before the config's own: beside Debian's libtorch-dev, a wheel's
# config links Debian's 1.13 libc10 under its 2.x headers. Take the libraries beside the config.
foreach(variable c10_LIBRARY TORCH_LIBRARY)
  string(REGEX REPLACE "_LIBRARY$" "" name "${variable}")
  string(TOLOWER "${name}" name)
  set(own "${TORCH_INSTALL_PREFIX}/lib/lib${name}.so")
  if(EXISTS "${own}" AND NOT "${${variable}}" STREQUAL "${own}")
    list(FIND TORCH_LIBRARIES "${${variable}}" at)
    if(at GREATER -1)
      list(REMOVE_AT TORCH_LIBRARIES ${at})
      list(INSERT TORCH_LIBRARIES ${at} "${own}")
    endif()
    set(${variable} "${own}" CACHE FILEPATH "LibTorch's lib${name}, beside its config" FORCE)
  endif()
endforeach()

set(OPTLOG_TORCH_CUDA OFF)
if(TARGET torch_cuda OR TORCH_CUDA_LIBRARIES)
  set(OPTLOG_TORCH_CUDA ON)
endif()
message(STATUS "optlog: LibTorch ${Torch_VERSION} from ${TORCH_INSTALL_PREFIX} (CUDA: ${OPTLOG_TORCH_CUDA})")

# What links LibTorch links this target. A wheel's libtorch.so and libc10.so carry parts of
# libstdc++ built in (std::filesystem among them, unversioned) and export them, and the dynamic
# linker binds each symbol to the first library in the executable's search order that defines it:
# with libstdc++ named after them, optlog's std::filesystem::remove_all ran the wheel's copy, which
# jumped to address 0 (`optlog tune`, issue 70). libstdc++ is named first, before every other
# library, so that each std:: symbol binds to the system's (tests/integration/bindings.sh holds it).
add_library(optlog_torch INTERFACE)
target_link_options(optlog_torch INTERFACE "LINKER:--push-state,--no-as-needed,-lstdc++,--pop-state")
target_link_libraries(optlog_torch INTERFACE ${TORCH_LIBRARIES})
target_include_directories(optlog_torch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})

# LibTorch's headers are most of the compile time of an engine object that includes them
# (trainer.cpp: 21 s, 11 s with them precompiled; Debian's LibTorch on an idle 2-core EPYC), so
# they are precompiled once per set of compile flags and included first in every object of the
# targets below. ATen.h only: it is what costs, and loading a larger header set (torch/nn, optim,
# serialize: 530 MB rather than 340) took 4 s rather than 1.8 from every object, which gained back
# less than that. The same headers in both LibTorches; none of optlog's own, which change with
# every commit.
set(OPTLOG_TORCH_PRECOMPILED <ATen/ATen.h> <ATen/Parallel.h>)
# optlog_precompile_torch(TARGET) precompiles them for TARGET; optlog_precompile_torch(TARGET FROM
# OWNER) reuses OWNER's. OWNER must compile with the same code generation flags: GCC ignores a header
# precompiled with another -fPIC setting (what links Qt has it, the engine library has not) and
# parses everything again (-Winvalid-pch says so in the build's output).
function(optlog_precompile_torch target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "FROM" "")
  if(arg_FROM)
    set_target_properties(${target} PROPERTIES PRECOMPILE_HEADERS_REUSE_FROM ${arg_FROM})
  else()
    target_precompile_headers(${target} PRIVATE ${OPTLOG_TORCH_PRECOMPILED})
  endif()
  # moc's file of a test includes no LibTorch header: loading the precompiled ones is all it would do.
  set_source_files_properties(${CMAKE_CURRENT_BINARY_DIR}/${target}_autogen/mocs_compilation.cpp
                              PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
endfunction()
