// What a resume finds when its newest checkpoint's trainer state is torn: an error that names the
// file and the previous checkpoint that still reads.
#include "train/checkpoint.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace checkpoint_test {

namespace fs = std::filesystem;

fs::path checkpoints(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("vinci-checkpoint-" + std::to_string(getpid()) + "-" + name);
  fs::remove_all(dir);
  for (const char* step : {"step-1", "step-2", "step-3"}) fs::create_directories(dir / step);
  std::ofstream(dir / "step-1" / "trainer.json") << R"({"step": 1, "cursor": 4})";
  std::ofstream(dir / "step-2" / "trainer.json") << R"({"step": 2, "cursor": 8})";
  std::ofstream(dir / "latest") << "step-3\n";
  return dir;
}

std::string error_of(const fs::path& checkpoint) {
  try {
    vinci::train::read_trainer_state(checkpoint);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(Checkpoint, ATornNewestStateNamesTheFileAndThePreviousIntactOne) {
  const fs::path dir = checkpoints("torn");
  EXPECT_EQ(vinci::train::read_trainer_state(dir / "step-2").at("cursor"), 8);

  std::ofstream(dir / "step-3" / "trainer.json").flush();  // empty: killed between create and write
  std::string what = error_of(dir / "step-3");
  EXPECT_NE(what.find((dir / "step-3" / "trainer.json").string() + ": empty"), std::string::npos) << what;
  EXPECT_NE(what.find("previous checkpoint " + (dir / "step-2").string()), std::string::npos) << what;
  EXPECT_NE(what.find("write 'step-2' into " + (dir / "latest").string()), std::string::npos) << what;

  std::ofstream(dir / "step-3" / "trainer.json") << R"({"step": 3, "cur)";
  what = error_of(dir / "step-3");
  EXPECT_NE(what.find("not a trainer state"), std::string::npos) << what;
  EXPECT_NE(what.find("step-2"), std::string::npos) << what;

  // With the only other checkpoint torn as well, nothing is offered.
  std::ofstream(dir / "step-2" / "trainer.json") << "";
  std::ofstream(dir / "step-1" / "trainer.json") << "{";
  what = error_of(dir / "step-3");
  EXPECT_NE(what.find("not a trainer state"), std::string::npos) << what;
  EXPECT_EQ(what.find("previous checkpoint"), std::string::npos) << what;
  fs::remove_all(dir);
}

TEST(Checkpoint, LatestNamingAMissingStatePointsAtThePreviousOne) {
  const fs::path dir = checkpoints("missing");
  try {
    vinci::train::latest_checkpoint(dir);
    ADD_FAILURE() << "no error for a latest without trainer.json";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("holds no trainer.json"), std::string::npos) << what;
    EXPECT_NE(what.find("write 'step-2'"), std::string::npos) << what;
  }
  fs::remove_all(dir);
}

}  // namespace checkpoint_test
