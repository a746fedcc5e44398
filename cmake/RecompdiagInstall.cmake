# Install and export rules: `find_package(recompdiag CONFIG [COMPONENTS ...])` gives
# recompdiag::core, recompdiag::reports, recompdiag::prometheus, recompdiag::probes and
# recompdiag::monitor (what a trainer links); the `recompdiag` tool and the Grafana dashboard are
# installed beside them. Included once from the top-level CMakeLists.txt, after every target
# exists.
#
# One export file per component, so that the package config finds a dependency only for the
# components asked for: LibTorch only for probes/monitor, prometheus-cpp only for prometheus.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(RECOMPDIAG_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/recompdiag)
function(recompdiag_install_component component)
  install(TARGETS ${ARGN}
    EXPORT recompdiag-${component}-targets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT recompdiag-${component}-targets NAMESPACE recompdiag::
    DESTINATION ${RECOMPDIAG_CMAKE_DIR})
endfunction()
recompdiag_install_component(core recompdiag_core)
recompdiag_install_component(reports recompdiag_reports)
recompdiag_install_component(prometheus recompdiag_prometheus)
recompdiag_install_component(probes recompdiag_probes recompdiag_monitor)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/lib/include/recompdiag
                  ${PROJECT_SOURCE_DIR}/probes/include/recompdiag
                  ${PROJECT_SOURCE_DIR}/reports/include/recompdiag
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(TARGETS recompdiag RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/reports/grafana/recompdiag.json
  DESTINATION ${CMAKE_INSTALL_DATADIR}/recompdiag/grafana)
install(FILES ${PROJECT_BINARY_DIR}/lib/generated/recompdiag/core/version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/recompdiag/core)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/recompdiagConfig.cmake.in
  ${PROJECT_BINARY_DIR}/recompdiagConfig.cmake INSTALL_DESTINATION ${RECOMPDIAG_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/recompdiagConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/recompdiagConfig.cmake
              ${PROJECT_BINARY_DIR}/recompdiagConfigVersion.cmake
  DESTINATION ${RECOMPDIAG_CMAKE_DIR})
