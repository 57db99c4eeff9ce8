// What an assembler run of a candidate's build may be given, so its library is only compiled code.
//
// What an assembler run of a candidate's build may be given (vinci-as-guard, assembler_guard_main.cpp),
// so that the candidate's library holds only code compiled from its sources.
//
// On the CPU, own code is decided by content: a sample counts as the candidate's own when its mapping's
// bytes are a library the judge built for it. GNU as can put any file's bytes into that library
// (.incbin: red team round 4 put OpenBLAS's machine code in its own library and called it there) or
// read another source (.include), and it can build those directives from pieces no text rule sees:
// macros with \() pasting, .irp/.irpc/.rept bodies, .altmacro, MRI mode. A compiler's own output
// never holds any of them, so the guard refuses them all, wherever a statement may start (a line's
// start, after ';' or a label's ':'); inside a statement the same letters are data, as in a compiler's
// strings. It looks at the raw text, case-insensitively, and again with /* */ comments taken out, since
// as joins ".inc/**/bin" into .incbin.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vinci::eval {

// The first forbidden directive in an assembler source (named as in the list, lower case), or none.
std::optional<std::string> forbidden_directive(std::string_view source);

// Why as's command line is refused (MRI mode, arguments read from a file), or none.
std::optional<std::string> forbidden_argument(const std::vector<std::string>& args);

// The sources an as command line reads. Options whose value is a separate argument (-o, -I, --defsym,
// --MD, --debug-prefix-map) are skipped with their value; every other argument that is no option is a
// file. An option the list misses makes its value look like a file: it is scanned, never skipped.
struct AssemblerInputs {
  std::vector<std::string> files;
  bool standard_input = false;  // "-", or no file at all (as then reads its source from stdin)
};
AssemblerInputs assembler_inputs(const std::vector<std::string>& args);

}  // namespace vinci::eval
