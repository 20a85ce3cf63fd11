# SPDX-License-Identifier: MIT
# optlog_own_headers(<target>): the target, and every target that links it, includes this folder's
# headers by their path from the source root ("core/store/store.h"); no other target can.
#
# The source root itself is on no include path. Each target publishes a folder of its own in the
# build tree holding one link, <path from the root> -> this source folder, so an include reaches
# exactly the floors a target links. An include of a floor the CMakeLists does not allow fails to
# compile ("No such file or directory"): the dependency rule is enforced, not only written down.
function(optlog_own_headers target)
  file(RELATIVE_PATH folder ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  set(root ${CMAKE_BINARY_DIR}/include/${target})
  get_filename_component(parent ${root}/${folder} DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  file(CREATE_LINK ${CMAKE_CURRENT_SOURCE_DIR} ${root}/${folder} SYMBOLIC)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    target_include_directories(${target} INTERFACE ${root})
  else()
    target_include_directories(${target} PUBLIC ${root})
  endif()
endfunction()
