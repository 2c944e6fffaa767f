/* Read-only file mapping for the checkpoint loaders; checked through tests/test_safetensors.c and
 * tests/test_gguf.c (missing files, directories, FIFOs, truncated files). */
#include "model/file_map.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int file_map_open(const char *path, size_t min_len, struct file_map *m, struct fr_err *err) {
    m->data = NULL;
    m->len = 0;
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; the check below refuses it */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return fr_err_set(err, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return fr_err_set(err, "%s: not a regular file", path);
    }
    size_t len = (size_t)st.st_size;
    if (len < min_len || len == 0) {
        close(fd);
        return fr_err_set(err, "%s: truncated: %zu bytes, shorter than the %zu-byte header", path, len,
                          min_len);
    }
    void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return fr_err_set(err, "%s: cannot map %zu bytes: %s", path, len, strerror(errno));
    madvise(map, len, MADV_SEQUENTIAL);
    m->data = map;
    m->len = len;
    return 0;
}

void file_map_close(struct file_map *m) {
    if (m->data) munmap((void *)m->data, m->len);
    m->data = NULL;
    m->len = 0;
}
