// What this binary is: vinci's version and the commit it was configured from.
//
// What this binary is: vinci's version and the commit it was configured from (a file of its own,
// so a new commit recompiles one small file).
#pragma once

namespace vinci::cli {

const char* vinci_version();
const char* vinci_commit();

}  // namespace vinci::cli
