# What an install holds beyond the targets the layers install (bin/kport,
# bin/kport_trace_dump, lib/libkport.so, lib/libkport_inject.so,
# include/kport/, share/kport/python/): the CMake package find_package(kport)
# reads, and the Debian package `cpack -G DEB` builds from the same install.
# Everything goes to bin/ and lib/ of one prefix, never lib/<multiarch>/:
# kport finds libkport_inject.so at ../lib/ from bin/kport.
include(CMakePackageConfigHelpers)
set(kport_cmake_dir lib/cmake/kport)
install(EXPORT kport_targets
  NAMESPACE kport::
  FILE kportTargets.cmake
  DESTINATION ${kport_cmake_dir})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/kportConfig.cmake.in
  ${CMAKE_BINARY_DIR}/kportConfig.cmake
  INSTALL_DESTINATION ${kport_cmake_dir})
# 0.x: any minor version may change the API (and libkport.so's soname).
write_basic_package_version_file(${CMAKE_BINARY_DIR}/kportConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/kportConfig.cmake
              ${CMAKE_BINARY_DIR}/kportConfigVersion.cmake
  DESTINATION ${kport_cmake_dir})

set(KPORT_PACKAGE_MAINTAINER "kport maintainers <kport@invalid>" CACHE STRING
  "The Maintainer field of the Debian package")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME kport)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "runtime for validated, agent-driven GPU kernel ports")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER ${KPORT_PACKAGE_MAINTAINER})
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# Depends: from what the binaries link (libcaf-core0.17, libspdlog1.10, ...).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
include(CPack)

# The daemon's systemd unit (packaging/kport.service).
install(FILES ${CMAKE_CURRENT_LIST_DIR}/../packaging/kport.service
  DESTINATION lib/systemd/system)

# The profiles tree (spec templates, IR policies, stage contracts, agent
# adapters): built into kport, and installed for users to read, copy and
# point KPORT_PROFILES at.
install(DIRECTORY ${KPORT_SOURCE_ROOT}/profiles/ DESTINATION share/kport/profiles
  USE_SOURCE_PERMISSIONS)
