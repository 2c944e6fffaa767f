/* datadir: where the shipped data folders (model/, scripts/) are found, wherever the command runs from.
 *
 * The places, in order: an override named by the caller (an environment variable, when set), ./<sub> (the
 * current folder), <bin>/../<sub> (the build tree: build/forge-roofline sits one below the checkout), and
 * <bin>/../share/forge-roofline/<sub> (an install: PREFIX/bin/forge-roofline beside PREFIX/share). <bin> is
 * the folder of the running executable (/proc/self/exe), so a symlink to the binary finds the real tree. */
#ifndef FR_DATADIR_H
#define FR_DATADIR_H

#include <stddef.h>

#define DATADIR_MAX_PLACES 4
#define DATADIR_PATH_LEN   1024

struct datadir_places {
    int n;
    char dir[DATADIR_MAX_PLACES][DATADIR_PATH_LEN]; /* folders to look in, first match wins */
    char label[DATADIR_MAX_PLACES][64];             /* how messages name the place, e.g. "./model" */
};

/* Fills p with the places of `sub` ("model", "scripts"). env_override names an environment variable whose
 * value, when set and not empty, is looked in first (NULL: none). exe is the executable's path (NULL: read
 * /proc/self/exe; tests pass a fake one). */
void datadir_places_of(const char *sub, const char *env_override, const char *exe, struct datadir_places *p);

/* The first place holding `entry` (a relative path, e.g. "qwen3-0.6b/config.json" or "plots.sh") as a
 * regular file: writes place/entry into out and returns its index; -1 when no place has it. */
int datadir_find_file(const struct datadir_places *p, const char *entry, char *out, size_t len);

/* The first place that is a folder: writes it into out and returns its index; -1 when none is. */
int datadir_find_dir(const struct datadir_places *p, char *out, size_t len);

/* Every place on one line, comma-separated, for an error message: "./model, /src/model, ...". */
void datadir_list_places(const struct datadir_places *p, char *buf, size_t len);

#endif
