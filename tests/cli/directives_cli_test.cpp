// `ekb directives`: the directive table for people (text, Markdown) and for programs (JSON).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ir/directives.h"
#include "run_ekb.h"

namespace {

using Result = ekb::testing_cli::EkbResult;
Result ekb(const std::string& args) { return ekb::testing_cli::run_ekb(args); }

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

TEST(CliDirectives, ListsEveryDirectiveWithItsSignatureAndTargets) {
  Result r = ekb("directives");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const ekb::ir::DirectiveInfo& d : ekb::ir::directive_table())
    EXPECT_TRUE(contains(r.out, ekb::ir::directive_signature(d))) << d.verb << "\n" << r.out;
  EXPECT_TRUE(contains(r.out, "bind(stage, loop, axis) (gpu only)")) << r.out;
  EXPECT_TRUE(contains(r.out, "parallel(stage, loop) (cpu only)")) << r.out;
}

// The JSON is a program's action space: every directive with all it needs to write one.
TEST(CliDirectives, JsonHoldsTheWholeTable) {
  Result r = ekb("directives --json");
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  const auto& table = ekb::ir::directive_table();
  ASSERT_EQ(j["directives"].size(), table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    const nlohmann::json& d = j["directives"][i];
    SCOPED_TRACE(std::string(table[i].verb));
    EXPECT_EQ(d["verb"], table[i].verb);
    EXPECT_EQ(d["layer"], ekb::ir::layer_name(table[i].layer));
    EXPECT_EQ(d["pass"], table[i].pass);
    EXPECT_EQ(d["doc"], table[i].doc);
    EXPECT_EQ(d["targets"].size(), table[i].targets.targets().size());
    ASSERT_EQ(d["args"].size(), table[i].params.size());
    for (size_t a = 0; a < table[i].params.size(); ++a) {
      EXPECT_EQ(d["args"][a]["name"], table[i].params[a].name);
      EXPECT_EQ(d["args"][a]["kind"], ekb::ir::arg_kind_name(table[i].params[a].kind));
    }
    EXPECT_EQ(d["keywords"].size(), table[i].keywords.size());
  }
  const nlohmann::json& split = j["directives"][0];
  EXPECT_EQ(split["verb"], "split");
  EXPECT_EQ(split["args"][1]["of"], "stage");
  EXPECT_EQ(split["args"][1]["becomes"], nlohmann::json({"outer", "inner"}));
  EXPECT_EQ(split["keywords"][0]["choices"], nlohmann::json({"guard", "shift_inwards", "round_up", "peel", "mask"}));
  EXPECT_EQ(split["targets"], nlohmann::json({"cpu", "cuda", "opencl"}));
  EXPECT_EQ(j["layer_targets"]["gpu"], nlohmann::json({"cuda", "opencl"}));
  EXPECT_EQ(j["arg_kinds"].size(), static_cast<size_t>(ekb::ir::DirectiveArgKind::CacheLines) + 1);
}

TEST(CliDirectives, MarkdownIsDocsIrMdsTable) {
  Result r = ekb("directives --markdown");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, ekb::ir::directive_table_markdown());
  EXPECT_EQ(ekb("directives --json --markdown").code, 2);
}

}  // namespace
