/* Layer: kernels/ (bottom of the include graph).
 * A span of memory: what a read covers when it reads where a block of the decode step reads (the weights'
 * matrices, the KV cache's rows), one entry per contiguous run. */
#ifndef FR_MEM_SPAN_H
#define FR_MEM_SPAN_H

#include <stddef.h>

struct mem_span {
    const void *p;
    size_t bytes;
};

#endif
