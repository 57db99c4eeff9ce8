#include "eval/environment.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "core/files.h"
#include "core/process.h"

namespace vinci::eval {

namespace fs = std::filesystem;

static std::vector<std::string> driver_gpus() {
  std::vector<std::pair<std::string, std::string>> found;  // (bus id, model)
  const fs::path root = "/proc/driver/nvidia/gpus";
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return {};
  for (const auto& e : fs::directory_iterator(root, ec)) {
    const auto info = core::try_read_file(e.path() / "information");
    if (!info) continue;
    std::istringstream in(*info);
    std::string line, model = "NVIDIA GPU";
    while (std::getline(in, line)) {
      if (line.rfind("Model:", 0) == 0) {
        model = line.substr(6);
        model.erase(0, model.find_first_not_of(" \t"));
      }
    }
    found.emplace_back(e.path().filename().string(), model);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> models;
  for (auto& [bus, model] : found) models.push_back(model);
  return models;
}

Environment probe_environment(const std::string& python) {
  Environment env;
  env.python = python;
  std::vector<std::string> all = driver_gpus();
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"); v != nullptr) {
    std::stringstream ss(v);
    std::string item;
    while (std::getline(ss, item, ',')) {
      if (item.empty() || item[0] == '-') break;  // CUDA stops at the first invalid entry
      const bool numeric = std::all_of(item.begin(), item.end(), ::isdigit);
      if (numeric && std::stoul(item) < all.size())
        env.gpus.push_back(all[std::stoul(item)]);
      else if (!numeric && !all.empty())
        env.gpus.push_back(all.front());  // a UUID: same model on one host
    }
  } else {
    env.gpus = all;
  }
  core::SpawnOptions o;
  o.argv = {python, "-c", "import importlib.metadata as m; print(m.version('torch'))"};
  try {
    const auto c = core::run_to_completion(o, std::chrono::seconds(30));
    if (c.status.exited && c.status.code == 0) {
      env.torch_version = c.out;
      while (!env.torch_version.empty() && isspace(static_cast<unsigned char>(env.torch_version.back())))
        env.torch_version.pop_back();
    }
  } catch (const std::exception&) {
  }
  return env;
}

}  // namespace vinci::eval
