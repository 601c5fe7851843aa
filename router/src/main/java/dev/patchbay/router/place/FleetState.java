package dev.patchbay.router.place;

import dev.patchbay.router.pick.Endpoint;
import java.util.List;
import java.util.function.Predicate;

/**
 * What a placement is planned from: the servers in a stable order, and which adapters can be loaded where they are
 * not served yet (the controller knows their path).
 */
public record FleetState(List<ServerView> servers, Predicate<String> loadable) {
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

    /** The adapter may have a home on {@code server}: served there already, or loadable. */
    public boolean canHost(ServerView server, String adapter) {
        return server.slots() > 0 && (server.serves(adapter) || loadable.test(adapter));
    }
}
