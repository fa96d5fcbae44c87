// workload: nn.relu6/mbv2_035_96_48x48x48
// expect: memory
// call_timeout: 20
// (filling the worker's 768 MiB takes over 2 s, the corpus's usual limit, on a loaded machine)
// Leaks 64 MiB per iteration, touching every page, until allocation fails.
#include <stdlib.h>
char* volatile last_block;  /* observable: the optimizer may not drop the allocations */
void ekb_main(const float* x, float* y, int64_t N, int64_t H, int64_t W, int64_t C) {
  for (;;) {
    char* p = (char*)malloc(64 << 20);
    memset(p, 1, 64 << 20);
    last_block = p;
  }
}
