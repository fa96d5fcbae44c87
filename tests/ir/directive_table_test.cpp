// The directive table (ir/directives.h): its rows are consistent, docs/IR.md says what it says, and
// every directive names a lowering pass that exists.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "ir/directives.h"

namespace ekb::ir {
namespace {

std::string read_doc(const std::string& relative) {
  std::ifstream in(std::string(EKB_SOURCE_DIR) + "/" + relative);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The text between `begin`'s line and the line of `end` in docs/IR.md.
std::string between_markers(const std::string& doc, const std::string& begin, const std::string& end) {
  size_t a = doc.find(begin), b = doc.find(end);
  if (a == std::string::npos || b == std::string::npos || b < a) return "(markers not found)";
  a = doc.find('\n', a) + 1;
  return doc.substr(a, b - a);
}

TEST(DirectiveTable, DocsIrMdHasTheGeneratedTable) {
  std::string doc = read_doc("docs/IR.md");
  EXPECT_EQ(between_markers(doc, "<!-- directive-table:", "<!-- end directive-table -->"), directive_table_markdown())
      << "regenerate it: ekb directives --markdown";
}

// The example block of docs/IR.md shows each directive at least once, and nothing else.
TEST(DirectiveTable, DocsIrMdExampleShowsEveryDirective) {
  std::string doc = read_doc("docs/IR.md");
  size_t section = doc.find("## Schedule and memory layers");
  ASSERT_NE(section, std::string::npos);
  size_t open = doc.find("```\n", section), close = doc.find("```\n", open + 4);
  ASSERT_NE(close, std::string::npos);
  std::string block = doc.substr(open + 4, close - open - 4);
  std::set<std::string> shown, table;
  static const std::regex kCall(R"(^\s+([a-z_]+)\()");
  std::istringstream lines(block);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, kCall)) shown.insert(m[1]);
  }
  for (const DirectiveInfo& d : directive_table()) table.insert(std::string(d.verb));
  EXPECT_EQ(shown, table);
}

TEST(DirectiveTable, EveryDirectiveNamesALoweringPassThatExists) {
  for (const DirectiveInfo& d : directive_table()) {
    const auto header = std::filesystem::path(EKB_SOURCE_DIR) / "src" / "lower" / (std::string(d.pass) + ".h");
    EXPECT_TRUE(std::filesystem::exists(header)) << d.verb << ": " << header;
  }
}

TEST(DirectiveTable, RowsAreConsistent) {
  std::set<std::string_view> verbs;
  for (const DirectiveInfo& d : directive_table()) {
    SCOPED_TRACE(std::string(d.verb));
    EXPECT_TRUE(verbs.insert(d.verb).second) << "listed twice";
    EXPECT_FALSE(d.doc.empty());
    EXPECT_FALSE(d.params.empty());
    EXPECT_FALSE(d.targets.empty());
    // A directive that is refused somewhere says why and what to do instead.
    EXPECT_EQ(d.targets == kAllTargets, d.off_target.empty());
    EXPECT_EQ(d.targets == kAllTargets, d.off_target_hint.empty());
    bool consumes = false;
    for (size_t i = 0; i < d.params.size(); ++i) {
      const DirectiveParam& p = d.params[i];
      EXPECT_TRUE(!p.repeated || i + 1 == d.params.size()) << p.name << ": only the last parameter repeats";
      const bool of_a_stage = p.kind == DirectiveArgKind::Loop || p.kind == DirectiveArgKind::NewLoop ||
                              p.kind == DirectiveArgKind::PartialStage;
      ASSERT_EQ(of_a_stage, p.of >= 0) << p.name;
      if (of_a_stage) {
        ASSERT_LT(static_cast<size_t>(p.of), i) << p.name << ": its stage comes first";
        EXPECT_EQ(d.params[static_cast<size_t>(p.of)].kind, DirectiveArgKind::Stage) << p.name;
      }
      for (int n : p.becomes) {
        ASSERT_LT(static_cast<size_t>(n), d.params.size()) << p.name;
        EXPECT_TRUE(creates_name(d.params[static_cast<size_t>(n)].kind)) << p.name << " becomes a new loop";
        EXPECT_EQ(d.params[static_cast<size_t>(n)].of, p.of) << p.name << " is replaced in its own stage";
      }
      consumes |= !p.becomes.empty();
    }
    // A consumed loop named later is explained by the table's phrase, with the new loops in it.
    EXPECT_EQ(consumes, d.replaced_as.find("{}") != std::string_view::npos);
    for (const DirectiveParam& k : d.keywords) EXPECT_FALSE(k.default_value.empty()) << k.name;
  }
}

TEST(DirectiveTable, SignaturesSpellTheArguments) {
  EXPECT_EQ(directive_signature(*find_directive("split")), "split(stage, loop, factor, outer, inner[, tail=guard])");
  EXPECT_EQ(directive_signature(*find_directive("reorder")), "reorder(stage, loop, ...)");
  EXPECT_EQ(directive_signature(*find_directive("prefetch")), "prefetch(stage, loop, tensor, distance[, lines=N])");
  EXPECT_EQ(find_directive("reorder")->min_arguments(), 3u);
  EXPECT_EQ(find_directive("split")->min_arguments(), 5u);
  EXPECT_EQ(find_directive("splt"), nullptr);
  EXPECT_EQ(directive_verbs(LayerKind::Memory),
            (std::vector<std::string>{"cache_read", "cache_write", "layout", "double_buffer", "align", "nontemporal",
                                      "prefetch"}));
}

}  // namespace
}  // namespace ekb::ir
