package dev.patchbay.router.pick.profile;

import dev.patchbay.router.pick.Filter;
import dev.patchbay.router.pick.Picker;
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

    /** What it is, for error messages: filter, scorer, picker or pick counter. */
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

    /**
     * Marks a profile whose picks the router adds to each endpoint's last scrape until the next one
     * ({@link dev.patchbay.router.pick.EndpointPicker#countsOwnPicks()}). It is a plugin rather than a field of the
     * profile so that a scheduling profile keeps the gateway's shape (a name and plugin references); in the gateway's
     * terms it is a PreRequest plugin, run after the pick and before the request is sent.
     */
    record OwnPicksCounter(String type) implements Plugin {
        @Override
        public String kind() {
            return "pick counter";
        }
    }

    /**
     * Marks a profile whose adapter requests wait in the router, up to {@code maxWaitNanos}, while no endpoint has a
     * slot for their adapter ({@link dev.patchbay.router.pick.SlotWaitQueue}); in the gateway's terms, flow control.
     */
    record SlotWait(String type, long maxWaitNanos) implements Plugin {
        @Override
        public String kind() {
            return "slot wait";
        }
    }
}
