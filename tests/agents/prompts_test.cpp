// Prompt templates: placeholder filling, overrides file by file, and errors naming the file.
#include "agents/prompts.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/temp_dir.h"

namespace prompts_test {
using namespace vinci::agents;
namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

std::string error_of(const Prompts& prompts, const std::string& name,
                     const std::map<std::string, std::string>& values) {
  try {
    prompts.render(name, values);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(Prompts, PlaceholdersAreFilledAndValuesInsertedVerbatim) {
  const vinci::test::TempDir dir("prompts");
  write(dir.path() / "greet.md", "Hello {{name}}, turn {{turn}}. {{name}}!");
  const Prompts prompts(dir.path());
  // A value that looks like a placeholder stays as it is: it is never scanned again.
  EXPECT_EQ(prompts.render("greet", {{"name", "{{turn}}"}, {"turn", "2"}, {"unused", "x"}}),
            "Hello {{turn}}, turn 2. {{turn}}!");
}

TEST(Prompts, AMissingValueNamesTheFileAndPlaceholder) {
  const vinci::test::TempDir dir("prompts");
  write(dir.path() / "p.md", "a {{known}} b {{unknown}}");
  const std::string e = error_of(Prompts(dir.path()), "p", {{"known", "1"}});
  EXPECT_EQ(e, (dir.path() / "p.md").string() + ": no value for the placeholder {{unknown}}");
}

TEST(Prompts, AnUnclosedPlaceholderNamesItsOffset) {
  const vinci::test::TempDir dir("prompts");
  write(dir.path() / "p.md", "abc {{oops");
  EXPECT_EQ(error_of(Prompts(dir.path()), "p", {}),
            (dir.path() / "p.md").string() + ": '{{' at offset 4 is never closed");
}

TEST(Prompts, AnOverrideFolderWinsFileByFile) {
  const vinci::test::TempDir dir("prompts");
  write(dir.path() / "policy_feedback.md", "mine {{turn}}");
  const Prompts prompts(dir.path());
  EXPECT_EQ(prompts.render("policy_feedback", {{"turn", "3"}}), "mine 3");
  // A file the override folder lacks comes from the shipped prompts.
  const std::string shipped = Prompts().render("policy_feedback", {{"turn", "3"}, {"result", "R"}, {"memory", "M"}});
  EXPECT_NE(shipped.find("## Result of your turn 3\nR\n"), std::string::npos) << shipped;
}

TEST(Prompts, AnOverrideThatIsNotAFolderIsRefused) {
  const vinci::test::TempDir dir("prompts");
  try {
    Prompts p(dir.path() / "missing");
    FAIL() << "a missing override folder was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "--prompts " + (dir.path() / "missing").string() + ": not a folder");
  }
}

}  // namespace prompts_test
