// A training run's folder across restarts (src/train/run_folder): a used --out is refused without
// --resume, and a resume keeps the metrics lines up to its checkpoint's step, on folders made by hand.
#include "train/run_folder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/files.h"

namespace run_folder_test {

namespace fs = std::filesystem;

fs::path fresh(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("vinci-run-folder-" + std::to_string(getpid()) + "-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void checkpoint_at(const fs::path& out, int step) {
  const fs::path dir = out / "checkpoints" / ("step-" + std::to_string(step));
  fs::create_directories(dir);
  std::ofstream(dir / "trainer.json") << "{\"step\": " << step << "}";
  std::ofstream(out / "checkpoints" / "latest") << "step-" << step << "\n";
}

TEST(RunFolder, AUsedFolderIsContinuedOnlyWhenAsked) {
  const fs::path out = fresh("used");
  EXPECT_NO_THROW(vinci::train::refuse_earlier_run(out, false));
  fs::create_directories(out / "final");
  try {
    vinci::train::refuse_earlier_run(out, false);
    FAIL() << "a folder with a final model was taken for a new run";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              out.string() + " holds an earlier run: pass --resume to continue it, or another --out");
  }
  fs::remove_all(out / "final");
  checkpoint_at(out, 2);
  EXPECT_THROW(vinci::train::refuse_earlier_run(out, false), std::runtime_error);
  EXPECT_NO_THROW(vinci::train::refuse_earlier_run(out, true));
  fs::remove_all(out);
}

TEST(RunFolder, AResumeKeepsTheMetricsUpToItsCheckpoint) {
  const fs::path out = fresh("metrics");
  // Steps 1-3 written, the run killed while writing step 4's line; the checkpoint is step 2's.
  vinci::core::write_file_atomic(
      out / "metrics.jsonl",
      "{\"step\": 1, \"loss\": 3}\n{\"step\": 2, \"loss\": 2}\n{\"step\": 3, \"loss\": 1}\n{\"step\": 4, \"lo");
  checkpoint_at(out, 2);
  vinci::train::drop_metrics_after_checkpoint(out);
  EXPECT_EQ(vinci::core::read_file(out / "metrics.jsonl"), "{\"step\": 1, \"loss\": 3}\n{\"step\": 2, \"loss\": 2}\n");
  // Without a checkpoint a resume starts over: no line stays.
  fs::remove_all(out / "checkpoints");
  vinci::train::drop_metrics_after_checkpoint(out);
  EXPECT_EQ(vinci::core::read_file(out / "metrics.jsonl"), "");
  fs::remove_all(out);
}

}  // namespace run_folder_test
