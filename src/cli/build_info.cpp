#include "cli/build_info.h"

namespace vinci::cli {

const char* vinci_version() { return VINCI_VERSION; }
const char* vinci_commit() { return VINCI_COMMIT; }

}  // namespace vinci::cli
