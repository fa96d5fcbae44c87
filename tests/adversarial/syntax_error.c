// workload: nn.relu6/mbv2_035_96_48x48x48
// expect: compile
void ekb_main(const float* x, float* y, int64_t N, int64_t H, int64_t W, int64_t C) {
  y[0] = x[0]
}
