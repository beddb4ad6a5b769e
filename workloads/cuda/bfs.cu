/* bfs N: the twin of ../omp_bfs.c (Rodinia's two BFS kernels), one GPU
 * thread per node and level. */
#include "common.cuh"
#include "../bfs.h"

__global__ void bfs_expand(const struct graph_node *nodes, const int *edges, char *mask,
                           char *updating, const char *visited, int *cost, long n)
{
    long i = item_index();
    if (i < n)
        expand_node(i, nodes, edges, mask, updating, visited, cost);
}

__global__ void bfs_update(char *mask, char *updating, char *visited, int *over, long n)
{
    long i = item_index();
    if (i < n)
        update_node(i, mask, updating, visited, over);
}

int main(int argc, char **argv)
{
    long n = arg_long(argc, argv, 1, 4096);
    struct graph_node *nodes = host_zeros<struct graph_node>(n);
    int *edges = host_zeros<int>(MAX_DEGREE * n), *cost = host_zeros<int>(n);
    char *start = host_zeros<char>(n);
    make_graph(nodes, edges, cost, n);
    start[0] = 1;
    cost[0] = 0;
    struct graph_node *dnodes = to_device(nodes, n);
    int *dedges = to_device(edges, MAX_DEGREE * n), *dcost = to_device(cost, n);
    char *dmask = to_device(start, n), *dvisited = to_device(start, n);
    char *dupdating = device_zeros<char>(n);
    int *dover = device_zeros<int>(1);
    int over, levels = 0;
    do {
        over = 0;
        CHECK(cudaMemcpy(dover, &over, sizeof over, cudaMemcpyHostToDevice));
        LAUNCH_ITEMS(bfs_expand, n)(dnodes, dedges, dmask, dupdating, dvisited, dcost, n);
        LAUNCH_ITEMS(bfs_update, n)(dmask, dupdating, dvisited, dover, n);
        finish();
        to_host(&over, dover, 1);
        levels++;
    } while (over);
    to_host(cost, dcost, n);
    print_costs(cost, n, levels);
    return 0;
}
