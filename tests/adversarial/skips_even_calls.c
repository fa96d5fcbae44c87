// workload: nn.relu6/mbv2_035_96_48x48x48
// expect: nondeterministic
// Past the correctness trials, does no work on every second call (even-numbered ones). The timing
// loop alternates which kernel goes first in a round and compares the first one's outputs from a
// copy, the second one's in place; this kernel and its twin (skips_odd_calls.c) skip
// opposite rounds, so between them both ways of comparing must catch it.
static int calls;
void ekb_main(const float* x, float* y, int64_t N, int64_t H, int64_t W, int64_t C) {
  if (++calls > 5 && calls % 2 == 0) return;
  for (int64_t i = 0; i < N * H * W * C; ++i) y[i] = x[i] < 0 ? 0 : (x[i] > 6 ? 6 : x[i]);
}
