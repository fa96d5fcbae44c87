// workload: nn.relu6/mbv2_035_96_48x48x48
// expect: mismatch
// All zeros: right for every negative input, wrong elsewhere.
void ekb_main(const float* x, float* y, int64_t N, int64_t H, int64_t W, int64_t C) {
  memset(y, 0, (size_t)(N * H * W * C) * sizeof(float));
}
