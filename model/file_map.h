/* A checkpoint file mapped read-only: the loaders validate and copy from the mapping, so each weight byte is
 * read from the page cache once and written once into the weights' own (huge-page) allocation. */
#ifndef FR_FILE_MAP_H
#define FR_FILE_MAP_H

#include <stddef.h>

#include "kernels/fr_err.h"

struct file_map {
    const unsigned char *data; /* [len] the whole file */
    size_t len;
};

/* Maps a regular file of at least min_len bytes (shorter: "truncated"; a FIFO or directory: "not a regular
 * file"), advised for one sequential pass. */
int file_map_open(const char *path, size_t min_len, struct file_map *m, struct fr_err *err);
void file_map_close(struct file_map *m);

#endif
