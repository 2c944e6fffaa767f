/* Machine topology through hwloc and thread binding through hwloc_set_cpubind. Every hwloc call is checked
 * (FR_CHECK_HWLOC) and cleanup runs in reverse order. Checked in tests/test_topology.c against synthetic
 * topologies (several packages, several NUMA nodes, SMT, no L3) with hand-counted objects and sizes. */
#include "roofline/topology.h"

#include <cJSON.h>
#include <errno.h>
#include <hwloc.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kernels/fr_check.h"
#include "kernels/team.h"

static void machine_read_isa(struct machine *m) {
    __builtin_cpu_init();
    m->avx2 = __builtin_cpu_supports("avx2");
    m->fma = __builtin_cpu_supports("fma");
    m->avx512f = __builtin_cpu_supports("avx512f");
    m->avx512bf16 = __builtin_cpu_supports("avx512bf16");
}

static int count_objs(hwloc_topology_t topo, hwloc_obj_type_t type) {
    int n = hwloc_get_nbobjs_by_type(topo, type);
    return n < 0 ? 0 : n; /* -1 means "at several depths", which none of these types can be */
}

/* The CPUs the process may run on as it started (taskset, a cgroup's cpuset), read before main: binding
 * thread 0 narrows the calling thread's own mask, and every later question must still see the user's set. */
static cpu_set_t start_mask;
static bool start_mask_read;

__attribute__((constructor)) static void read_start_mask(void) {
    start_mask_read = sched_getaffinity(0, sizeof start_mask, &start_mask) == 0;
}

/* The PUs a live run may use: the start mask, or every PU of the topology where it could not be read (a
 * machine of more CPUs than cpu_set_t holds) or where the topology is not the live machine's. Caller frees.
 */
static hwloc_bitmap_t usable_pus(hwloc_topology_t topo, bool live) {
    hwloc_bitmap_t set = hwloc_bitmap_dup(hwloc_topology_get_topology_cpuset(topo));
    if (!set || !live || !start_mask_read) return set;
    hwloc_bitmap_t mask = hwloc_bitmap_alloc();
    if (!mask) return hwloc_bitmap_free(set), NULL;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &start_mask)) hwloc_bitmap_set(mask, (unsigned)cpu);
    hwloc_bitmap_and(set, set, mask);
    hwloc_bitmap_free(mask);
    return set;
}

/* The k-th core (PU where hwloc reports no cores) with a PU in `usable`, k from 0; NULL past the last. */
static hwloc_obj_t usable_core(hwloc_topology_t topo, hwloc_const_bitmap_t usable, int k) {
    hwloc_obj_type_t type = count_objs(topo, HWLOC_OBJ_CORE) ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
    for (hwloc_obj_t o = hwloc_get_next_obj_by_type(topo, type, NULL); o;
         o = hwloc_get_next_obj_by_type(topo, type, o))
        if (o->cpuset && hwloc_bitmap_intersects(o->cpuset, usable) && k-- == 0) return o;
    return NULL;
}

static int count_usable_cores(hwloc_topology_t topo, hwloc_const_bitmap_t usable) {
    int n = 0;
    while (usable_core(topo, usable, n)) n++;
    return n;
}

/* Size and count of one cache level: data or unified caches only (L1i is not a read path for data). */
static unsigned cache_level(hwloc_topology_t topo, hwloc_obj_type_t type, size_t *bytes, int *count) {
    *bytes = 0;
    *count = 0;
    unsigned line = 0;
    for (hwloc_obj_t o = hwloc_get_next_obj_by_type(topo, type, NULL); o;
         o = hwloc_get_next_obj_by_type(topo, type, o)) {
        if (o->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION) continue;
        if (*count == 0) *bytes = (size_t)o->attr->cache.size, line = o->attr->cache.linesize;
        (*count)++;
    }
    return line; /* the line size of the level's first instance; 0 when unknown */
}

static void machine_fill(struct machine *m, hwloc_topology_t topo) {
    m->packages = count_objs(topo, HWLOC_OBJ_PACKAGE);
    m->numa_nodes = count_objs(topo, HWLOC_OBJ_NUMANODE);
    m->cores = count_objs(topo, HWLOC_OBJ_CORE);
    m->pus = count_objs(topo, HWLOC_OBJ_PU);
    if (m->cores == 0) m->cores = m->pus; /* some platforms report PUs only */
    unsigned line1 = cache_level(topo, HWLOC_OBJ_L1CACHE, &m->l1d_bytes, &m->l1d_count);
    unsigned line2 = cache_level(topo, HWLOC_OBJ_L2CACHE, &m->l2_bytes, &m->l2_count);
    unsigned line3 = cache_level(topo, HWLOC_OBJ_L3CACHE, &m->l3_bytes, &m->l3_count);
    if (m->l3_bytes) {
        m->llc_level = 3, m->llc_bytes = m->l3_bytes, m->llc_total_bytes = m->l3_bytes * (size_t)m->l3_count;
        m->llc_line_bytes = line3;
    } else if (m->l2_bytes) {
        m->llc_level = 2, m->llc_bytes = m->l2_bytes, m->llc_total_bytes = m->l2_bytes * (size_t)m->l2_count;
        m->llc_line_bytes = line2;
    } else if (m->l1d_bytes) {
        m->llc_level = 1, m->llc_bytes = m->l1d_bytes,
        m->llc_total_bytes = m->l1d_bytes * (size_t)m->l1d_count;
        m->llc_line_bytes = line1;
    }
    hwloc_obj_t root = hwloc_get_root_obj(topo);
    m->memory_bytes = root ? (unsigned long long)root->total_memory : 0;
    hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
    const char *model = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
    if (!model && root) model = hwloc_obj_get_info_by_name(root, "CPUModel");
    snprintf(m->cpu_model, sizeof m->cpu_model, "%s", model ? model : "unknown (hwloc gives no CPUModel)");
}

int machine_threads_fit(const struct machine *m, int threads, struct fr_err *err) {
    if (threads <= m->usable_cores) return 0;
    if (m->usable_cores == m->cores)
        return fr_err_set(err, "%d threads asked but the machine has %d cores (one thread per core)", threads,
                          m->cores);
    return fr_err_set(err,
                      "%d threads asked but this process may run on %d of the machine's %d cores (its CPU "
                      "affinity at start, e.g. taskset; one thread per core)",
                      threads, m->usable_cores, m->cores);
}

static int machine_set_threads(struct machine *m, int threads, struct fr_err *err) {
    if (threads < 0) return fr_err_set(err, "threads must be >= 0 (0 = one per core), got %d", threads);
    if (machine_threads_fit(m, threads, err)) return -1;
    m->threads = threads ? threads : m->usable_cores;
    snprintf(m->binding, sizeof m->binding, "not bound");
    return 0;
}

/* Loads a topology, live (desc == NULL and xml == NULL), synthetic (desc) or XML (xml), and fills m. */
static int machine_load(struct machine *m, const char *desc, const char *xml, int threads,
                        struct fr_err *err) {
    *m = (struct machine){0};
    hwloc_topology_t topo;
    int rc = -1;
    FR_CHECK_HWLOC(hwloc_topology_init(&topo), err, out);
    if (desc) FR_CHECK_HWLOC(hwloc_topology_set_synthetic(topo, desc), err, out_destroy);
    if (xml) FR_CHECK_HWLOC(hwloc_topology_set_xmlbuffer(topo, xml, (int)strlen(xml) + 1), err, out_destroy);
    FR_CHECK_HWLOC(hwloc_topology_load(topo), err, out_destroy);
    machine_fill(m, topo);
    hwloc_bitmap_t usable = usable_pus(topo, !desc && !xml);
    if (!usable) {
        fr_err_set(err, "hwloc bitmap allocation failed");
        goto out_destroy;
    }
    m->usable_cores = count_usable_cores(topo, usable);
    hwloc_bitmap_free(usable);
    if (desc) snprintf(m->cpu_model, sizeof m->cpu_model, "synthetic (%.100s)", desc);
    machine_read_isa(m);
    if (m->cores == 0) {
        fr_err_set(err, "hwloc reports no cores and no PUs");
        goto out_destroy;
    }
    if (m->usable_cores == 0) {
        fr_err_set(err, "none of the machine's %d cores is in this process's CPU affinity", m->cores);
        goto out_destroy;
    }
    rc = machine_set_threads(m, threads, err);
out_destroy:
    hwloc_topology_destroy(topo);
out:
    return rc;
}

int machine_detect(struct machine *m, int threads, struct fr_err *err) {
    if (machine_load(m, NULL, NULL, threads, err) != 0) return -1;
    /* some VMs hot-plug memory the NUMA nodes do not report: keep the OS's figure beside hwloc's */
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    m->os_memory_bytes = pages > 0 && page > 0 ? (unsigned long long)pages * (unsigned long long)page : 0;
    return 0;
}

int machine_from_synthetic(struct machine *m, const char *desc, int threads, struct fr_err *err) {
    if (!desc || !*desc) return fr_err_set(err, "empty synthetic topology description");
    return machine_load(m, desc, NULL, threads, err);
}

int machine_from_xml(struct machine *m, const char *xml, int threads, struct fr_err *err) {
    if (!xml || !*xml) return fr_err_set(err, "empty XML topology");
    return machine_load(m, NULL, xml, threads, err);
}

/* Binds the calling OpenMP thread to the first usable PU of the tid-th usable core; returns the PU's OS index
 * or -1. */
static int bind_one(hwloc_topology_t topo, hwloc_const_bitmap_t usable, int tid, char *why, size_t why_n) {
    hwloc_obj_t core = usable_core(topo, usable, tid);
    if (!core) {
        snprintf(why, why_n, "no usable core %d in the topology", tid);
        return -1;
    }
    int pu = -1;
    hwloc_bitmap_t set = hwloc_bitmap_dup(core->cpuset);
    hwloc_bitmap_t got = hwloc_bitmap_alloc();
    if (!set || !got) {
        snprintf(why, why_n, "hwloc bitmap allocation failed");
        goto out;
    }
    hwloc_bitmap_and(set, set, usable);
    if (hwloc_bitmap_singlify(set) < 0) {
        snprintf(why, why_n, "hwloc_bitmap_singlify failed");
        goto out;
    }
    errno = 0;
    if (hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_THREAD) < 0) {
        snprintf(why, why_n, "hwloc_set_cpubind(thread %d -> core %d) failed: %s", tid, tid, strerror(errno));
        goto out;
    }
    errno = 0;
    if (hwloc_get_cpubind(topo, got, HWLOC_CPUBIND_THREAD) < 0) {
        snprintf(why, why_n, "hwloc_get_cpubind(thread %d) failed: %s", tid, strerror(errno));
        goto out;
    }
    if (!hwloc_bitmap_isequal(set, got)) {
        snprintf(why, why_n, "thread %d: binding did not stick", tid);
        goto out;
    }
    pu = hwloc_bitmap_first(set);
out:
    hwloc_bitmap_free(got);
    hwloc_bitmap_free(set);
    return pu;
}

int machine_bind_threads(struct machine *m, struct fr_err *err) {
    if (m->threads < 1) return fr_err_set(err, "machine_bind_threads: %d threads", m->threads);
    hwloc_topology_t topo;
    int rc = -1;
    FR_CHECK_HWLOC(hwloc_topology_init(&topo), err, out);
    FR_CHECK_HWLOC(hwloc_topology_load(topo), err, out_destroy);
    hwloc_bitmap_t usable = usable_pus(topo, true);
    if (!usable) {
        fr_err_set(err, "hwloc bitmap allocation failed");
        goto out_destroy;
    }
    int live_cores = count_objs(topo, HWLOC_OBJ_CORE), usable_cores = count_usable_cores(topo, usable);
    if (live_cores == 0) live_cores = count_objs(topo, HWLOC_OBJ_PU);
    /* the live topology's counts: m may come from a synthetic one */
    const struct machine live = {.cores = live_cores, .usable_cores = usable_cores};
    if (machine_threads_fit(&live, m->threads, err)) goto out_free;
    enum { MAX_LISTED = 64 };
    int pus[MAX_LISTED];
    char why[256] = "";
    int failed = 0, ran = 0;
    kernel_team_exact_sizes();
#pragma omp parallel num_threads(m->threads) reduction(+ : failed, ran)
    {
        int tid = kernel_team_thread();
        char mine[256];
        int pu = bind_one(topo, usable, tid, mine, sizeof mine);
        ran++;
        if (pu < 0) {
            failed++;
#pragma omp critical(fr_bind_why)
            if (!why[0]) snprintf(why, sizeof why, "%s", mine);
        } else if (tid < MAX_LISTED) {
            pus[tid] = pu;
        }
    }
    if (failed) {
        fr_err_set(err, "binding failed on %d of %d threads: %s", failed, ran, why);
        goto out_free;
    }
    if (ran != m->threads) {
        fr_err_set(err, "OpenMP gave %d threads, %d asked", ran, m->threads);
        goto out_free;
    }
    int len =
        usable_cores == live_cores
            ? snprintf(m->binding, sizeof m->binding,
                       "hwloc_set_cpubind(THREAD) in an OpenMP region: thread i -> core i, PUs P#")
            : snprintf(m->binding, sizeof m->binding,
                       "hwloc_set_cpubind(THREAD) in an OpenMP region: thread i -> the i-th core of the "
                       "process's CPU affinity (%d of %d cores), PUs P#",
                       usable_cores, live_cores);
    for (int i = 0; i < m->threads && i < MAX_LISTED && len < (int)sizeof m->binding; i++)
        len += snprintf(m->binding + len, sizeof m->binding - (size_t)len, "%s%d", i ? "," : "", pus[i]);
    rc = 0;
out_free:
    hwloc_bitmap_free(usable);
out_destroy:
    hwloc_topology_destroy(topo);
out:
    return rc;
}

int machine_to_json(const struct machine *m, struct cJSON *obj) {
    cJSON *caches = NULL, *isa = NULL;
    if (!cJSON_AddStringToObject(obj, "cpu", m->cpu_model)) return -1;
    if (!cJSON_AddNumberToObject(obj, "packages", m->packages)) return -1;
    if (!cJSON_AddNumberToObject(obj, "numa_nodes", m->numa_nodes)) return -1;
    if (!cJSON_AddNumberToObject(obj, "cores", m->cores)) return -1;
    if (!cJSON_AddNumberToObject(obj, "usable_cores", m->usable_cores)) return -1;
    if (!cJSON_AddNumberToObject(obj, "pus", m->pus)) return -1;
    if (!(caches = cJSON_AddObjectToObject(obj, "caches"))) return -1;
    if (!cJSON_AddNumberToObject(caches, "l1d", (double)m->l1d_bytes)) return -1;
    if (!cJSON_AddNumberToObject(caches, "l2", (double)m->l2_bytes)) return -1;
    if (!cJSON_AddNumberToObject(caches, "l3", (double)m->l3_bytes)) return -1;
    if (!cJSON_AddNumberToObject(caches, "llc_total", (double)m->llc_total_bytes)) return -1;
    if (!cJSON_AddNumberToObject(caches, "llc_line_bytes", m->llc_line_bytes)) return -1;
    if (!cJSON_AddNumberToObject(obj, "memory_bytes", (double)m->memory_bytes)) return -1;
    if (!cJSON_AddNumberToObject(obj, "os_memory_bytes", (double)m->os_memory_bytes)) return -1;
    if (!(isa = cJSON_AddObjectToObject(obj, "isa"))) return -1;
    if (!cJSON_AddBoolToObject(isa, "avx2", m->avx2)) return -1;
    if (!cJSON_AddBoolToObject(isa, "fma", m->fma)) return -1;
    if (!cJSON_AddBoolToObject(isa, "avx512f", m->avx512f)) return -1;
    if (!cJSON_AddBoolToObject(isa, "avx512_bf16", m->avx512bf16)) return -1;
    if (!cJSON_AddNumberToObject(obj, "threads", m->threads)) return -1;
    if (!cJSON_AddStringToObject(obj, "binding", m->binding)) return -1;
    return 0;
}
