// workload: nn.relu6/mbv2_035_96_48x48x48
// expect: async_write
// Computes the answer, returns, and leaves a thread behind that keeps rewriting the output every
// millisecond for 50 ms (as a kernel would whose worker threads outlive the call).
#include <pthread.h>
#include <time.h>
struct job { const float* x; float* y; int64_t n; };
static struct job the_job;
static void* late_writer(void* arg) {
  struct job* j = (struct job*)arg;
  struct timespec ms = {0, 1000000};
  for (int rep = 0; rep < 50; ++rep) {
    nanosleep(&ms, 0);
    for (int64_t i = 0; i < j->n; ++i) j->y[i] = j->x[i] < 0 ? 0 : (j->x[i] > 6 ? 6 : j->x[i]);
  }
  return 0;
}
void ekb_main(const float* x, float* y, int64_t N, int64_t H, int64_t W, int64_t C) {
  int64_t n = N * H * W * C;
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] < 0 ? 0 : (x[i] > 6 ? 6 : x[i]);
  the_job.x = x;
  the_job.y = y;
  the_job.n = n;
  pthread_t t;
  pthread_create(&t, 0, late_writer, &the_job);
  pthread_detach(t);
}
