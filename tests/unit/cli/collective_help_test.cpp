// `collective --algorithm`'s help lists what plan_collective accepts, from kAlgorithms itself.
#include <gtest/gtest.h>

#include <string>

#include "toposweep/cli/command.hpp"
#include "toposweep/collective/plan.hpp"

namespace toposweep::cli {
namespace {

TEST(CollectiveCommand, AlgorithmHelpListsEveryAlgorithm) {
  const Command* collective = nullptr;
  for (const Command& c : all_commands())
    if (c.name == "collective") collective = &c;
  ASSERT_NE(collective, nullptr);
  po::options_description options;
  collective->add_options(options);
  const std::string help = options.find("algorithm", false).description();
  for (const std::string& name : collective_algorithm_names())
    EXPECT_NE(help.find(name), std::string::npos) << name << " missing from: " << help;
  EXPECT_NE(help.find("biring"), std::string::npos);
}

}  // namespace
}  // namespace toposweep::cli
