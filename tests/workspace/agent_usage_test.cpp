// Token usage and cost from the transcripts of Claude Code, Codex and Aider.
#include "workspace/agent_usage.h"

#include <gtest/gtest.h>

namespace ekb::workspace {
namespace {

TEST(AgentUsage, ClaudeCodeJsonResult) {
  auto u = parse_agent_usage(
      R"({"type":"result","subtype":"success","duration_ms":12500,"num_turns":4,"total_cost_usd":0.031,)"
      R"("usage":{"input_tokens":10,"cache_creation_input_tokens":200,"cache_read_input_tokens":3000,"output_tokens":77}})");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->agent, "claude-code");
  EXPECT_EQ(u->ledger.llm_calls, 4);
  EXPECT_EQ(u->ledger.input_tokens, 3210);  // fresh, cache-creating and cached prompt tokens
  EXPECT_EQ(u->ledger.output_tokens, 77);
  EXPECT_DOUBLE_EQ(u->ledger.cost_usd, 0.031);
  EXPECT_DOUBLE_EQ(u->ledger.wall_s, 12.5);
}

TEST(AgentUsage, ClaudeCodeStreamJsonTakesTheFinalResult) {
  auto u = parse_agent_usage(
      "{\"type\":\"system\",\"subtype\":\"init\",\"model\":\"claude-x\"}\n"
      "{\"type\":\"assistant\",\"message\":{\"content\":[]}}\n"
      "{\"type\":\"result\",\"num_turns\":2,\"total_cost_usd\":0.5,\"usage\":{\"input_tokens\":5,\"output_tokens\":6}}\n");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->agent, "claude-code");
  EXPECT_EQ(u->ledger.llm_calls, 2);
  EXPECT_EQ(u->ledger.output_tokens, 6);
}

TEST(AgentUsage, CodexExecJsonSumsTurns) {
  auto u = parse_agent_usage(
      "{\"type\":\"thread.started\",\"thread_id\":\"0199\"}\n"
      "{\"type\":\"turn.started\"}\n"
      "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_0\",\"type\":\"agent_message\",\"text\":\"done\"}}\n"
      "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":24763,\"cached_input_tokens\":24448,\"output_tokens\":122}}\n"
      "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1000,\"cached_input_tokens\":0,\"output_tokens\":10}}\n");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->agent, "codex");
  EXPECT_EQ(u->ledger.llm_calls, 2);
  EXPECT_EQ(u->ledger.input_tokens, 25763);  // cached tokens are part of input_tokens already
  EXPECT_EQ(u->ledger.output_tokens, 132);
  EXPECT_DOUBLE_EQ(u->ledger.cost_usd, 0);  // Codex reports no cost
}

TEST(AgentUsage, OlderCodexStreamsUseTheLastCumulativeTotal) {
  auto u = parse_agent_usage(
      "{\"id\":\"0\",\"msg\":{\"type\":\"token_count\",\"info\":{\"total_token_usage\":{\"input_tokens\":100,\"output_tokens\":5}}}}\n"
      "{\"id\":\"1\",\"msg\":{\"type\":\"token_count\",\"info\":{\"total_token_usage\":{\"input_tokens\":250,\"output_tokens\":9}}}}\n");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->agent, "codex");
  EXPECT_EQ(u->ledger.llm_calls, 2);
  EXPECT_EQ(u->ledger.input_tokens, 250);
  EXPECT_EQ(u->ledger.output_tokens, 9);
}

TEST(AgentUsage, AiderConsoleLines) {
  auto u = parse_agent_usage(
      "Aider v0.86.1\nModel: gpt-4o with diff edit format\n"
      "Tokens: 2.1k sent, 1.3k received. Cost: $0.02 message, $0.02 session.\n"
      "Applied edit to solution.c\n"
      "Tokens: 12,345 sent, 1.9k cache write, 250 received. Cost: $0.04 message, $0.06 session.\n");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->agent, "aider");
  EXPECT_EQ(u->ledger.llm_calls, 2);
  EXPECT_EQ(u->ledger.input_tokens, 2100 + 12345);
  EXPECT_EQ(u->ledger.output_tokens, 1300 + 250);
  EXPECT_DOUBLE_EQ(u->ledger.cost_usd, 0.06);  // the session's running total
}

TEST(AgentUsage, UnknownTextHasNoUsage) {
  EXPECT_FALSE(parse_agent_usage(""));
  EXPECT_FALSE(parse_agent_usage("wrote solution.c\n{\"not\": \"an agent event\"}\n"));
  EXPECT_FALSE(parse_agent_usage("{\"type\":\"result\"}"));  // no usage fields
}

}  // namespace
}  // namespace ekb::workspace
