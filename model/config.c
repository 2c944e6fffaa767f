/* placeholder */
#include "model/config.h"
int qwen3_config_load(const char *path, struct qwen3_config *cfg, struct fr_err *err) {
    (void)cfg;
    return fr_err_set(err, "%s: config loading not implemented yet", path);
}
