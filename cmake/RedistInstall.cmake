# cmake --install: libraries, C headers, Fortran .mod files, the CMake package (redistConfig.cmake
# with targets redist::redist, redist::scalapack, redist::fortran, redist::ilp64,
# redist::scalapack_ilp64) and pkg-config files (redist.pc, redist-fortran.pc, redist-ilp64.pc).
include(CMakePackageConfigHelpers)
set(REDIST_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/redist)

set_target_properties(redist_scalapack PROPERTIES EXPORT_NAME scalapack)
# Installed beside libredist: find it there whatever the program's own run path says.
set_target_properties(redist_scalapack PROPERTIES INSTALL_RPATH "$ORIGIN")
if(REDIST_BUILD_FORTRAN)
  set_target_properties(redist_fortran PROPERTIES INSTALL_RPATH "$ORIGIN")
endif()
install(TARGETS redist redist_scalapack EXPORT redistTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(REDIST_BUILD_ILP64)
  set_target_properties(redist_ilp64 PROPERTIES EXPORT_NAME ilp64)
  set_target_properties(redist_scalapack_ilp64 PROPERTIES EXPORT_NAME scalapack_ilp64
                                                          INSTALL_RPATH "$ORIGIN")
  install(TARGETS redist_ilp64 redist_scalapack_ilp64 EXPORT redistTargets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(FILES ${PROJECT_SOURCE_DIR}/include/redist.h ${PROJECT_SOURCE_DIR}/include/redist_scalapack.h
              ${PROJECT_SOURCE_DIR}/include/redist_ring.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT redistTargets NAMESPACE redist:: DESTINATION ${REDIST_INSTALL_CMAKEDIR})

if(REDIST_BUILD_FORTRAN)
  install(TARGETS redist_fortran EXPORT redistFortranTargets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY ${REDIST_FORTRAN_MODULE_DIR}/ DESTINATION ${REDIST_INSTALL_MODULEDIR}
          FILES_MATCHING PATTERN "*.mod")
  install(EXPORT redistFortranTargets NAMESPACE redist:: DESTINATION ${REDIST_INSTALL_CMAKEDIR})
endif()

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/redistConfig.cmake.in
  ${PROJECT_BINARY_DIR}/redistConfig.cmake INSTALL_DESTINATION ${REDIST_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/redistConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/redistConfig.cmake ${PROJECT_BINARY_DIR}/redistConfigVersion.cmake
        DESTINATION ${REDIST_INSTALL_CMAKEDIR})

# pkg-config: relative to the prefix the .pc file is found in, so the package can be moved.
file(RELATIVE_PATH REDIST_PC_PREFIX_FROM_PCDIR
     ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" REDIST_PC_PREFIX_FROM_PCDIR "${REDIST_PC_PREFIX_FROM_PCDIR}")
configure_file(${PROJECT_SOURCE_DIR}/redist.pc.in ${PROJECT_BINARY_DIR}/redist.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/redist.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(REDIST_BUILD_ILP64)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/redist-ilp64.pc.in ${PROJECT_BINARY_DIR}/redist-ilp64.pc
                 @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/redist-ilp64.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
if(REDIST_BUILD_FORTRAN)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/redist-fortran.pc.in
                 ${PROJECT_BINARY_DIR}/redist-fortran.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/redist-fortran.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
