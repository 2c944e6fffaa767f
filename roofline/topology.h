/* Machine topology from hwloc: packages, NUMA nodes, cores, PUs, cache sizes, memory, the ISA features the
 * kernels dispatch on, and how the OpenMP threads are bound. Tests build it from synthetic topologies. */
#ifndef FR_TOPOLOGY_H
#define FR_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/fr_err.h"

struct cJSON;

struct machine {
    char cpu_model[128]; /* the package's CPUModel info, or "unknown (hwloc gives none)" */
    int packages, numa_nodes, cores, pus;
    int usable_cores; /* cores with a PU in the process's CPU affinity at start (taskset, a cgroup's cpuset);
                         all cores for a synthetic or XML topology */
    size_t l1d_bytes; /* one instance of each data/unified cache level; 0 when the level is absent */
    size_t l2_bytes;
    size_t l3_bytes;
    int l1d_count, l2_count, l3_count; /* instances of each level */
    size_t llc_bytes;                  /* one instance of the last level present (L3, else L2, else L1d) */
    size_t llc_total_bytes;  /* all instances of that level together: STREAM's "4x the LLC" is of this */
    int llc_level;           /* 1, 2 or 3; 0 when hwloc reports no cache */
    unsigned llc_line_bytes; /* cache-line size of that level (hwloc); 0 when hwloc gives none */
    unsigned long long memory_bytes;     /* total memory of all NUMA nodes (hwloc) */
    unsigned long long os_memory_bytes;  /* physical memory the OS reports (sysconf); 0 for synthetic */
    bool avx2, fma, avx512f, avx512bf16; /* of the CPU running this process (cpuid) */
    int threads;                         /* threads the measurements use: one per usable core */
    char binding[256];                   /* how the threads are bound, or "not bound" */
};

/* Fills m from the live topology. threads = 0 means one per usable core; more threads than usable cores is an
 * error. */
int machine_detect(struct machine *m, int threads, struct fr_err *err);

/* 0 when `threads` (>= 1) fit one per usable core of m; else -1 and the one-line reason in err. */
int machine_threads_fit(const struct machine *m, int threads, struct fr_err *err);

/* Fills m from an hwloc synthetic description, e.g. "pack:2 numa:1 l3:1(size=32MiB) core:4 pu:2"
 * (hwloc_topology_set_synthetic); the ISA flags still come from the running CPU. threads = 0: all cores. */
int machine_from_synthetic(struct machine *m, const char *desc, int threads, struct fr_err *err);

/* Fills m from an hwloc XML topology in memory (hwloc_topology_set_xmlbuffer), e.g. one captured with lstopo;
 * the ISA flags still come from the running CPU. threads = 0: all cores. */
int machine_from_xml(struct machine *m, const char *xml, int threads, struct fr_err *err);

/* Binds OpenMP thread i to the i-th usable core (its first PU the process may run on) for m->threads threads,
 * with hwloc_set_cpubind
 * (HWLOC_CPUBIND_THREAD) inside an OpenMP parallel region, with OpenMP's team sizes made exact; libgomp keeps
 * its pool, so later parallel regions of that size (every kernel and region is passed m->threads) run on the
 * same bound threads. The calling thread
 * is thread 0 and stays bound to the first usable core. Usable means in the CPU affinity the process started
 * with: a run started under `taskset -c 2,3` keeps to PUs 2 and 3 (hwloc_set_cpubind could widen it).
 * Writes the description to m->binding. */
int machine_bind_threads(struct machine *m, struct fr_err *err);

/* Adds the machine's fields to obj: cpu, packages, numa_nodes, cores, pus, caches {l1d, l2, l3} in bytes,
 * memory_bytes, isa {avx2, fma, avx512f, avx512_bf16}, threads, binding. Returns 0, -1 on allocation failure.
 */
int machine_to_json(const struct machine *m, struct cJSON *obj);

#endif
