package dev.patchbay.router.pick.profile;

import dev.patchbay.router.pick.EndpointPicker;
import dev.patchbay.router.pick.Filter;
import dev.patchbay.router.pick.PreRequest;
import dev.patchbay.router.pick.WeightedScorer;
import dev.patchbay.router.pick.profile.Plugin.FilterPlugin;
import dev.patchbay.router.pick.profile.Plugin.PickerPlugin;
import dev.patchbay.router.pick.profile.Plugin.PreRequestPlugin;
import dev.patchbay.router.pick.profile.Plugin.ScorerPlugin;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;
import java.util.random.RandomGenerator;

/**
 * One scheduling profile of a profile file, resolved: its filters and weighted scorers in the file's order, its
 * picker and its pre-request hooks. {@link #create} makes a new {@link EndpointPicker} each time, with fresh plugin
 * state.
 */
public record ProfileDefinition(
        String name,
        List<FilterPlugin> filters,
        List<Weighted> scorers,
        PickerPlugin picker,
        List<PreRequestPlugin> preRequests) {
    /** A scorer of the profile and its weight (>= 0; 0 leaves it out). */
    public record Weighted(String pluginName, ScorerPlugin plugin, double weight) {}

    public ProfileDefinition {
        filters = List.copyOf(filters);
        scorers = List.copyOf(scorers);
        preRequests = List.copyOf(preRequests);
    }

    /**
     * The picker this profile describes. A filter that is also a {@link PreRequest} (lora-spread, whose drains move
     * as requests are sent) is told of each request too, in the profile's filter order, before the pre-request hooks.
     */
    public EndpointPicker create(RandomGenerator random, LongSupplier nanoClock) {
        return create(new PluginContext(random, nanoClock));
    }

    /** The same, its placement plugins reading {@code context}'s placement. */
    public EndpointPicker create(PluginContext context) {
        List<WeightedScorer> built = new ArrayList<>();
        for (Weighted w : scorers) {
            if (w.weight() > 0) {
                built.add(new WeightedScorer(w.plugin().build().apply(context), w.weight()));
            }
        }
        List<Filter> builtFilters = new ArrayList<>();
        List<PreRequest> hooks = new ArrayList<>();
        for (FilterPlugin filter : filters) {
            Filter f = filter.build().apply(context);
            builtFilters.add(f);
            if (f instanceof PreRequest hook) {
                hooks.add(hook);
            }
        }
        for (PreRequestPlugin hook : preRequests) {
            hooks.add(hook.build().apply(context));
        }
        return new EndpointPicker(name, builtFilters, built, picker.build().apply(context), hooks);
    }
}
