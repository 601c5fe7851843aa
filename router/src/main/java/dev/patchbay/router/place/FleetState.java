package dev.patchbay.router.place;

import dev.patchbay.router.pick.Endpoint;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

/**
 * What a placement is planned from, and acted on: the servers in a stable order, and where each adapter's files are
 * for loading it where it is not served yet (null: unknown, so placement never loads it there).
 */
public record FleetState(List<ServerView> servers, Function<String, String> pathOf) {
    public FleetState {
        servers = List.copyOf(servers);
    }

    public List<Endpoint> endpoints() {
        return servers.stream().map(ServerView::endpoint).toList();
    }

    public int slots() {
        int total = 0;
        for (ServerView s : servers) total += s.slots();
        return total;
    }

    /** Where the adapter's files are, or null. */
    public String path(String adapter) {
        return pathOf.apply(adapter);
    }

    /** The adapter may have a home on {@code server}: served there already, or loadable. */
    public boolean canHost(ServerView server, String adapter) {
        return server.slots() > 0 && (server.serves(adapter) || path(adapter) != null);
    }

    /** The server at {@code endpoint}, or null. */
    public ServerView server(Endpoint endpoint) {
        for (ServerView s : servers) {
            if (s.endpoint().equals(endpoint)) return s;
        }
        return null;
    }

    /** The servers holding the adapter, in a slot or in host memory. */
    public Set<Endpoint> holders(String adapter) {
        Set<Endpoint> holders = new HashSet<>();
        for (ServerView s : servers) {
            if (s.holds(adapter)) holders.add(s.endpoint());
        }
        return holders;
    }
}
