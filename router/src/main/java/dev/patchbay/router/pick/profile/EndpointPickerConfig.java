package dev.patchbay.router.pick.profile;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/**
 * A profile file as written, before any checking: the gateway's {@code EndpointPickerConfig} shape in JSON. Weights
 * and parameters stay JSON nodes so that {@link ProfileFile} can say what was wrong with them in its own words.
 */
record EndpointPickerConfig(
        String apiVersion, String kind, List<PluginSpec> plugins, List<SchedulingProfile> schedulingProfiles) {

    /** @param name defaults to {@code type}, as in the gateway */
    record PluginSpec(String name, String type, JsonNode parameters) {
        String nameOrType() {
            return name != null ? name : type;
        }
    }

    record SchedulingProfile(String name, List<PluginRef> plugins) {}

    /** @param weight only for scorers; 1 when not given, as in the gateway */
    record PluginRef(String pluginRef, JsonNode weight) {}
}
