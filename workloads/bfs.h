/* Breadth-first search (omp_bfs.c, cuda/bfs.cu), after Rodinia's bfs: the
 * graph, the two per-node steps of a level, and the report. See twin.h. */
#ifndef TF_WORKLOAD_BFS_H
#define TF_WORKLOAD_BFS_H

#include "twin.h"

/* A node's edges: edges[start .. start + degree). */
struct graph_node {
    int start, degree;
};

/* At most this many edges per node. */
#define MAX_DEGREE 8

/* A graph of n nodes from a fixed seed: node i has an edge to i+1 (mod n),
 * so that every node is reached from node 0, and 0..7 more to random
 * nodes. edges has room for MAX_DEGREE·n. Sets every cost to -1. */
static inline void make_graph(struct graph_node *nodes, int *edges, int *cost, long n)
{
    uint64_t seed = 3;
    int m = 0;
    for (long i = 0; i < n; i++) {
        nodes[i].start = m;
        edges[m++] = (int)((i + 1) % n);
        int extra = (int)(lcg_next(&seed) % MAX_DEGREE);
        for (int k = 0; k < extra; k++)
            edges[m++] = (int)(lcg_next(&seed) % (uint32_t)n);
        nodes[i].degree = m - nodes[i].start;
        cost[i] = -1;
    }
}

/* The first kernel's work for node i: when i is on the frontier, take it
 * off and give its unvisited neighbours the next cost. */
TWIN void expand_node(long i, const struct graph_node *nodes, const int *edges, char *mask,
                      char *updating, const char *visited, int *cost)
{
    if (mask[i]) {
        mask[i] = 0;
        for (int e = nodes[i].start; e < nodes[i].start + nodes[i].degree; e++) {
            int id = edges[e];
            if (!visited[id]) {
                cost[id] = cost[i] + 1;
                updating[id] = 1;
            }
        }
    }
}

/* The second kernel's work for node i: a node reached in this level goes
 * onto the next frontier; *over says that there is one. */
TWIN void update_node(long i, char *mask, char *updating, char *visited, int *over)
{
    if (updating[i]) {
        mask[i] = 1;
        visited[i] = 1;
        *over = 1;
        updating[i] = 0;
    }
}

/* Prints the number of levels and a checksum of the costs. */
static inline void print_costs(const int *cost, long n, int levels)
{
    long sum = 0;
    for (long i = 0; i < n; i++)
        sum += cost[i];
    printf("levels %d, cost sum %ld\n", levels, sum);
}

#endif
