/* Hand-optimized for stride 1: channels innermost (NHWC), so each tap is a contiguous vector of C
 * multiply-adds; zero padding handled by skipping taps outside the image; rows in parallel. */
void ekb_main(const float* x, const float* w, const float* b, float* y,
              int64_t N, int64_t H, int64_t W, int64_t C, int64_t S,
              int64_t PT, int64_t PB, int64_t PL, int64_t PR) {
  const int64_t OH = (H + PT + PB - 3) / S + 1, OW = (W + PL + PR - 3) / S + 1;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        float* out = y + ((n * OH + oh) * OW + ow) * C;
        for (int64_t c = 0; c < C; ++c) out[c] = b[c];
        for (int64_t kh = 0; kh < 3; ++kh) {
          int64_t ih = oh * S + kh - PT;
          if (ih < 0 || ih >= H) continue;
          for (int64_t kw = 0; kw < 3; ++kw) {
            int64_t iw = ow * S + kw - PL;
            if (iw < 0 || iw >= W) continue;
            const float* in = x + ((n * H + ih) * W + iw) * C;
            const float* wt = w + (kh * 3 + kw) * C;
            for (int64_t c = 0; c < C; ++c) out[c] += in[c] * wt[c];
          }
        }
      }
}
