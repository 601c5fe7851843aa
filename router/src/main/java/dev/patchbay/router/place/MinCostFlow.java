package dev.patchbay.router.place;

import java.util.Arrays;

/**
 * A min-cost assignment of replicas to servers as a flow: source to each adapter (its replica count), adapter to server
 * (one replica each, the edge's cost), server to sink (its capacity). Successive shortest paths with Bellman-Ford,
 * small enough here (tens of adapters and servers). Replicas no capacity is left for stay unassigned.
 */
final class MinCostFlow {
    private MinCostFlow() {}

    /** {@code flow[l][w]} is 1 where adapter {@code l} got server {@code w}. */
    static int[][] assign(int[] demand, int[] capacity, long[][] cost) {
        int lCount = demand.length;
        int wCount = capacity.length;
        int source = lCount + wCount;
        int sink = source + 1;
        int nodes = sink + 1;
        // Edges as arrays: to, capacity, cost, reverse index.
        int maxEdges = 2 * (lCount + lCount * wCount + wCount);
        int[] to = new int[maxEdges];
        int[] cap = new int[maxEdges];
        long[] edgeCost = new long[maxEdges];
        int[] next = new int[maxEdges];
        int[] head = new int[nodes];
        Arrays.fill(head, -1);
        int[] count = {0};
        for (int l = 0; l < lCount; l++) addEdge(source, l, demand[l], 0, to, cap, edgeCost, next, head, count);
        int[][] edgeOf = new int[lCount][wCount];
        for (int l = 0; l < lCount; l++) {
            for (int w = 0; w < wCount; w++) {
                edgeOf[l][w] = count[0];
                addEdge(l, lCount + w, 1, cost[l][w], to, cap, edgeCost, next, head, count);
            }
        }
        for (int w = 0; w < wCount; w++)
            addEdge(lCount + w, sink, capacity[w], 0, to, cap, edgeCost, next, head, count);

        long[] dist = new long[nodes];
        int[] viaEdge = new int[nodes];
        while (true) {
            Arrays.fill(dist, Long.MAX_VALUE);
            Arrays.fill(viaEdge, -1);
            dist[source] = 0;
            boolean changed = true;
            for (int round = 0; round < nodes && changed; round++) {
                changed = false;
                for (int u = 0; u < nodes; u++) {
                    if (dist[u] == Long.MAX_VALUE) continue;
                    for (int e = head[u]; e >= 0; e = next[e]) {
                        if (cap[e] > 0 && dist[u] + edgeCost[e] < dist[to[e]]) {
                            dist[to[e]] = dist[u] + edgeCost[e];
                            viaEdge[to[e]] = e;
                            changed = true;
                        }
                    }
                }
            }
            if (dist[sink] == Long.MAX_VALUE) break;
            // One unit along the path (every adapter-server edge carries one).
            for (int v = sink; v != source; v = to[viaEdge[v] ^ 1]) {
                int e = viaEdge[v];
                cap[e]--;
                cap[e ^ 1]++;
            }
        }
        int[][] flow = new int[lCount][wCount];
        for (int l = 0; l < lCount; l++) {
            for (int w = 0; w < wCount; w++) flow[l][w] = cap[edgeOf[l][w]] == 0 ? 1 : 0;
        }
        return flow;
    }

    private static void addEdge(
            int u,
            int v,
            int capacity,
            long cost,
            int[] to,
            int[] cap,
            long[] edgeCost,
            int[] next,
            int[] head,
            int[] count) {
        int e = count[0];
        to[e] = v;
        cap[e] = capacity;
        edgeCost[e] = cost;
        next[e] = head[u];
        head[u] = e;
        to[e + 1] = u;
        cap[e + 1] = 0;
        edgeCost[e + 1] = -cost;
        next[e + 1] = head[v];
        head[v] = e + 1;
        count[0] = e + 2;
    }
}
