/* The round trip of one cache line between the VM's cores 0 and 1 (two pinned threads bouncing an
 * atomic), printed in ns for each quarter second. On the 2-core VM it switches between about 60 ns
 * and about 330 ns every few seconds to minutes while each core's own compute and memory throughput
 * stays the same: the hypervisor moves the virtual cores between host cores (docs/EVALUATION.md,
 * "Cost and fidelity, measured"). A parallel kernel's fork, join and shared lines pay it.
 *   gcc -O2 -pthread -o core_latency bench/probes/core_latency.c && ./core_latency 80
 * Usage: core_latency [QUARTER_SECONDS] */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static _Atomic long ball __attribute__((aligned(64)));
static atomic_int stop;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

/* Core 1 answers each odd value with the next even one. */
static void* answer(void* unused) {
  (void)unused;
  pin_to(1);
  for (long v = 1; !atomic_load(&stop); v += 2) {
    while (atomic_load_explicit(&ball, memory_order_acquire) != v && !atomic_load(&stop)) {
    }
    atomic_store_explicit(&ball, v + 1, memory_order_release);
  }
  return NULL;
}

int main(int argc, char** argv) {
  const int quarters = argc > 1 ? atoi(argv[1]) : 60;
  pthread_t other;
  pthread_create(&other, NULL, answer, NULL);
  pin_to(0);
  long v = 0;
  for (int q = 0; q < quarters; ++q) {
    const double t0 = now_s();
    long trips = 0;
    while (now_s() - t0 < 0.25) {
      for (int i = 0; i < 1000; ++i, v += 2) {
        atomic_store_explicit(&ball, v + 1, memory_order_release);
        while (atomic_load_explicit(&ball, memory_order_acquire) != v + 2) {
        }
      }
      trips += 1000;
    }
    printf("%.0f ", (now_s() - t0) / trips * 1e9);
    fflush(stdout);
  }
  atomic_store(&stop, 1);
  printf("\n");
  pthread_join(other, NULL);
  return 0;
}
