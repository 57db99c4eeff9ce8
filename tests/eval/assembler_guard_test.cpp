// What vinci-as-guard lets the assembler see: a compiler's own output passes; a source that brings in
// a file's bytes (.incbin), another source (.include), or that can build either from pieces (macros,
// repetitions, MRI mode) is refused, in any case and split by a comment; MRI mode and response files
// on the command line are refused; and the sources a command line reads are found, stdin included.
#include "eval/assembler_guard.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace assembler_guard_test {
using namespace vinci::eval;

// g++ -O2 -S of a small function with a string, an inline asm block and call-frame notes.
constexpr const char* kCompilerOutput = R"(	.file	"clean.cpp"
	.text
	.section	.rodata.str1.1,"aMS",@progbits,1
.LC1:
	.string	"relu of %d values\n"
	.text
	.p2align 4
	.globl	relu
	.type	relu, @function
relu:
.LFB14:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	movslq	%esi, %rbp
	leaq	.LC1(%rip), %rdi
	call	printf@PLT
#APP
# 6 "clean.cpp" 1
	pause
# 0 "" 2
#NO_APP
	popq	%rbp
	ret
	.cfi_endproc
.LFE14:
	.size	relu, .-relu
	.ident	"GCC: (Debian 12.2.0-14+deb12u1) 12.2.0"
	.section	.note.GNU-stack,"",@progbits
)";

TEST(AssemblerGuard, CompilerOutputPasses) { EXPECT_EQ(forbidden_directive(kCompilerOutput), std::nullopt); }

TEST(AssemblerGuard, EachDirectiveIsRefusedByName) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"\t.incbin \"/usr/lib/x86_64-linux-gnu/libopenblas.so.0\"\n", ".incbin"},
      {"\t.include \"blas_kernels.s\"\n", ".include"},
      {"\t.macro m a\n\t.byte \\a\n\t.endm\n", ".macro"},
      {"\t.irp x,1,2\n\t.byte \\x\n\t.endr\n", ".irp"},
      {"\t.irpc x,12\n\t.byte \\x\n\t.endr\n", ".irpc"},
      {"\t.irep x,1,2\n\t.byte \\x\n\t.endr\n", ".irep"},
      {"\t.irepc x,12\n\t.byte \\x\n\t.endr\n", ".irepc"},
      {"\t.rept 2\n\t.byte 1\n\t.endr\n", ".rept"},
      {"\t.rep 2\n\t.byte 1\n\t.endr\n", ".rep"},
      {"\t.altmacro\n", ".altmacro"},
      {"\t.mri 1\n", ".mri"},
  };
  for (const auto& [source, directive] : cases) {
    const std::string text = std::string(kCompilerOutput) + "#APP\n" + source + "#NO_APP\n";
    EXPECT_EQ(forbidden_directive(text), directive) << source;
  }
}

TEST(AssemblerGuard, CaseAndCommentsDoNotHideADirective) {
  EXPECT_EQ(forbidden_directive("\t.InCbIn \"/lib/libblas.so.3\"\n"), ".incbin");
  EXPECT_EQ(forbidden_directive("\t.INCLUDE \"x.s\"\n"), ".include");
  // as takes a /* */ comment out without a trace: ".inc/**/bin" is .incbin to it.
  EXPECT_EQ(forbidden_directive("\t.inc/* nothing to see */bin \"/lib/libblas.so.3\"\n"), ".incbin");
  EXPECT_EQ(forbidden_directive("\t.inc/**//**/lude \"x.s\"\n"), ".include");
  // A comment opened in a string still hides nothing: the raw text is searched too.
  EXPECT_EQ(forbidden_directive("\t.ascii \"/*\"\n\t.incbin \"f\"\n\t.ascii \"*/\"\n"), ".incbin");
}

// Red-team round 65: honest kernels refused for the letters of a directive in their strings (torch's
// inlined assertion "ks.repr_", an error message naming .repeat()). Inside a statement they are data;
// at any place a statement may start they are still refused.
TEST(AssemblerGuard, DirectiveLettersInsideAStatementAreData) {
  const std::string strings = std::string(kCompilerOutput) +
                              "\t.ascii \"((ks.repr_ & full_backend_mask) == 0) INTERNAL ASSERT\"\n"
                              "\t.string \"relu: call .contiguous(), not .repeat() or .expand()\"\n"
                              "\t.string \"a .macro_kernel, an .include guard, a .mri file\"\n";
  EXPECT_EQ(forbidden_directive(strings), std::nullopt);
  const std::vector<std::pair<std::string, std::string>> starts = {
      {".incbin \"f\"\n", ".incbin"},         // the text's first statement
      {"\tnop; .incbin \"f\"\n", ".incbin"},  // after x86's statement separator
      {"\tnop ;\t.rept 2\n", ".rept"},
      {"here: .incbin \"f\"\n", ".incbin"},                 // after a label
      {"\"quoted label\":.include \"x.s\"\n", ".include"},  // after a quoted one
      {"\t.byte '\"; .incbin \"f\"\n", ".incbin"},          // a quote as's character constant takes
      {"\t.ascii \"x\"\f.incbin \"f\"\n", ".incbin"},       // after a control character
      {"x:/* */.irp y,1\n", ".irp"},                        // after a label, a comment between
  };
  for (const auto& [source, directive] : starts) EXPECT_EQ(forbidden_directive(source), directive) << source;
}

TEST(AssemblerGuard, DirectivesBuiltFromPiecesAreRefused) {
  // No ".incbin" anywhere in the text: the macro pastes it together from two arguments.
  EXPECT_EQ(forbidden_directive("\t.macro paste a, b\n\t\\a\\()\\b \"/lib/libblas.so.3\"\n\t.endm\n"
                                "\tpaste .inc, bin\n"),
            ".macro");
  EXPECT_EQ(forbidden_directive("\t.irpc c,n\n\t.i\\c\\()cbin \"/lib/libblas.so.3\"\n\t.endr\n"), ".irpc");
  EXPECT_EQ(forbidden_directive("\t.altmacro\n\t.macro m a\n\ta\n\t.endm\n"), ".altmacro");
}

TEST(AssemblerGuard, MriModeAndResponseFilesAreRefused) {
  for (const std::vector<std::string> args : {std::vector<std::string>{"-M", "x.s"},
                                              {"--mri", "x.s"},
                                              {"-mri", "x.s"},
                                              {"--mr", "x.s"},
                                              {"--64", "-JM", "x.s"},
                                              {"-MDx", "x.s"},
                                              {"@args.txt"}})
    EXPECT_NE(forbidden_argument(args), std::nullopt) << args[0];
  EXPECT_EQ(forbidden_argument({"--64", "-o", "M.o", "--gdwarf-5", "-march=znver4", "--MD", "deps", "-I/opt/M", "x.s"}),
            std::nullopt);
  EXPECT_EQ(forbidden_argument({"-MD", "deps", "x.s"}), std::nullopt);
}

TEST(AssemblerGuard, FindsTheSourcesACommandLineReads) {
  auto in = assembler_inputs({"--64", "-o", "/tmp/cc1.o", "/tmp/cc1.s"});
  EXPECT_EQ(in.files, std::vector<std::string>{"/tmp/cc1.s"});
  EXPECT_FALSE(in.standard_input);
  // -pipe: the compiler's output comes on stdin.
  in = assembler_inputs({"--64", "-o", "/tmp/cc1.o"});
  EXPECT_TRUE(in.files.empty());
  EXPECT_TRUE(in.standard_input);
  in = assembler_inputs({"a.s", "-", "--defsym", "A=1", "-I", "inc", "--MD", "deps", "--debug-prefix-map", "x=y"});
  EXPECT_EQ(in.files, std::vector<std::string>{"a.s"});
  EXPECT_TRUE(in.standard_input);
  // After "--" every argument is a file; an option's value the list does not know is taken for one.
  in = assembler_inputs({"--", "-odd.s", "--listing-lhs-width", "2"});
  EXPECT_EQ(in.files, (std::vector<std::string>{"-odd.s", "--listing-lhs-width", "2"}));
  in = assembler_inputs({"--listing-lhs-width", "2", "b.s"});
  EXPECT_EQ(in.files, (std::vector<std::string>{"2", "b.s"}));
  EXPECT_FALSE(assembler_inputs({"--version"}).standard_input);
}

}  // namespace assembler_guard_test
