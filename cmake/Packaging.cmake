# SPDX-License-Identifier: MIT
# What `cmake --install` puts where, and the Debian packages CPack builds from it
# (`cmake --build build --target package`, or `packaging/setup.sh package`): `optlog`, everything
# but the engine (the CLI without LibTorch, the workbench, the manual pages, presets, the Python
# client), and `optlog-engine`, the engine (app/CMakeLists.txt installs it into its component),
# which depends on LibTorch and on `optlog`. A build without the engine packages `optlog` alone.
include(GNUInstallDirs)

set(optlog_desktop ${CMAKE_SOURCE_DIR}/packaging/desktop)
set(optlog_id io.github.optlog.Workbench)

# Presets and study plans, read by the installed binaries from ../share/optlog (presets.cpp)
# before their embedded copies: a user can read and copy them.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/resources/presets ${CMAKE_SOURCE_DIR}/resources/studies
        DESTINATION ${CMAKE_INSTALL_DATADIR}/optlog FILES_MATCHING PATTERN "*.toml")

# The Python client of `optlog record` (app/python/optlog), where Debian's python3 finds it
# ("import optlog" with no path set), the example trainer that uses it, and the same model scripted.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/app/python/optlog DESTINATION lib/python3/dist-packages
        FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
# The sdist (pyproject.toml), which `optlog host setup` sends to a host and builds there against the
# torch it trains with. Made by an interpreter that has its build tools (packaging/setup.sh sets one
# up), again whenever the tree changes (packaging/wheel/sdist.sh); without one the package carries
# none, and `host setup` then asks for --wheel or --sdist.
set(OPTLOG_SDIST_PYTHON "" CACHE FILEPATH "an interpreter with scikit-build-core and build, which make the sdist the optlog package carries")
if(OPTLOG_SDIST_PYTHON)
  add_custom_target(optlog_sdist ALL
    COMMAND bash ${CMAKE_SOURCE_DIR}/packaging/wheel/sdist.sh ${OPTLOG_SDIST_PYTHON} ${CMAKE_BINARY_DIR}/sdist
    COMMENT "optlog: the sdist, where the tree changed")
  install(DIRECTORY ${CMAKE_BINARY_DIR}/sdist/ DESTINATION ${CMAKE_INSTALL_DATADIR}/optlog/python
          FILES_MATCHING PATTERN "optlog-*.tar.gz")
endif()
install(FILES ${CMAKE_SOURCE_DIR}/resources/examples/pytorch/train.py
        DESTINATION ${CMAKE_INSTALL_DATADIR}/optlog/examples/pytorch)
# The TorchScript examples for model.source = "torchscript"; script_model.py finds the GPT in ../pytorch.
install(FILES ${CMAKE_SOURCE_DIR}/resources/examples/torchscript/script_model.py
              ${CMAKE_SOURCE_DIR}/resources/examples/torchscript/rotary.py
              ${CMAKE_SOURCE_DIR}/resources/examples/torchscript/moe.py
        DESTINATION ${CMAKE_INSTALL_DATADIR}/optlog/examples/torchscript)

# The manual pages, compressed as Debian's policy asks (-n: no time stamp, reproducible).
foreach(page ${OPTLOG_MAN_PAGES})
  add_custom_command(OUTPUT ${page}.gz COMMAND gzip -9n -c ${page} > ${page}.gz DEPENDS ${page})
  list(APPEND optlog_compressed_pages ${page}.gz)
endforeach()
add_custom_target(optlog_manpages_gz ALL DEPENDS ${optlog_compressed_pages})
install(FILES ${optlog_compressed_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

if(OPTLOG_BUILD_GUI)
  install(FILES ${optlog_desktop}/${optlog_id}.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
  install(FILES ${optlog_desktop}/${optlog_id}.metainfo.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
  install(FILES ${optlog_desktop}/${optlog_id}.mime.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages
          RENAME ${optlog_id}.xml)
  install(FILES ${optlog_desktop}/${optlog_id}.svg DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
  # Rendered from the SVG with rsvg-convert (librsvg2-bin): packaging/desktop/README.md says how.
  foreach(size 48 64 128 256)
    install(FILES ${optlog_desktop}/png/${size}x${size}/${optlog_id}.png
            DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps)
  endforeach()
endif()
install(FILES ${CMAKE_SOURCE_DIR}/packaging/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})

execute_process(COMMAND git rev-parse --short HEAD WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
                OUTPUT_VARIABLE optlog_commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME optlog)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
if(optlog_commit)
  set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION}+git${optlog_commit})
endif()
set(CPACK_PACKAGE_CONTACT "The optlog developers <optlog@example.org>")
# A native package's changelog, as Debian's policy asks: one entry for this build.
string(TIMESTAMP optlog_changelog_date "%a, %d %b %Y %H:%M:%S +0000" UTC)
configure_file(${CMAKE_SOURCE_DIR}/packaging/changelog.in ${CMAKE_BINARY_DIR}/packaging/changelog @ONLY)
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/packaging/changelog.gz
  COMMAND gzip -9n -c ${CMAKE_BINARY_DIR}/packaging/changelog > ${CMAKE_BINARY_DIR}/packaging/changelog.gz
  DEPENDS ${CMAKE_BINARY_DIR}/packaging/changelog)
add_custom_target(optlog_changelog ALL DEPENDS ${CMAKE_BINARY_DIR}/packaging/changelog.gz)
install(FILES ${CMAKE_BINARY_DIR}/packaging/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})
if(OPTLOG_WITH_ENGINE) # each package has its own, as Debian's policy asks
  install(FILES ${CMAKE_SOURCE_DIR}/packaging/copyright ${CMAKE_BINARY_DIR}/packaging/changelog.gz
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/optlog-engine COMPONENT engine)
endif()
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEB_COMPONENT_INSTALL ON)
# The shared libraries' packages, as dpkg-shlibdeps finds them, for each package.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)

# Each package's description: its first line is its synopsis (CPack prepends no summary where
# CPACK_PACKAGE_DESCRIPTION_SUMMARY is left to its default).
set(CPACK_COMPONENTS_ALL optlog)
set(CPACK_DEBIAN_OPTLOG_PACKAGE_NAME optlog)
set(CPACK_COMPONENT_OPTLOG_DESCRIPTION "workbench for memory and precision techniques in transformer training
optlog compares memory and precision techniques for training a small
transformer language model (FP32, gradient accumulation, autocast BF16,
master weights, activation checkpointing) on quality, speed and memory by
role, predicted beside measured, in one SQLite study file. This package holds
the Qt workbench optlog-workbench and the command line optlog: they design
studies, follow runs on other machines over SSH or on Slurm, compare them and
write reports, without LibTorch. Training on this machine needs optlog-engine.")
# Runs on another machine go over OpenSSH's client (docs/remote.md).
set(CPACK_DEBIAN_OPTLOG_PACKAGE_RECOMMENDS "openssh-client")
# `import optlog` in a PyTorch training script; the example trainer needs torch too.
set(CPACK_DEBIAN_OPTLOG_PACKAGE_SUGGESTS "optlog-engine, python3, python3-torch")
if(OPTLOG_WITH_ENGINE)
  list(APPEND CPACK_COMPONENTS_ALL engine)
  set(CPACK_DEBIAN_ENGINE_PACKAGE_NAME optlog-engine)
  set(CPACK_DEBIAN_ENGINE_PACKAGE_SECTION science)
  # OpenBLAS's pthread build as well, which LibTorch does not link by name but without which FP32
  # runs about 20x slower; and the commands it hands the work of, of exactly this build.
  set(CPACK_DEBIAN_ENGINE_PACKAGE_DEPENDS "optlog (= ${CPACK_PACKAGE_VERSION}), libopenblas0-pthread")
  # The default corpus.
  set(CPACK_DEBIAN_ENGINE_PACKAGE_RECOMMENDS "fortunes-min")
  set(CPACK_COMPONENT_ENGINE_DESCRIPTION "optlog's engine: trains and measures with LibTorch
optlog-engine trains the runs of optlog's studies with LibTorch (the byte-level
GPT or your TorchScript model), measures memory by role, the machine's matmul
peak and its best threads, and quantizes final weights. optlog run, study,
tune, fit, estimate and quantize hand their work to it.")
endif()
include(CPack)
