package dev.patchbay.router.pool;

import dev.patchbay.router.pick.Endpoint;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/** Where the pool's endpoint list comes from; asked again on every scrape round. */
public interface EndpointSource {
    List<Endpoint> current() throws IOException;

    static EndpointSource of(List<Endpoint> endpoints) {
        List<Endpoint> fixed = List.copyOf(endpoints);
        return () -> fixed;
    }

    /**
     * Parses endpoints separated by commas, blanks or line breaks; {@code #} starts a comment.
     * Duplicates are dropped.
     */
    static List<Endpoint> parseList(String text) {
        List<Endpoint> endpoints = new ArrayList<>();
        for (String line : text.split("\n")) {
            int hash = line.indexOf('#');
            String content = hash >= 0 ? line.substring(0, hash) : line;
            for (String item : content.split("[,\\s]+")) {
                if (!item.isBlank()) {
                    Endpoint endpoint = Endpoint.parse(item);
                    if (!endpoints.contains(endpoint)) {
                        endpoints.add(endpoint);
                    }
                }
            }
        }
        return endpoints;
    }
}
