/* Row groups rewritten in place (row_groups.h). */
#include "kernels/row_groups.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One group's bytes in their present order while it is rewritten: packing happens at load time, one matrix
 * at a time, so one buffer and a lock do. */
static unsigned char group_scratch[ROW_GROUPS_MAX_BYTES];
static pthread_mutex_t group_lock = PTHREAD_MUTEX_INITIALIZER;

void row_groups_convert(void *m, const struct row_groups *g, int pack) {
    const size_t group_bytes = (size_t)g->rows * (size_t)g->nb * g->block_bytes;
    if (g->groups <= 0 || group_bytes == 0) return;
    if (group_bytes > sizeof group_scratch) { /* every caller checks its columns first */
        fprintf(stderr, "forge-roofline: internal error: a row group of %zu bytes rewritten (at most %zu)\n",
                group_bytes, sizeof group_scratch);
        abort();
    }
    pthread_mutex_lock(&group_lock);
    for (int n = 0; n < g->groups; n++) {
        unsigned char *at = (unsigned char *)m + (size_t)n * group_bytes;
        memcpy(group_scratch, at, group_bytes);
        for (int j = 0; j < g->rows; j++)
            for (int k = 0; k < g->nb; k++) {
                const size_t in_file = ((size_t)j * (size_t)g->nb + (size_t)k) * g->block_bytes;
                if (pack)
                    g->put(at, group_scratch + in_file, k, j, g->ctx);
                else
                    g->get(at + in_file, group_scratch, k, j, g->ctx);
            }
    }
    pthread_mutex_unlock(&group_lock);
}
