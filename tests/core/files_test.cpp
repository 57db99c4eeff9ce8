// core/files: write_new_folder leaves a folder whole or absent, LineWriter never glues a record onto a torn last line,
// and read_jsonl_lines returns the complete lines of a hand-written file, skipping a torn last one with a warning.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "core/files.h"
#include "core/setup_error.h"
#include "support/captured_log.h"
#include "support/temp_dir.h"

namespace files_test {

namespace fs = std::filesystem;
using vinci::core::JsonlLine;
using vinci::core::LineWriter;
using vinci::core::read_file;
using vinci::core::read_jsonl_lines;
using vinci::core::write_file_atomic;
using vinci::core::write_new_folder;
using vinci::test::CapturedLog;

std::vector<std::pair<size_t, std::string>> numbered(const std::vector<JsonlLine>& lines) {
  std::vector<std::pair<size_t, std::string>> out;
  for (const auto& l : lines) out.emplace_back(l.number, l.text);
  return out;
}

TEST(LineWriter, AppendsAfterACompleteLastLine) {
  vinci::test::TempDir dir("files");
  const fs::path file = dir.path() / "results.jsonl";
  write_file_atomic(file, "{\"a\":1}\n");
  CapturedLog log;
  {
    LineWriter w(file, /*append=*/true);
    w.write_line("{\"b\":2}");
  }
  EXPECT_EQ(read_file(file), "{\"a\":1}\n{\"b\":2}\n");
  EXPECT_EQ(log.str(), "") << "nothing was dropped";
}

TEST(LineWriter, AppendDropsATornLastLineInsteadOfGluingOntoIt) {
  vinci::test::TempDir dir("files");
  const fs::path file = dir.path() / "results.jsonl";
  write_file_atomic(file, "{\"a\":1}\n{\"b\":2}\n{\"task\": \"lev");  // killed 13 bytes into record 3
  CapturedLog log;
  {
    LineWriter w(file, /*append=*/true);
    w.write_line("{\"c\":3}");
  }
  EXPECT_EQ(read_file(file), "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n");
  EXPECT_NE(log.str().find("warning: " + file.string() + ": its last line was torn"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("dropped its 13 bytes"), std::string::npos) << log.str();
}

TEST(LineWriter, AppendDropsATornOnlyLine) {
  vinci::test::TempDir dir("files");
  const fs::path file = dir.path() / "results.jsonl";
  write_file_atomic(file, "{\"task\"");
  CapturedLog log;
  {
    LineWriter w(file, /*append=*/true);
    w.write_line("{\"c\":3}");
  }
  EXPECT_EQ(read_file(file), "{\"c\":3}\n");
  EXPECT_NE(log.str().find("dropped its 7 bytes"), std::string::npos) << log.str();
}

TEST(LineWriter, AppendFindsTheLastNewlineBeyondOneReadBlock) {
  // The tail is searched a 4 KiB block at a time from the end: a torn line of 10,000 bytes spans three.
  vinci::test::TempDir dir("files");
  const fs::path file = dir.path() / "results.jsonl";
  write_file_atomic(file, "{\"a\":1}\n" + std::string(10'000, 'x'));
  CapturedLog log;
  {
    LineWriter w(file, /*append=*/true);
    w.write_line("{\"c\":3}");
  }
  EXPECT_EQ(read_file(file), "{\"a\":1}\n{\"c\":3}\n");
  EXPECT_NE(log.str().find("dropped its 10000 bytes"), std::string::npos) << log.str();
}

TEST(LineWriter, CreatesAMissingFileAndTruncatesWithoutAppend) {
  vinci::test::TempDir dir("files");
  const fs::path file = dir.path() / "sub" / "results.jsonl";
  {
    LineWriter w(file, /*append=*/true);
    w.write_line("one");
  }
  EXPECT_EQ(read_file(file), "one\n");
  write_file_atomic(file, "old\ntorn");
  {
    LineWriter w(file, /*append=*/false);
    w.write_line("two");
  }
  EXPECT_EQ(read_file(file), "two\n");
}

TEST(ReadJsonlLines, CompleteLinesWithTheirNumbers) {
  vinci::test::TempDir dir("files");
  const fs::path file = dir.path() / "a.jsonl";
  write_file_atomic(file, "{\"a\":1}\n\n   \n{\"b\":2}\r\n{\"c\":3}\n");
  CapturedLog log;
  EXPECT_EQ(numbered(read_jsonl_lines(file)),
            (std::vector<std::pair<size_t, std::string>>{{1, "{\"a\":1}"}, {4, "{\"b\":2}\r"}, {5, "{\"c\":3}"}}));
  EXPECT_EQ(log.str(), "");
}

TEST(ReadJsonlLines, SkipsATornLastLineWithAWarning) {
  vinci::test::TempDir dir("files");
  const fs::path file = dir.path() / "a.jsonl";
  write_file_atomic(file, "{\"a\":1}\n{\"b\":2}\n{\"c\":");
  CapturedLog log;
  EXPECT_EQ(numbered(read_jsonl_lines(file)),
            (std::vector<std::pair<size_t, std::string>>{{1, "{\"a\":1}"}, {2, "{\"b\":2}"}}));
  EXPECT_NE(log.str().find("warning: " + file.string() + ":3: skipped a torn last line (5 bytes"), std::string::npos)
      << log.str();
}

TEST(ReadJsonlLines, AWholeLastRecordWithoutItsNewlineIsKept) {
  vinci::test::TempDir dir("files");
  const fs::path file = dir.path() / "a.jsonl";
  write_file_atomic(file, "{\"a\":1}\n{\"b\":[2, 3]}");
  CapturedLog log;
  EXPECT_EQ(numbered(read_jsonl_lines(file)),
            (std::vector<std::pair<size_t, std::string>>{{1, "{\"a\":1}"}, {2, "{\"b\":[2, 3]}"}}));
  EXPECT_EQ(log.str(), "");
}

TEST(ReadJsonlLines, AMalformedCompleteLineIsReturnedForTheCallerToName) {
  // A glued line (what --append made of a torn one before) ends in '\n': it is not torn, it is damage.
  vinci::test::TempDir dir("files");
  const fs::path file = dir.path() / "a.jsonl";
  write_file_atomic(file, "{\"a\":1}\n{\"b\":{\"c\":3}\n{\"d\":4}\n");
  const auto lines = read_jsonl_lines(file);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1].number, 2u);
  EXPECT_EQ(lines[1].text, "{\"b\":{\"c\":3}");
}

TEST(ReadJsonlLines, BlankTailEmptyFileAndMissingFile) {
  vinci::test::TempDir dir("files");
  const fs::path file = dir.path() / "a.jsonl";
  write_file_atomic(file, "{\"a\":1}\n  ");
  CapturedLog log;
  EXPECT_EQ(read_jsonl_lines(file).size(), 1u);
  EXPECT_EQ(log.str(), "") << "a blank tail is no record";
  write_file_atomic(file, "");
  EXPECT_TRUE(read_jsonl_lines(file).empty());
  try {
    read_jsonl_lines(dir.path() / "missing.jsonl");
    FAIL() << "a missing file was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("missing.jsonl"), std::string::npos) << e.what();
  }
}

TEST(ReadJsonlLines, WhatAnAppendAfterAKillLeaves) {
  // The case end to end: a kill tears the last record, a later run appends, a reader reads.
  vinci::test::TempDir dir("files");
  const fs::path file = dir.path() / "results.jsonl";
  {
    LineWriter w(file, /*append=*/false);
    w.write_line("{\"n\":1}");
  }
  {
    LineWriter w(file, /*append=*/true);
    w.write_line("{\"n\":2}");
  }
  {
    std::string torn = read_file(file) + "{\"n\":";
    write_file_atomic(file, torn);
  }
  CapturedLog log;
  {
    LineWriter w(file, /*append=*/true);
    w.write_line("{\"n\":3}");
  }
  EXPECT_EQ(numbered(read_jsonl_lines(file)),
            (std::vector<std::pair<size_t, std::string>>{{1, "{\"n\":1}"}, {2, "{\"n\":2}"}, {3, "{\"n\":3}"}}));
}

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(WriteNewFolder, AppearsOnlyWhenFillReturns) {
  vinci::test::TempDir dir("files");
  const fs::path out = dir.path() / "out";
  write_new_folder(out, [&](const fs::path& staging) {
    EXPECT_FALSE(fs::exists(out)) << "visible before it is whole";
    EXPECT_EQ(staging.parent_path(), dir.path());
    write_file_atomic(staging / "a" / "b.txt", "b");
  });
  EXPECT_EQ(read_file(out / "a" / "b.txt"), "b");
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"out"});
}

TEST(WriteNewFolder, AFailedFillLeavesNothing) {
  vinci::test::TempDir dir("files");
  EXPECT_THROW(write_new_folder(dir.path() / "out",
                                [](const fs::path& staging) {
                                  write_file_atomic(staging / "half.txt", "half");
                                  throw std::runtime_error("disk full");
                                }),
               std::runtime_error);
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{});
}

TEST(WriteNewFolder, RefusesAnExistingFolderAndLeavesItAlone) {
  vinci::test::TempDir dir("files");
  write_file_atomic(dir.path() / "out" / "mine.txt", "mine");
  bool filled = false;
  try {
    write_new_folder(dir.path() / "out/", [&](const fs::path&) { filled = true; });
    ADD_FAILURE() << "no error";
  } catch (const vinci::core::SetupError& e) {
    EXPECT_NE(std::string(e.what()).find("exists"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(filled);
  EXPECT_EQ(entries(dir.path() / "out"), std::vector<std::string>{"mine.txt"});
  // A trailing slash names the same folder: the new one lands as "new", not inside it.
  write_new_folder(dir.path() / "new/", [](const fs::path& staging) { write_file_atomic(staging / "x", "x"); });
  EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{"new", "out"}));
}

}  // namespace files_test
