package dev.patchbay.router.place;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.patchbay.router.pick.Endpoint;
import java.util.List;

/** The router's {@code GET /admin/placement}: what the placement controller decided at its last tick. */
public final class PlacementJson {
    private static final ObjectMapper JSON = new ObjectMapper();

    private PlacementJson() {}

    /**
     * {@code {"enabled", "algorithm", "tick", "loads": {"started", "failed"}, "unloads": {...}, "adapters": [{"adapter",
     * "rate", "desired", "actual", "released"}]}}, adapters by rate; {@code {"enabled": false}} without a controller.
     */
    public static String write(PlacementController controller) {
        ObjectNode root = JSON.createObjectNode();
        root.put("enabled", controller != null);
        if (controller == null) return root.toString();
        PlacementController.Report report = controller.report();
        root.put("algorithm", controller.algorithm());
        root.put("tick", report.tick());
        root.putObject("loads").put("started", controller.loadsStarted()).put("failed", controller.loadsFailed());
        root.putObject("unloads").put("started", controller.unloadsStarted()).put("failed", controller.unloadsFailed());
        ArrayNode adapters = root.putArray("adapters");
        report.adapters().forEach((name, p) -> {
            ObjectNode a = adapters.addObject();
            a.put("adapter", name);
            a.put("rate", p.rate());
            addresses(a.putArray("desired"), p.desired());
            addresses(a.putArray("actual"), p.actual());
            addresses(a.putArray("released"), p.released());
        });
        return root.toString();
    }

    private static void addresses(ArrayNode into, List<Endpoint> endpoints) {
        for (Endpoint e : endpoints) into.add(e.address());
    }
}
