/* BROKEN on purpose (expected: mismatch): truncates instead of rounding (no +8192 before >> 14),
 * so about half the pixels come out one too dark. Integer outputs must match exactly. */
void ekb_main(const uint8_t* rgb, uint8_t* gray, int64_t H, int64_t W) {
  for (int64_t i = 0; i < H * W; ++i)
    gray[i] = (uint8_t)((rgb[3 * i] * 4899 + rgb[3 * i + 1] * 9617 + rgb[3 * i + 2] * 1868) >> 14);
}
