/* Times a row-wise kernel of the (x, w, y, S, D) signature (transformer.rmsnorm's) outside ekb:
 * dlopen, 20 warm-up calls, then 300 calls with a busy gap of GAP_US between them (the harness's
 * work between calls); prints the 25th, 50th and 75th percentile in ms. Started several times in a
 * row it shows how much a parallel kernel's speed moves between processes and over time on the
 * machine itself (docs/EVALUATION.md, "Cost and fidelity, measured").
 *   gcc -O2 -o omp_driver bench/probes/omp_driver.c -ldl
 *   clang -O3 -march=native -fopenmp -fPIC -shared -include include/ekb/ekb_abi.h \
 *     -o rms.so examples/demo-cpu/transformer.rmsnorm/tinyllama_128x2048.c
 *   for i in $(seq 10); do ./omp_driver ./rms.so 128 2048; done
 * With BLOCKS > 1 one process repeats the 300 calls BLOCKS times, BLOCK_GAP_MS apart (idle), a line
 * each: whether the speed moves within a process over time, or only between processes.
 * Usage: omp_driver KERNEL.so S D [GAP_US [BLOCKS [BLOCK_GAP_MS]]] */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef void (*kernel_fn)(const float*, const float*, float*, int64_t, int64_t);

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s KERNEL.so S D [GAP_US]\n", argv[0]);
    return 2;
  }
  const int64_t S = atoll(argv[2]), D = atoll(argv[3]);
  const int gap_us = argc > 4 ? atoi(argv[4]) : 300;
  const int blocks = argc > 5 ? atoi(argv[5]) : 1;
  const int block_gap_ms = argc > 6 ? atoi(argv[6]) : 0;
  void* lib = dlopen(argv[1], RTLD_NOW);
  kernel_fn f = lib ? (kernel_fn)dlsym(lib, "ekb_main") : NULL;
  if (!f) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  float* x = aligned_alloc(64, (size_t)(S * D) * 4);
  float* w = aligned_alloc(64, (size_t)D * 4);
  float* y = aligned_alloc(64, (size_t)(S * D) * 4);
  for (int64_t i = 0; i < S * D; ++i) x[i] = (float)(i % 97) * 0.01f;
  for (int64_t i = 0; i < D; ++i) w[i] = 1.0f;
  enum { kCalls = 300 };
  double ms[kCalls];
  for (int i = 0; i < 20; ++i) f(x, w, y, S, D);
  for (int b = 0; b < blocks; ++b) {
    if (b > 0 && block_gap_ms > 0) {
      const struct timespec pause = {block_gap_ms / 1000, (long)(block_gap_ms % 1000) * 1000000L};
      nanosleep(&pause, NULL);
    }
    for (int i = 0; i < kCalls; ++i) {
      const double gap = now_ms();
      while (now_ms() - gap < gap_us * 1e-3) {
      }
      const double t0 = now_ms();
      f(x, w, y, S, D);
      ms[i] = now_ms() - t0;
    }
    qsort(ms, kCalls, sizeof ms[0], by_value);
    printf("%.4f %.4f %.4f\n", ms[kCalls / 4], ms[kCalls / 2], ms[3 * kCalls / 4]);
    fflush(stdout);
  }
  return 0;
}
