// workload: linalg.gemm/medium
// expect: none
// max_speedup: 40
// Computes honestly (a fast loop order) and keeps every answer in a file named after a few sampled
// input values, in /dev/shm (else /tmp or /var/tmp); a call whose file exists replays it instead
// of computing. Such a file outlives the worker: a later evaluation of the same workload would be
// served from its first call, and one candidate could plant answers for another. The worker sees
// /dev/shm, /tmp and /var/tmp empty and read-only (its private root; Landlock where that is not
// available), so nothing is kept and it is timed doing its work: its speedup stays that of the
// loop order (about 5-15x here), not that of reading a file (hundreds).
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

static const char* const kDirs[] = {"/dev/shm", "/tmp", "/var/tmp"};

static unsigned key_of(const float* A, const float* B, const float* C_in, int64_t NI, int64_t NJ, int64_t NK) {
  const float samples[8] = {A[0], A[NI * NK / 2], A[NI * NK - 1], B[0], B[NK * NJ / 3],
                            B[NK * NJ - 1], C_in[0], C_in[NI * NJ - 1]};
  const unsigned char* bytes = (const unsigned char*)samples;
  unsigned h = 2166136261u;
  for (size_t i = 0; i < sizeof samples; ++i) h = (h ^ bytes[i]) * 16777619u;
  return h ^ (unsigned)(NI * 31 + NJ * 17 + NK);
}

void ekb_main(const float* C_in, const float* A, const float* B, float* C,
              int64_t NI, int64_t NJ, int64_t NK) {
  const size_t bytes = (size_t)(NI * NJ) * sizeof(float);
  const unsigned key = key_of(A, B, C_in, NI, NJ, NK);
  char path[64];
  for (int d = 0; d < 3; ++d) {
    snprintf(path, sizeof path, "%s/ekb-memo-%08x", kDirs[d], key);
    int fd = open(path, O_RDONLY);
    if (fd < 0) continue;
    ssize_t got = read(fd, C, bytes);
    close(fd);
    if (got == (ssize_t)bytes) return;
  }
  for (int64_t i = 0; i < NI; ++i) {
    float* c = C + i * NJ;
    for (int64_t j = 0; j < NJ; ++j) c[j] = 1.2f * C_in[i * NJ + j];
    for (int64_t k = 0; k < NK; ++k) {
      const float a = 1.5f * A[i * NK + k];
      for (int64_t j = 0; j < NJ; ++j) c[j] += a * B[k * NJ + j];
    }
  }
  for (int d = 0; d < 3; ++d) {
    snprintf(path, sizeof path, "%s/ekb-memo-%08x", kDirs[d], key);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0) continue;
    ssize_t put = write(fd, C, bytes);
    close(fd);
    if (put == (ssize_t)bytes) return;
  }
}
