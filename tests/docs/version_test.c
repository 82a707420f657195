/* The library's run-time version (redist_get_version) equals the version macros of the
 * header this test was compiled with, and REDIST_VERSION spells them. */
#include <redist.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  int major = -1, minor = -1, patch = -1;
  if (redist_get_version(&major, &minor, &patch) != REDIST_SUCCESS) {
    fprintf(stderr, "redist_get_version failed\n");
    return 1;
  }
  char spelled[64];
  snprintf(spelled, sizeof spelled, "%d.%d.%d", REDIST_VERSION_MAJOR, REDIST_VERSION_MINOR,
           REDIST_VERSION_PATCH);
  if (major != REDIST_VERSION_MAJOR || minor != REDIST_VERSION_MINOR ||
      patch != REDIST_VERSION_PATCH || strcmp(spelled, REDIST_VERSION) != 0 ||
      REDIST_VERSION_NUMBER != major * 10000 + minor * 100 + patch) {
    fprintf(stderr, "library %d.%d.%d, header %s (%d.%d.%d)\n", major, minor, patch, REDIST_VERSION,
            REDIST_VERSION_MAJOR, REDIST_VERSION_MINOR, REDIST_VERSION_PATCH);
    return 1;
  }
  if (redist_get_version(NULL, NULL, NULL) != REDIST_SUCCESS) return 1;
  printf("redist %s\n", REDIST_VERSION);
  return 0;
}
