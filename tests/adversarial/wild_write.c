// workload: nn.relu6/mbv2_035_96_48x48x48
// expect: crash
// Writes far outside anything mapped.
void ekb_main(const float* x, float* y, int64_t N, int64_t H, int64_t W, int64_t C) {
  ((volatile float*)y)[(int64_t)1 << 40] = 1.0f;
}
