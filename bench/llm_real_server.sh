#!/usr/bin/env bash
# `ekb generate` against a real OpenAI-compatible server (not CI): llama.cpp's server from the
# `llama-cpp-python[server]` package, serving a tiny llama model with random weights that this
# script writes itself with the `gguf` package. The answers are gibberish; the point is
# compatibility with a real server: usage fields, errors, timeouts, the whole generate -> eval path,
# and `ekb experiment` with direct, leka:llm and leka:search against it (issue 20's one command).
#
# Usage: bench/llm_real_server.sh [--setup-only] [build dir (default build)]
#   $EKB_LLM_KEEP   a directory to copy the experiment into (else it goes with the temporary one)
#   $EKB_LLM_VENV   the virtual environment (default ~/.cache/ekb/llm-real-server/venv); the first
#                   run pip-installs llama-cpp-python there, which compiles llama.cpp (long on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
setup_only=0
if [ "${1:-}" = "--setup-only" ]; then setup_only=1; shift; fi
build="${1:-build}"
venv="${EKB_LLM_VENV:-${EKB_CACHE_DIR:-$HOME/.cache/ekb}/llm-real-server/venv}"

if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import llama_cpp.server, gguf, uvicorn" 2>/dev/null; then
  echo "== installing llama-cpp-python[server] and gguf into $venv (compiles llama.cpp)"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  # A CPU-only build for whatever machine runs it; both cores for the compile.
  CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF" \
    "$venv/bin/pip" install -q "llama-cpp-python[server]" gguf numpy
fi
[ "$setup_only" = 1 ] && { echo "== setup done: $venv"; exit 0; }

ekb="$build/ekb"
[ -x "$ekb" ] || { echo "no $ekb: build first (scripts/build.sh)" >&2; exit 1; }
py="$venv/bin/python"
work=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null
    for _ in $(seq 1 20); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "== writing a tiny llama model with random weights ($work/tiny-random.gguf)"
"$py" - "$work/tiny-random.gguf" <<'PY'
import sys, numpy as np, gguf
# A 2-layer llama (128 wide) over a SentencePiece-style vocabulary: control tokens, the printable
# ASCII characters, a few code words, and the 256 byte tokens llama.cpp falls back to.
rng = np.random.default_rng(0)
tokens = ["<unk>", "<s>", "</s>"]
types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
words = ["\u2581" + w for w in "void float int64_t const for if return ekb_main include the a of to is in".split()]
words += ["```", "```c", "\n", "\u2581", "{", "}", "(", ")", ";"]
chars = [chr(c) for c in range(33, 127)]
for t in dict.fromkeys(words + chars):
    tokens.append(t); types.append(gguf.TokenType.NORMAL)
for b in range(256):
    tokens.append(f"<0x{b:02X}>"); types.append(gguf.TokenType.BYTE)
n_vocab, n_embd, n_layer, n_head, n_ff, n_ctx = len(tokens), 128, 2, 4, 256, 16384
w = gguf.GGUFWriter(sys.argv[1], "llama")
w.add_name("tiny-random")
w.add_context_length(n_ctx)
w.add_embedding_length(n_embd)
w.add_block_count(n_layer)
w.add_feed_forward_length(n_ff)
w.add_head_count(n_head)
w.add_head_count_kv(n_head)
w.add_rope_dimension_count(n_embd // n_head)
w.add_layer_norm_rms_eps(1e-5)
w.add_file_type(gguf.LlamaFileType.ALL_F32)
w.add_tokenizer_model("llama")
w.add_token_list(tokens)
w.add_token_scores([-float(i) for i in range(n_vocab)])
w.add_token_types(types)
w.add_bos_token_id(1)
w.add_eos_token_id(2)
w.add_unk_token_id(0)
def t(name, *shape):  # numpy shape is GGUF's dimensions reversed
    w.add_tensor(name, (rng.standard_normal(shape) * 0.02).astype(np.float32))
t("token_embd.weight", n_vocab, n_embd)
w.add_tensor("output_norm.weight", np.ones(n_embd, np.float32))
t("output.weight", n_vocab, n_embd)
for i in range(n_layer):
    w.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(n_embd, np.float32))
    w.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(n_embd, np.float32))
    for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
        t(f"blk.{i}.{name}.weight", n_embd, n_embd)
    t(f"blk.{i}.ffn_gate.weight", n_ff, n_embd)
    t(f"blk.{i}.ffn_up.weight", n_ff, n_embd)
    t(f"blk.{i}.ffn_down.weight", n_embd, n_ff)
w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
PY
ls -l "$work/tiny-random.gguf" | awk '{printf "   %.1f MB\n", $5 / 1e6}'

port=$("$py" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
echo "== starting llama.cpp's OpenAI-compatible server on 127.0.0.1:$port"
"$py" -m llama_cpp.server --model "$work/tiny-random.gguf" --model_alias tiny-random --host 127.0.0.1 \
  --port "$port" --n_ctx 16384 --n_threads "$(nproc)" > "$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 120); do
  curl -sf "http://127.0.0.1:$port/v1/models" > /dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { echo "the server died:"; tail -20 "$work/server.log"; exit 1; }
  sleep 1
done
curl -sf "http://127.0.0.1:$port/v1/models" > /dev/null || { echo "the server did not come up"; tail -20 "$work/server.log"; exit 1; }

# `real`: what a run against a local server looks like. `impatient`: a timeout shorter than the
# server takes to read a prompt, to see timeouts, retries and failed samples against a real server.
cat > "$work/models.toml" <<TOML
[profiles.real]
api = "openai"
endpoint = "http://127.0.0.1:$port/v1"
model = "tiny-random"
temperature = 0.8
max_tokens = 48
timeout_s = 300
concurrency = 2
max_retries = 1
backoff_initial_s = 0.5

[profiles.impatient]
api = "openai"
endpoint = "http://127.0.0.1:$port/v1"
model = "tiny-random"
max_tokens = 48
timeout_s = 0.05
max_retries = 1
backoff_initial_s = 0.1
TOML

workloads=(nn.softmax/kws_1x12 nn.relu6/mbv2_035_96_48x48x48 img.threshold/vww_96x96_u8 audio.preemphasis/kws_frame_480)
echo "== ekb generate: ${#workloads[@]} workloads x 2 samples (${workloads[*]})"
start=$(date +%s.%N)
set +e
"$ekb" generate --models "$work/models.toml" --model real --samples 2 --no-cache --out "$work/out" "${workloads[@]}"
echo "   exit status $?, $(echo "$(date +%s.%N) - $start" | bc) s"
echo "== ekb generate with a 0.05 s timeout (expected: a timeout, then a retry or a failed sample)"
"$ekb" generate --models "$work/models.toml" --model impatient --no-cache --out "$work/timeouts" "${workloads[0]}"
echo "   exit status $?"
echo "== ekb eval of the generated directory (the answers are gibberish: expect no correct sample)"
"$ekb" eval --backend cpu --solutions "$work/out" --db "$work/results.db" --json "$work/results.json" \
  --min-time 0.01 "${workloads[@]}" > "$work/eval.log" 2>&1
echo "   exit status $?"
echo "== ekb experiment --methods direct,leka:llm,leka:search at evaluations=3 (the comparison's one command;"
echo "   the model's replies are gibberish: expect every leka:llm proposal unusable, the run complete)"
start=$(date +%s.%N)
"$ekb" experiment --methods direct,leka:llm,leka:search --models "$work/models.toml" --model real --cache-dir "$work/cache" \
  --budget evaluations=3 --min-time 0.01 --out "$work/experiment" "${workloads[@]}" > "$work/experiment.log" 2>&1
echo "   exit status $?, $(echo "$(date +%s.%N) - $start" | bc) s"
sed -n '/^experiment /,$p' "$work/experiment.log"
# $EKB_LLM_KEEP: a directory to keep the experiment in (trajectories, solutions, the request log).
[ -n "${EKB_LLM_KEEP:-}" ] && mkdir -p "$EKB_LLM_KEEP" && cp -r "$work/experiment" "$work/models.toml" "$EKB_LLM_KEEP/"
set -e
tail -25 "$work/eval.log"

echo "== summary"
"$py" - "$work" <<'PY'
import glob, json, os, statistics as st, sys
work = sys.argv[1]
for name in ("out", "timeouts"):
    metas = [json.load(open(p)) for p in sorted(glob.glob(f"{work}/{name}/*/*.meta.json"))]
    status = {s: sum(m["status"] == s for m in metas) for s in ("ok", "no_code", "failed")}
    lat = [m["latency_s"] for m in metas if m["status"] != "failed"]
    led = [m["ledger"] for m in metas]
    print(f"{name}: {len(metas)} samples: {status['ok']} ok (code extracted), {status['no_code']} no_code, {status['failed']} failed")
    if lat:
        print(f"  latency s: min {min(lat):.2f}, median {st.median(lat):.2f}, max {max(lat):.2f}")
    print(f"  ledger: {sum(l['llm_calls'] for l in led)} LLM calls, {sum(l['input_tokens'] for l in led)} input tokens, "
          f"{sum(l['output_tokens'] for l in led)} output tokens, wall {sum(l['wall_s'] for l in led):.1f} s")
    for e in sorted({m.get("error", "") for m in metas if m["status"] != "ok"}):
        print(f"  error: {e[:150]}")
    usage, finish, served, exchanges = set(), set(), set(), {}
    for line in open(f"{work}/{name}/llm-requests.jsonl"):
        r = json.loads(line)
        resp = r.get("response", {})
        what = "timed out" if resp.get("timed_out") else resp.get("transport_error") or f"HTTP {resp.get('status')}"
        exchanges[what] = exchanges.get(what, 0) + 1
        body = r.get("response", {}).get("body")
        if isinstance(body, dict):
            usage |= set(body.get("usage", {}).keys())
            served.add(body.get("model", ""))
            finish |= {c.get("finish_reason") for c in body.get("choices", [])}
    print(f"  exchanges: {exchanges}")
    print(f"  usage fields seen: {sorted(usage)}; finish reasons: {sorted(f for f in finish if f)}; model reported: {sorted(served)}")
steps = {}
for path in glob.glob(f"{work}/experiment/leka-llm/*/*.trajectory.jsonl"):
    for line in open(path):
        rec = json.loads(line)
        if rec.get("record") == "step":
            steps[rec["outcome"]] = steps.get(rec["outcome"], 0) + 1
metas = [json.load(open(p)) for p in glob.glob(f"{work}/experiment/leka-llm/*/*.meta.json")]
led = [m.get("ledger", {}) for m in metas]
print(f"leka:llm: {len(glob.glob(f'{work}/experiment/leka-llm/*/*.trajectory.jsonl'))} trajectories, steps by outcome {steps}; "
      f"ledger: {sum(l.get('llm_calls', 0) for l in led)} LLM calls, {sum(l.get('input_tokens', 0) for l in led)} input tokens, "
      f"{sum(l.get('evaluations', 0) for l in led)} evaluations")
res = json.load(open(f"{work}/results.json"))
s = res["summary"]
errors = {}
for r in res["results"]:
    errors[r["error"]] = errors.get(r["error"], 0) + 1
print(f"eval: n {s['n']}, compiled {s['compiled']}, correct {s['correct']}, correct_at_1 {s['correct_at_1']}, "
      f"fast_at {s['fast_at']}; errors {errors}")
PY
