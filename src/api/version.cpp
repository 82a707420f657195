// redist_get_version: the library's version, from CMake's project(VERSION) (the definitions
// REDIST_LIBRARY_VERSION_* set in src/api/CMakeLists.txt). The static_asserts keep the
// version macros of include/redist.h equal to it, so that a build with a header out of step
// with CMakeLists.txt fails.
#include "redist.h"

static_assert(REDIST_VERSION_MAJOR == REDIST_LIBRARY_VERSION_MAJOR &&
                  REDIST_VERSION_MINOR == REDIST_LIBRARY_VERSION_MINOR &&
                  REDIST_VERSION_PATCH == REDIST_LIBRARY_VERSION_PATCH,
              "include/redist.h's REDIST_VERSION_* differ from project(VERSION) in CMakeLists.txt");

extern "C" int redist_get_version(int *major, int *minor, int *patch) {
  if (major != nullptr) *major = REDIST_LIBRARY_VERSION_MAJOR;
  if (minor != nullptr) *minor = REDIST_LIBRARY_VERSION_MINOR;
  if (patch != nullptr) *patch = REDIST_LIBRARY_VERSION_PATCH;
  return REDIST_SUCCESS;
}
