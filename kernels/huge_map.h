/* Anonymous memory advised for transparent huge pages: the one way the weights, the KV cache and the read
 * kernels' arrays are mapped, so that the blocks and the read roof stream the same kind of pages. */
#ifndef FR_HUGE_MAP_H
#define FR_HUGE_MAP_H

#include <stddef.h>

/* Maps `bytes` (at least one) of zero-filled anonymous memory and advises huge pages (advice only: with
 * THP off the pages are 4 KiB). NULL when the mapping fails. */
void *huge_map_alloc(size_t bytes);
/* Unmaps what huge_map_alloc(bytes) returned; NULL is ignored. */
void huge_map_free(void *p, size_t bytes);

#endif
