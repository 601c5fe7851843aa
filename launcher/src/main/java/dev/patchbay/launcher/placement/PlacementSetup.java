package dev.patchbay.launcher.placement;

import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.patchbay.router.RouteCommand;
import dev.patchbay.router.pick.profile.PluginTypes;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/** One way of running Patchbay's router in front of the fleet, as the placement benchmark compares them. */
enum PlacementSetup {
    OFF("placement-off", "route --placement off, profile patchbay"),
    ON("placement-on", "route --placement on, profile patchbay"),
    ON_SCORER("placement-scorer", "route --placement on, profile patchbay + placement-scorer (weight 3)");

    /** The weight the placement-scorer gets beside patchbay's own: as much as lora-residency-scorer. */
    static final double SCORER_WEIGHT = 3;

    static final String SCORER_PROFILE = "patchbay-placement";

    private final String id;
    private final String description;

    PlacementSetup(String id, String description) {
        this.id = id;
        this.description = description;
    }

    String id() {
        return id;
    }

    String description() {
        return description;
    }

    boolean placementOn() {
        return this != OFF;
    }

    static PlacementSetup byId(String id) {
        for (PlacementSetup setup : values()) {
            if (setup.id.equals(id)) {
                return setup;
            }
        }
        throw new IllegalArgumentException("unknown setup '" + id + "'; known: "
                + String.join(
                        ", ", Arrays.stream(values()).map(PlacementSetup::id).toList()));
    }

    /** Route's extra flags. */
    List<String> routeArgs() {
        return List.of("--placement", placementOn() ? "on" : "off");
    }

    /** The profile route runs. */
    String profile() {
        return this == ON_SCORER ? SCORER_PROFILE : "patchbay";
    }

    /** Writes the profile file this setup needs under {@code dir}, or returns null when it runs a built-in one. */
    Path writeProfileFile(Path dir) throws IOException {
        if (this != ON_SCORER) {
            return null;
        }
        Files.createDirectories(dir);
        Path file = dir.resolve("profiles.json");
        JSON.writerWithDefaultPrettyPrinter().writeValue(file.toFile(), patchbayWithPlacementScorer());
        return file;
    }

    private static final ObjectMapper JSON =
            JsonMapper.builder().enable(JsonReadFeature.ALLOW_JAVA_COMMENTS).build();

    /**
     * The built-in {@code patchbay} profile as shipped, under a name of its own (a profile file may not reuse a
     * built-in name), with {@code placement-scorer} added before the picker: copied from the router's resource rather
     * than written out here, so it stays patchbay plus one scorer when patchbay's weights change.
     */
    static ObjectNode patchbayWithPlacementScorer() throws IOException {
        ObjectNode config;
        try (InputStream in =
                RouteCommand.class.getResourceAsStream("/dev/patchbay/router/pick/profiles/patchbay.json")) {
            if (in == null) {
                throw new IOException("the router's built-in patchbay profile is not on the class path");
            }
            config = (ObjectNode) JSON.readTree(in);
        }
        ArrayNode plugins = (ArrayNode) config.get("plugins");
        plugins.insertObject(pickerIndex(plugins, "type")).put("type", PluginTypes.PLACEMENT_SCORER);
        ObjectNode profile = (ObjectNode) config.get("schedulingProfiles").get(0);
        profile.put("name", SCORER_PROFILE);
        ArrayNode refs = (ArrayNode) profile.get("plugins");
        refs.insertObject(pickerIndex(refs, "pluginRef"))
                .put("pluginRef", PluginTypes.PLACEMENT_SCORER)
                .put("weight", SCORER_WEIGHT);
        return config;
    }

    /** Where the picker is in a plugin list: scorers go before it. */
    private static int pickerIndex(ArrayNode plugins, String key) {
        for (int i = 0; i < plugins.size(); i++) {
            if (plugins.get(i).path(key).asText().endsWith("-picker")) {
                return i;
            }
        }
        return plugins.size();
    }
}
