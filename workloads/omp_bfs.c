/* omp_bfs N T: breadth-first search (after Rodinia's bfs) from node 0 of a
 * graph of N nodes (default 4096, as Rodinia's graph4096) generated from a
 * fixed seed: node i has an edge to i+1 (mod N), so that every node is
 * reached, and 0..7 more to random nodes. Each level runs two OpenMP loops
 * over all nodes on T threads (default 4, static schedule: thread t runs
 * nodes [t·N/T, (t+1)·N/T) in order), as Rodinia's two kernels do:
 * bfs_expand(i) visits the neighbours of i when i is on the frontier,
 * bfs_update(i) moves newly reached nodes onto the next frontier. One unit
 * = one node of one level of the first kernel:
 *
 *     OMP_WAIT_POLICY=passive tf trace -- omp_bfs
 *     tf analyze TRACE --unit call:bfs_expand --warp 8,16,32
 *
 * The nodes' work is expand_node() and update_node() of bfs.h (the CUDA
 * twin: cuda/bfs.cu).
 *
 * Expected: nothing is derived by hand here. Which lanes of a warp hold
 * frontier nodes, how many edges each has and which neighbours are already
 * visited all depend on the generated graph, so the SIMT efficiency and
 * sectors per request of bfs_expand() are data-dependent. They are
 * measured, and compared with the GPU twin (cuda/bfs.cu) where a GPU is
 * available. One bound holds: the frontier test reads mask[i], one byte per
 * lane, W contiguous bytes of a 128-byte aligned array: one sector.
 */
#include <omp.h>

#include "bfs.h"
#include "items.h"

static struct graph_node *nodes;
static int *edges;
static char *mask, *updating, *visited;
static int *cost;
static int over;

__attribute__((noipa)) void bfs_expand(long i)
{
    expand_node(i, nodes, edges, mask, updating, visited, cost);
}

__attribute__((noipa)) void bfs_update(long i)
{
    update_node(i, mask, updating, visited, &over);
}

int main(int argc, char **argv)
{
    long n = arg_long(argc, argv, 1, 4096);
    int t = (int)arg_long(argc, argv, 2, 4);
    nodes = alloc128(n * sizeof *nodes);
    edges = alloc128(MAX_DEGREE * n * sizeof *edges);
    mask = alloc128(n);
    updating = alloc128(n);
    visited = alloc128(n);
    cost = alloc128(n * sizeof *cost);
    make_graph(nodes, edges, cost, n);
    mask[0] = visited[0] = 1;
    cost[0] = 0;
    int levels = 0;
    do {
        over = 0;
#pragma omp parallel for num_threads(t) schedule(static)
        for (long i = 0; i < n; i++)
            bfs_expand(i);
#pragma omp parallel for num_threads(t) schedule(static)
        for (long i = 0; i < n; i++)
            bfs_update(i);
        levels++;
    } while (over);
    print_costs(cost, n, levels);
    return 0;
}
