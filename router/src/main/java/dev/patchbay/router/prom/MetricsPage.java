package dev.patchbay.router.prom;

import java.util.List;
import java.util.Map;

/**
 * A parsed metrics page: the kept samples grouped by sample name, and the TYPE and HELP lines.
 */
public record MetricsPage(
        Map<String, List<Sample>> samplesByName, Map<String, String> types, Map<String, String> helps) {
    public MetricsPage {
        samplesByName = Map.copyOf(samplesByName);
        types = Map.copyOf(types);
        helps = Map.copyOf(helps);
    }

    public List<Sample> samples(String name) {
        return samplesByName.getOrDefault(name, List.of());
    }

    /** True when the page declares the family (TYPE or HELP line) or has samples of that name. */
    public boolean hasFamily(String name) {
        return samplesByName.containsKey(name) || types.containsKey(name) || helps.containsKey(name);
    }
}
