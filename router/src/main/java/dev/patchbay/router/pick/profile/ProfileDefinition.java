package dev.patchbay.router.pick.profile;

import dev.patchbay.router.pick.EndpointPicker;
import dev.patchbay.router.pick.Filter;
import dev.patchbay.router.pick.ProfileSettings;
import dev.patchbay.router.pick.Scorer;
import dev.patchbay.router.pick.WeightedScorer;
import dev.patchbay.router.pick.profile.Plugin.FilterPlugin;
import dev.patchbay.router.pick.profile.Plugin.PickerPlugin;
import dev.patchbay.router.pick.profile.Plugin.ScorerPlugin;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.random.RandomGenerator;

/**
 * One scheduling profile of a profile file, resolved: its filters and weighted scorers in the file's order, its
 * picker, whether the router counts its picks, and how long an adapter request may wait in the router for a slot
 * (0: it never waits). {@link #create} makes a new {@link EndpointPicker} each time,
 * with fresh plugin state.
 */
public record ProfileDefinition(String name, List<FilterPlugin> filters, List<Weighted> scorers, PickerPlugin picker,
                                boolean countsOwnPicks, long slotWaitNanos) {
    /** A scorer of the profile and its weight (>= 0; 0 leaves it out unless an override gives it one). */
    public record Weighted(String pluginName, ScorerPlugin plugin, double weight) {
    }

    public ProfileDefinition {
        filters = List.copyOf(filters);
        scorers = List.copyOf(scorers);
    }

    /**
     * The picker this profile describes, with {@code settings} on top. A weight override names a scorer
     * ({@link Scorer#name()}, e.g. {@code queue}): it replaces that scorer's weight where the profile has it, adds
     * the scorer with its default parameters after the profile's own when it does not, and 0 removes it. A name
     * that matches two of the profile's scorers is an error, since it cannot say which one it means.
     */
    public EndpointPicker create(ProfileSettings settings, RandomGenerator random, LongSupplier nanoClock) {
        PluginContext context = new PluginContext(settings, random, nanoClock);
        List<Weighted> weighted = new ArrayList<>(scorers);
        for (Map.Entry<String, Double> override : settings.weights().entrySet()) {
            int match = -1;
            for (int i = 0; i < weighted.size(); i++) {
                if (weighted.get(i).plugin() != null && weighted.get(i).plugin().scorerName().equals(override.getKey())) {
                    if (match >= 0) {
                        throw new IllegalArgumentException("weight of " + override.getKey() + ": profile '" + name
                                + "' has two such scorers (" + weighted.get(match).pluginName() + ", "
                                + weighted.get(i).pluginName() + "); set their weights in the profile file");
                    }
                    match = i;
                }
            }
            if (match >= 0) {
                Weighted old = weighted.get(match);
                weighted.set(match, new Weighted(old.pluginName(), old.plugin(), override.getValue()));
            } else {
                weighted.add(new Weighted(override.getKey(), null, override.getValue())); // built from defaults below
            }
        }
        List<WeightedScorer> built = new ArrayList<>();
        for (Weighted w : weighted) {
            if (!Double.isFinite(w.weight()) || w.weight() < 0) {
                throw new IllegalArgumentException("weight of " + w.pluginName() + " must be >= 0, got " + w.weight());
            }
            if (w.weight() > 0) {
                Scorer scorer = w.plugin() != null ? w.plugin().build().apply(context)
                        : PluginTypes.defaultScorer(w.pluginName(), settings);
                built.add(new WeightedScorer(scorer, w.weight()));
            }
        }
        List<Filter> builtFilters = new ArrayList<>();
        for (FilterPlugin filter : filters) {
            builtFilters.add(filter.build().apply(context));
        }
        return new EndpointPicker(name, builtFilters, built, picker.build().apply(context), settings.saturation(),
                countsOwnPicks, slotWaitNanos);
    }
}
