# Install and export rules: `find_package(recompdiag CONFIG [COMPONENTS ...])` gives
# recompdiag::core, recompdiag::reports, recompdiag::prometheus, recompdiag::probes and
# recompdiag::monitor (what a trainer links); the `recompdiag` tool and the Grafana dashboard are
# installed beside them. Included once from the top-level CMakeLists.txt, after every target
# exists.
#
# One export file per component, so that the package config finds a dependency only for the
# components asked for: LibTorch only for probes/monitor, prometheus-cpp only for prometheus.
# Every file also belongs to the install component of the same name (`cmake --install build
# --component reports`), so that a machine without LibTorch installs core and reports alone: they
# hold the `recompdiag` front end, which runs `compare` and `bench compare`. The `trainer`
# component holds recompdiag-trainer (LibTorch), which the front end execs for every other
# command; docs/components.md lists what each component needs.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(RECOMPDIAG_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/recompdiag)
function(recompdiag_install_component component)
  install(TARGETS ${ARGN}
    EXPORT recompdiag-${component}-targets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT ${component}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT ${component}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT ${component}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT recompdiag-${component}-targets NAMESPACE recompdiag::
    DESTINATION ${RECOMPDIAG_CMAKE_DIR} COMPONENT ${component})
endfunction()
recompdiag_install_component(core recompdiag_core)
recompdiag_install_component(reports recompdiag_reports)
recompdiag_install_component(prometheus recompdiag_prometheus)
if(RECOMPDIAG_WITH_TORCH)
  recompdiag_install_component(probes recompdiag_probes recompdiag_monitor)
endif()

# reports/include also holds the exporter's header (prometheus_exporter.h): it declares a
# torch-free interface, so it travels with the reports headers.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/lib/include/recompdiag
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT core FILES_MATCHING PATTERN "*.h")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/reports/include/recompdiag
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT reports FILES_MATCHING PATTERN "*.h")
# The front end needs core and reports only; what it execs for training needs LibTorch.
install(TARGETS recompdiag RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT reports)
if(RECOMPDIAG_WITH_TORCH)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/probes/include/recompdiag
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT probes FILES_MATCHING PATTERN "*.h")
  install(TARGETS recompdiag_trainer_tool
    RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/recompdiag COMPONENT trainer)
endif()
# The package components this build installs (probes only with LibTorch), for the config.
set(RECOMPDIAG_PACKAGE_COMPONENTS core reports prometheus)
if(RECOMPDIAG_WITH_TORCH)
  list(APPEND RECOMPDIAG_PACKAGE_COMPONENTS probes)
endif()
install(FILES ${PROJECT_SOURCE_DIR}/reports/grafana/recompdiag.json
  DESTINATION ${CMAKE_INSTALL_DATADIR}/recompdiag/grafana COMPONENT prometheus)
install(FILES ${PROJECT_BINARY_DIR}/lib/generated/recompdiag/core/version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/recompdiag/core COMPONENT core)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/recompdiagConfig.cmake.in
  ${PROJECT_BINARY_DIR}/recompdiagConfig.cmake INSTALL_DESTINATION ${RECOMPDIAG_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/recompdiagConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/recompdiagConfig.cmake
              ${PROJECT_BINARY_DIR}/recompdiagConfigVersion.cmake
  DESTINATION ${RECOMPDIAG_CMAKE_DIR} COMPONENT core)
