package dev.patchbay.deploy;

import java.util.List;

/** The value sets the tests render the chart with: its defaults, the three example ways, and every option at once. */
final class Cases {
    private Cases() {}

    record Case(String name, List<String> helmArgs) {
        @Override
        public String toString() {
            return name;
        }
    }

    static final Case DEFAULTS = new Case("defaults", List.of());
    static final Case SINGLE_SERVER = example("single-server");
    static final Case ROUTER_PROXY = example("router-proxy");
    static final Case GATEWAY_PICKER = example("gateway-picker");
    static final Case EVERYTHING = new Case(
            "everything",
            List.of("-f", Repo.testValues("values-everything.yaml").toString()));

    static List<Case> all() {
        return List.of(DEFAULTS, SINGLE_SERVER, ROUTER_PROXY, GATEWAY_PICKER, EVERYTHING);
    }

    /** The ways deploy/kubernetes/ holds as plain manifests. */
    static List<Case> examples() {
        return List.of(SINGLE_SERVER, ROUTER_PROXY, GATEWAY_PICKER);
    }

    private static Case example(String name) {
        return new Case(
                name,
                List.of("-f", Repo.chart().resolve("examples/" + name + ".yaml").toString()));
    }
}
