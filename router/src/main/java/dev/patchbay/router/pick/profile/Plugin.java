package dev.patchbay.router.pick.profile;

import dev.patchbay.router.pick.Filter;
import dev.patchbay.router.pick.Picker;
import dev.patchbay.router.pick.PreRequest;
import dev.patchbay.router.pick.Scorer;
import java.util.function.Function;

/**
 * One entry of a profile file's {@code plugins}, its parameters read and checked. It builds a new filter, scorer or
 * picker for every picker made, because some keep state (lora-spread's drains, round-robin's turn) that two pickers
 * must not share.
 */
public sealed interface Plugin {
    /** The plugin type, e.g. {@code queue-scorer}. */
    String type();

    /** What it is, for error messages: filter, scorer, picker or pre-request hook. */
    String kind();

    record FilterPlugin(String type, Function<PluginContext, Filter> build) implements Plugin {
        @Override
        public String kind() {
            return "filter";
        }
    }

    /** @param scorerName the scorer's {@link Scorer#name()}, which the configuration's weight overrides name */
    record ScorerPlugin(String type, String scorerName, Function<PluginContext, Scorer> build) implements Plugin {
        @Override
        public String kind() {
            return "scorer";
        }
    }

    record PickerPlugin(String type, Function<PluginContext, Picker> build) implements Plugin {
        @Override
        public String kind() {
            return "picker";
        }
    }

    /** A plugin told of each request the router sends ({@link PreRequest}): {@code own-picks-counter}. */
    record PreRequestPlugin(String type, Function<PluginContext, PreRequest> build) implements Plugin {
        @Override
        public String kind() {
            return "pre-request hook";
        }
    }
}
